"""What clients (and the service) ask the domain to do. Deciders turn these into events."""

from __future__ import annotations

from dataclasses import dataclass


# --- a table ---------------------------------------------------------------

@dataclass(frozen=True)
class CreateTable:
    game: str
    options: dict
    max_seats: int
    admin_token_hash: str
    auditor_token_hash: str


@dataclass(frozen=True)
class SeatPlayer:
    player_id: str
    name: str
    buy_in: int
    token_hash: str


@dataclass(frozen=True)
class AddChips:
    seat: int
    amount: int


@dataclass(frozen=True)
class LeaveTable:
    seat: int


@dataclass(frozen=True)
class OpenHand:
    pass


@dataclass(frozen=True)
class SettleHand:
    hand_no: int
    stacks: dict  # seat (as str) -> stack


# --- a hand ----------------------------------------------------------------

@dataclass(frozen=True)
class StartHand:
    hand_no: int
    button: int
    seats: tuple  # of {"seat", "name", "stack", "player_id"}
    seed: str  # hex; secret until the hand ends


@dataclass(frozen=True)
class Act:
    """A player's move: ``type`` is check, call, bet, raise, fold or draw.
    ``amount`` is the total bet for this round ("raise to"); ``cards`` the discards."""

    seat: int
    type: str
    amount: int | None = None
    cards: tuple[str, ...] = ()


@dataclass(frozen=True)
class Showdown:
    pass
