"""The state of one poker hand, rebuilt from its events by ``engine.evolve``."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.frozen import replace

ACTIVE, FOLDED, ALL_IN = "active", "folded", "all_in"


@dataclass(frozen=True)
class SeatState:
    seat: int
    name: str
    stack: int
    starting_stack: int = 0
    player_id: str = ""
    status: str = ACTIVE
    cards: tuple[str, ...] = ()
    face_up: tuple[bool, ...] = ()
    bet: int = 0  # in the current betting round
    committed: int = 0  # over the whole hand, antes and blinds included
    bought: int = 0  # chips added during the hand ("all bets must be covered")
    acted: bool = False  # in this round since the last bet or raise (or drew, on a draw)
    may_raise: bool = True  # a full bet or raise has reopened the betting for this seat
    held: tuple[str, ...] = ()  # the hand its last draw committed to again (CardsDrawn.held)

    @property
    def in_hand(self) -> bool:
        return self.status != FOLDED

    @property
    def can_act(self) -> bool:
        return self.status == ACTIVE

    @property
    def up_cards(self) -> tuple[str, ...]:
        return tuple(c for c, up in zip(self.cards, self.face_up) if up)


@dataclass(frozen=True)
class HandState:
    game: str
    options: dict = field(default_factory=dict)
    hand_no: int = 0
    button: int = 0
    blinds: tuple = ()  # the small and the big blind's seats, if the table placed them
    seats: tuple[SeatState, ...] = ()
    status: str = "not_started"  # dealing | betting | drawing | showdown_pending | ended
    street: int = -1  # index into the variant's streets
    betting_round: int = 0  # 1 for the first betting round, ...
    awaiting: tuple[int, ...] = ()  # the seats whose decision the hand waits for
    current_bet: int = 0  # the bet to match in this round
    raise_size: int = 0  # the increment of the last full bet or raise in this round
    full_to: int = 0  # the total of that bet or raise (or of the big blind)
    full_bet: bool = False  # a full opening bet (a big blind, a completion) stands
    raises: int = 0  # raises after the opening bet in this round
    last_aggressor: int | None = None  # the last to bet or raise in this round
    last_full_aggressor: int | None = None  # the last to make a full bet or raise in it
    first_bettor: int | None = None  # who opened the first betting round
    board: tuple[str, ...] = ()
    deck: tuple[str, ...] = ()  # the stub: undealt cards, top first
    reshuffle_key: str = ""  # what a reshuffle of the stub mixes in (HandStarted's)
    mucked: tuple[str, ...] = ()  # discards and folded hands, for a reshuffle
    reshuffles: int = 0  # the stub's reshuffles so far
    seed_commitment: str = ""
    client_seeds: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)  # an imported hand's (``HandStarted.source``)
    showdown: tuple = ()
    pots_awarded: tuple = ()
    result: dict | None = None

    @property
    def to_act(self) -> int | None:
        return self.awaiting[0] if len(self.awaiting) == 1 else None

    @property
    def pot(self) -> int:
        return sum(s.committed for s in self.seats) - sum(
            sum(p["shares"].values()) for p in self.pots_awarded)

    def seat(self, number: int) -> SeatState:
        for s in self.seats:
            if s.seat == number:
                return s
        raise KeyError(number)

    def with_seat(self, number: int, hand: dict | None = None, **changes) -> HandState:
        """The state with seat ``number`` changed (and, in the same step, the ``hand``'s own
        fields changed as ``hand`` says)."""
        seats = self.seats
        for i, s in enumerate(seats):
            if s.seat == number:
                seats = seats[:i] + (replace(s, **changes),) + seats[i + 1:]
                return replace(self, seats=seats, **(hand or {}))
        raise KeyError(number)

    def in_hand(self) -> list[SeatState]:
        return [s for s in self.seats if s.in_hand]

    def from_left_of_button(self) -> list[SeatState]:
        """Every seat dealt in, clockwise from the dealer's left (the button last)."""
        return self.clockwise_after(self.button)

    def clockwise_after(self, seat: int) -> list[SeatState]:
        """Every seat dealt in, clockwise from the one after ``seat`` (``seat`` last).
        (``seats`` are in seat order.)"""
        seats = self.seats
        split = next((i for i, s in enumerate(seats) if s.seat > seat), len(seats))
        return [*seats[split:], *seats[:split]]

    def next_seat(self, after: int, accept) -> int | None:
        """The first seat clockwise after ``after`` for which ``accept(seat)`` holds."""
        return next((s.seat for s in self.clockwise_after(after) if accept(s)), None)
