"""A table: who sits where with how many chips, the button, and which hand is on.

The table is a decider of its own; a hand's chips come back to it through
``HandSettled``, written in the same atomic append as the hand's last events.

Choices where the rule books are silent or differ:
* Seats are numbered 1..max_seats; a new player takes the lowest free seat.
* The first hand's button is the lowest seat dealt in (000 picks the first
  dealer by dealing to the first jack; a fixed rule keeps replays exact). After
  each hand it moves to the next seat to the left (higher number, wrapping)
  among the players dealt into the next hand (the books: "moved one player to
  the left").
* The dead button (option ``dead_button``, on by default where blinds are
  posted, as cardrooms play it; the books are silent): after a hand with blinds,
  the big blind moves to the next player dealt in on its left and the small
  blind to the seat the big blind had; if that seat is no longer dealt in, no
  small blind is posted (a dead small blind). So nobody posts the big blind twice
  in a row, or skips it, when a player busts or leaves. The button is the player
  on the small blind's seat's right: where cardrooms leave a dead button on an
  empty seat, the order of play is the same. Heads-up the button posts the small
  blind, and the big blind still moves one player. After a hand without blinds
  (a dealer's choice of stud, say) the button moves as above and the blinds
  follow it. Without the option (tables created before it) the blinds always
  follow the button.
* A player is dealt in when their stack covers the ante (and is not empty);
  the hand's game and the seats dealt in are decided here and recorded in
  ``HandOpened``.
* Dealer's choice (001, 004): with the table option ``dealers_choice``, each
  hand may name its game among those that fit the players dealt in. Its options
  are the ones the table was created with, where the game has them, and the
  game's defaults for the rest, as ``HandOpened`` records them.
* Chips are added and players leave only between hands (000: "all bets must
  be covered", chips may be added between hands).
* A player's client seed may change at any time; it counts for the hands that
  start after the change (the deck of a hand in progress is already fixed).
* An import table (``imports``) seats nobody and deals nothing: its hands are
  played elsewhere and imported (``HandImported``, then the hand's own events and
  ``HandSettled`` in one write), each with the players and stacks of its document.
* The commitment to a hand's server seed is published when the table is
  created (hand 1) and when the hand before it opens, so it is fixed before
  the players' client seeds for that hand are, even if they change mid-hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.commands import (AddChips, CreateTable, ImportHand, LeaveTable, OpenHand,
                             SeatPlayer, SetClientSeed, SettleHand)
from domain.errors import DomainError
from domain.events import (ChipsAdded, ClientSeedChanged, Event, HandImported, HandOpened,
                           HandSettled, PlayerLeft, PlayerSeated, TableCreated)
from domain.frozen import replace
from domain.games import game as game_of
from domain.options import MAX_AMOUNT, MAX_CHIPS, resolve_options


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
    requested: dict = field(default_factory=dict)  # the options the table was created with
    max_seats: int = 0
    seats: tuple[TableSeat, ...] = ()
    left: tuple[TableSeat, ...] = ()  # the players who have left, as they sat when they did
    button: int | None = None
    big_blind: int | None = None  # the last hand's, where the dead button placed it
    hand_no: int = 0  # the last hand opened
    hand_in_progress: bool = False
    dealt_in: tuple[int, ...] = ()  # seats in the hand in progress
    hand_games: tuple[str, ...] = ()  # the game of each hand, hand 1 first
    admin_token_hash: str = ""
    auditor_token_hash: str = ""
    next_seed_commitment: str = ""
    imports: bool = False

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
            _not_imports(state)
            _within_the_table(state, command.buy_in)
            return [_seat_player(state, command)]
        case AddChips():
            _between_hands(state)
            room = max(MAX_AMOUNT - _occupied(state, command.seat).stack, 0)
            if command.amount > room:
                raise DomainError("amount_out_of_range", f"a stack holds at most {MAX_AMOUNT} "
                                  f"chips: seat {command.seat} may add up to {room}")
            _within_the_table(state, command.amount)
            return [ChipsAdded(seat=command.seat, amount=command.amount)]
        case LeaveTable():
            _between_hands(state)
            leaving = _occupied(state, command.seat)
            if command.player_id not in (None, leaving.player_id):
                raise DomainError("seat_changed", f"seat {command.seat} is held by another "
                                  f"player than {command.player_id!r}")
            return [PlayerLeft(seat=command.seat, cashed_out=leaving.stack)]
        case SetClientSeed():
            _occupied(state, command.seat)
            return [ClientSeedChanged(seat=command.seat, client_seed=command.client_seed)]
        case OpenHand():
            _not_imports(state)
            return [_open_hand(state, command)]
        case ImportHand():
            return [_import_hand(state, command)]
        case SettleHand():
            return [HandSettled(hand_no=command.hand_no, stacks=command.stacks)]
    raise TypeError(f"not a table command: {command!r}")


def hand_options(state: TableState, game_id: str) -> dict:
    """The options of a hand of ``game_id`` at this table (dealer's choice: see above)."""
    if game_id == state.game:
        return state.options
    return resolve_options(game_of(game_id).options, _requested_for(state, game_id))


def _requested_for(state: TableState, game_id: str) -> dict:
    """The options the table was created with that ``game_id`` knows."""
    known = {o.name for o in game_of(game_id).options}
    return {k: v for k, v in state.requested.items() if k in known}


def players_for_next_hand(state: TableState, game_id: str | None = None) -> list[TableSeat]:
    ante = hand_options(state, game_id or state.game).get("ante", 0)
    return [s for s in state.seats if s.stack > 0 and s.stack >= ante]


def evolve(state: TableState, event: Event) -> TableState:
    match event:
        case TableCreated():
            return replace(state, game=event.game, options=dict(event.options),
                           requested=dict(event.requested),
                           max_seats=event.max_seats, admin_token_hash=event.admin_token_hash,
                           auditor_token_hash=event.auditor_token_hash,
                           next_seed_commitment=event.next_seed_commitment,
                           imports=event.imports)
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
            return replace(state, seats=tuple(s for s in state.seats if s.seat != event.seat),
                           left=state.left + tuple(s for s in state.seats if s.seat == event.seat))
        case HandOpened():
            return replace(state, hand_no=event.hand_no, button=event.button,
                           big_blind=event.blinds[1] if event.blinds else None,
                           hand_in_progress=True, dealt_in=tuple(event.dealt_in),
                           hand_games=state.hand_games + (event.game or state.game,),
                           next_seed_commitment=event.next_seed_commitment)
        case HandImported():
            return replace(state, hand_no=event.hand_no, hand_in_progress=True,
                           dealt_in=tuple(event.dealt_in),
                           hand_games=state.hand_games + (event.game,))
        case HandSettled():
            stacks = {int(seat): stack for seat, stack in event.stacks.items()}
            return replace(_restack(state, stacks), hand_in_progress=False, dealt_in=())
    return state


# --- helpers ---------------------------------------------------------------

def _create(state: TableState, command: CreateTable) -> TableCreated:
    if state.created:
        raise DomainError("table_exists", "this table already exists")
    game = game_of(command.game)
    options = game.resolve_options(command.options)
    most = game.max_seats(options)
    seats = most if command.max_seats is None else command.max_seats
    if not game.min_players <= seats <= most:
        under = f" under rules {options['rules']}" if most < game.max_players else ""
        raise DomainError("invalid_max_seats", f"{game.name} seats {game.min_players} "
                          f"to {most} players{under}, not {seats}")
    return TableCreated(game=command.game, options=options,
                        requested=dict(command.options),
                        max_seats=seats, admin_token_hash=command.admin_token_hash,
                        auditor_token_hash=command.auditor_token_hash,
                        next_seed_commitment=command.next_seed_commitment,
                        imports=command.imports)


def _within_the_table(state: TableState, amount: int) -> None:
    held = sum(s.stack for s in state.seats)
    if held + amount > MAX_CHIPS:
        raise DomainError("amount_out_of_range", f"a table holds at most {MAX_CHIPS} chips in "
                          f"all; {max(MAX_CHIPS - held, 0)} more may come to this one")


def _seat_player(state: TableState, command: SeatPlayer) -> PlayerSeated:
    taken = {s.seat for s in state.seats}
    free = [n for n in range(1, state.max_seats + 1) if n not in taken]
    if not free:
        raise DomainError("table_full", f"all {state.max_seats} seats are taken")
    return PlayerSeated(seat=free[0], player_id=command.player_id, name=command.name,
                        buy_in=command.buy_in, token_hash=command.token_hash,
                        client_seed=command.client_seed)


def _open_hand(state: TableState, command: OpenHand) -> HandOpened:
    _between_hands(state)
    game_id = command.game or state.game
    if game_id != state.game and not state.options.get("dealers_choice"):
        raise DomainError("dealers_choice_off", "this table plays only "
                          f"{state.game}; create it with the option dealers_choice: true")
    game = game_of(game_id)
    if game_id != state.game:  # checked as the table's own game was when it was created
        try:
            game.resolve_options(_requested_for(state, game_id))
        except DomainError as error:
            raise DomainError(error.code, f"{game.name} cannot be dealt at this table: "
                              f"{error.message}") from None
    players = players_for_next_hand(state, game_id)
    most = game.max_seats(hand_options(state, game_id))
    if not game.min_players <= len(players) <= most:
        code = "not_enough_players" if len(players) < game.min_players else "too_many_players"
        raise DomainError(code, f"{game.name} needs {game.min_players} to {most} "
                          f"players whose stacks cover the ante, not {len(players)}")
    numbers = [s.seat for s in players]
    options = hand_options(state, game_id)
    button, blinds = button_and_blinds(state, numbers, options)
    return HandOpened(hand_no=state.hand_no + 1, button=button,
                      next_seed_commitment=command.next_seed_commitment,
                      dealt_in=tuple(numbers), game=game_id, blinds=blinds,
                      options={} if game_id == state.game else options)


def button_and_blinds(state: TableState, numbers: list[int], options: dict,
                      ) -> tuple[int, tuple]:
    """The next hand's button and, under the dead button, its blinds (see above), for the
    seats ``numbers`` dealt in (the audit re-decides them, ``domain.audit``)."""
    moved = numbers[0] if state.button is None else _left_of(state.button, numbers)
    if not (options.get("dead_button")
            and (options.get("big_blind") or options.get("small_blind"))):
        return moved, ()
    if state.big_blind is None:
        return moved, _behind(moved, numbers)
    small, big = state.big_blind, _left_of(state.big_blind, numbers)
    if len(numbers) == 2:
        button = next(n for n in numbers if n != big)
        return button, (button, big)
    return _right_of(small, numbers), (small, big)


def _left_of(seat: int, numbers: list[int]) -> int:
    """The first of ``numbers`` (in seat order) clockwise after ``seat``."""
    return next((n for n in numbers if n > seat), numbers[0])


def _right_of(seat: int, numbers: list[int]) -> int:
    """The last of ``numbers`` (in seat order) clockwise before ``seat``."""
    return next((n for n in reversed(numbers) if n < seat), numbers[-1])


def _behind(button: int, numbers: list[int]) -> tuple[int, int]:
    """The blinds that follow ``button``; heads-up, the button posts the small one."""
    small = _left_of(button, numbers)
    return (button, small) if len(numbers) == 2 else (small, _left_of(small, numbers))


def _import_hand(state: TableState, command: ImportHand) -> HandImported:
    if not state.imports:
        raise DomainError("not_an_import_table", "hands are imported only at import tables "
                          "(POST /v1/imports/phh without a table_id makes one)")
    _between_hands(state)
    return HandImported(hand_no=state.hand_no + 1, game=command.game,
                        dealt_in=tuple(command.dealt_in))


def _not_imports(state: TableState) -> None:
    if state.imports:
        raise DomainError("import_table", "this is an import table: nobody sits down and "
                          "nothing is dealt here; its hands are imported")


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
