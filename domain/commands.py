"""What clients (and the service) ask the domain to do. Deciders turn these into events."""

from __future__ import annotations

from dataclasses import dataclass


# --- a table ---------------------------------------------------------------

@dataclass(frozen=True)
class CreateTable:
    game: str
    options: dict
    max_seats: int | None  # None: as many as the game seats under its options
    admin_token_hash: str
    auditor_token_hash: str
    next_seed_commitment: str
    imports: bool = False  # an import table: its hands are imported, nobody sits down


@dataclass(frozen=True)
class SeatPlayer:
    player_id: str
    name: str
    buy_in: int
    token_hash: str
    client_seed: str = ""


@dataclass(frozen=True)
class SetClientSeed:
    seat: int
    client_seed: str


@dataclass(frozen=True)
class AddChips:
    seat: int
    amount: int


@dataclass(frozen=True)
class LeaveTable:
    seat: int
    player_id: str | None = None  # who must hold the seat (a retried removal frees no newcomer)


@dataclass(frozen=True)
class OpenHand:
    next_seed_commitment: str  # of the hand after the one opened
    game: str | None = None  # dealer's choice; None: the table's game


@dataclass(frozen=True)
class ImportHand:
    game: str
    dealt_in: tuple


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
    server_seed: str  # hex; never in an event, only its commitment
    client_seeds: dict  # seat (as str) -> client seed, for every seat dealt in
    deck: tuple | None = None  # an imported hand's deck, instead of the seeds'
    source: dict | None = None  # an imported hand's ``HandStarted.source``
    blinds: tuple = ()  # the table's ``HandOpened.blinds``


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
