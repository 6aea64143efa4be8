"""A table: who sits where with how many chips, the button, and which hand is on.

The table is a decider of its own; a hand's chips come back to it through
``HandSettled``, written in the same atomic append as the hand's last events.

Choices where the rule books are silent or differ:
* Seats are numbered 1..max_seats; a new player takes the lowest free seat.
* The first hand's button is the lowest seat dealt in (000 picks the first
  dealer by dealing to the first jack; a fixed rule keeps replays exact). After
  each hand it moves to the next seat to the left (higher number, wrapping)
  among the players dealt into the next hand.
* A player is dealt in when their stack covers the ante (and is not empty).
* Chips are added and players leave only between hands (000: "all bets must
  be covered", chips may be added between hands).
* A player's client seed may change at any time; it counts for the hands that
  start after the change (the deck of a hand in progress is already fixed).
* The commitment to a hand's server seed is published when the table is
  created (hand 1) and when the hand before it opens, so it is fixed before
  the players' client seeds for that hand are, even if they change mid-hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from domain.commands import (AddChips, CreateTable, LeaveTable, OpenHand, SeatPlayer,
                             SetClientSeed, SettleHand)
from domain.errors import DomainError
from domain.events import (ChipsAdded, ClientSeedChanged, Event, HandOpened, HandSettled,
                           PlayerLeft, PlayerSeated, TableCreated)
from domain.options import resolve_options
from domain.poker.variants import VARIANTS


@dataclass(frozen=True)
class TableSeat:
    seat: int
    player_id: str
    name: str
    stack: int
    token_hash: str
    client_seed: str = ""


@dataclass(frozen=True)
class TableState:
    game: str = ""
    options: dict = field(default_factory=dict)
    max_seats: int = 0
    seats: tuple[TableSeat, ...] = ()
    button: int | None = None
    hand_no: int = 0  # the last hand opened
    hand_in_progress: bool = False
    dealt_in: tuple[int, ...] = ()  # seats in the hand in progress
    admin_token_hash: str = ""
    auditor_token_hash: str = ""
    next_seed_commitment: str = ""

    @property
    def created(self) -> bool:
        return bool(self.game)

    def seat(self, number: int) -> TableSeat | None:
        return next((s for s in self.seats if s.seat == number), None)


def initial_state() -> TableState:
    return TableState()


def decide(state: TableState, command) -> list[Event]:
    match command:
        case CreateTable():
            return [_create(state, command)]
        case SeatPlayer():
            return [_seat_player(state, command)]
        case AddChips():
            _between_hands(state)
            _occupied(state, command.seat)
            return [ChipsAdded(seat=command.seat, amount=command.amount)]
        case LeaveTable():
            _between_hands(state)
            return [PlayerLeft(seat=command.seat, cashed_out=_occupied(state, command.seat).stack)]
        case SetClientSeed():
            _occupied(state, command.seat)
            return [ClientSeedChanged(seat=command.seat, client_seed=command.client_seed)]
        case OpenHand():
            return [_open_hand(state, command.next_seed_commitment)]
        case SettleHand():
            return [HandSettled(hand_no=command.hand_no, stacks=command.stacks)]
    raise TypeError(f"not a table command: {command!r}")


def players_for_next_hand(state: TableState) -> list[TableSeat]:
    ante = state.options.get("ante", 0)
    return [s for s in state.seats if s.stack > 0 and s.stack >= ante]


def evolve(state: TableState, event: Event) -> TableState:
    match event:
        case TableCreated():
            return replace(state, game=event.game, options=dict(event.options),
                           max_seats=event.max_seats, admin_token_hash=event.admin_token_hash,
                           auditor_token_hash=event.auditor_token_hash,
                           next_seed_commitment=event.next_seed_commitment)
        case PlayerSeated():
            seat = TableSeat(event.seat, event.player_id, event.name, event.buy_in,
                             event.token_hash, event.client_seed)
            return replace(state, seats=tuple(sorted(state.seats + (seat,), key=lambda s: s.seat)))
        case ClientSeedChanged():
            return replace(state, seats=tuple(replace(s, client_seed=event.client_seed)
                                              if s.seat == event.seat else s
                                              for s in state.seats))
        case ChipsAdded():
            return _restack(state, {event.seat: _stack(state, event.seat) + event.amount})
        case PlayerLeft():
            return replace(state, seats=tuple(s for s in state.seats if s.seat != event.seat))
        case HandOpened():
            dealt = tuple(s.seat for s in players_for_next_hand(state))
            return replace(state, hand_no=event.hand_no, button=event.button,
                           hand_in_progress=True, dealt_in=dealt,
                           next_seed_commitment=event.next_seed_commitment)
        case HandSettled():
            stacks = {int(seat): stack for seat, stack in event.stacks.items()}
            return replace(_restack(state, stacks), hand_in_progress=False, dealt_in=())
    return state


# --- helpers ---------------------------------------------------------------

def _create(state: TableState, command: CreateTable) -> TableCreated:
    if state.created:
        raise DomainError("table_exists", "this table already exists")
    variant = VARIANTS.get(command.game)
    if variant is None:
        raise DomainError("unknown_game", f"no game {command.game!r}; see GET /v1/games")
    if not variant.min_players <= command.max_seats <= variant.max_players:
        raise DomainError("invalid_max_seats", f"{variant.name} seats {variant.min_players} "
                          f"to {variant.max_players} players, not {command.max_seats}")
    return TableCreated(game=command.game, options=resolve_options(variant.options, command.options),
                        max_seats=command.max_seats, admin_token_hash=command.admin_token_hash,
                        auditor_token_hash=command.auditor_token_hash,
                        next_seed_commitment=command.next_seed_commitment)


def _seat_player(state: TableState, command: SeatPlayer) -> PlayerSeated:
    taken = {s.seat for s in state.seats}
    free = [n for n in range(1, state.max_seats + 1) if n not in taken]
    if not free:
        raise DomainError("table_full", f"all {state.max_seats} seats are taken")
    return PlayerSeated(seat=free[0], player_id=command.player_id, name=command.name,
                        buy_in=command.buy_in, token_hash=command.token_hash,
                        client_seed=command.client_seed)


def _open_hand(state: TableState, next_seed_commitment: str) -> HandOpened:
    _between_hands(state)
    players = players_for_next_hand(state)
    variant = VARIANTS[state.game]
    if len(players) < variant.min_players:
        raise DomainError("not_enough_players", f"{variant.name} needs at least "
                          f"{variant.min_players} players whose stacks cover the ante")
    numbers = [s.seat for s in players]
    after = [n for n in numbers if state.button is not None and n > state.button]
    return HandOpened(hand_no=state.hand_no + 1, button=(after or numbers)[0],
                      next_seed_commitment=next_seed_commitment)


def _between_hands(state: TableState) -> None:
    if state.hand_in_progress:
        raise DomainError("hand_in_progress", f"hand {state.hand_no} is being played; "
                          "wait until it ends")


def _occupied(state: TableState, number: int) -> TableSeat:
    seat = state.seat(number)
    if seat is None:
        raise DomainError("seat_empty", f"nobody sits in seat {number}")
    return seat


def _stack(state: TableState, number: int) -> int:
    return state.seat(number).stack


def _restack(state: TableState, stacks: dict[int, int]) -> TableState:
    return replace(state, seats=tuple(replace(s, stack=stacks.get(s.seat, s.stack))
                                      for s in state.seats))
