"""The state of one poker hand, rebuilt from its events by ``engine.evolve``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
    committed: int = 0  # over the whole hand, antes included
    acted: bool = False  # since the last bet or raise (or has drawn, on a draw street)

    @property
    def in_hand(self) -> bool:
        return self.status != FOLDED

    @property
    def can_act(self) -> bool:
        return self.status == ACTIVE


@dataclass(frozen=True)
class HandState:
    game: str
    options: dict = field(default_factory=dict)
    hand_no: int = 0
    button: int = 0
    seats: tuple[SeatState, ...] = ()
    status: str = "not_started"  # betting | drawing | showdown_pending | ended
    street: int = -1
    to_act: int | None = None
    current_bet: int = 0
    raises: int = 0
    opened: bool = False  # a bet has been made in this round
    last_aggressor: int | None = None
    deck: tuple[str, ...] = ()  # the undealt cards, top first
    seed_commitment: str = ""
    client_seeds: dict = field(default_factory=dict)
    showdown: tuple = ()
    pots_awarded: tuple = ()
    result: dict | None = None

    @property
    def pot(self) -> int:
        return sum(s.committed for s in self.seats) - sum(
            sum(p["shares"].values()) for p in self.pots_awarded)

    def seat(self, number: int) -> SeatState:
        for s in self.seats:
            if s.seat == number:
                return s
        raise KeyError(number)

    def with_seat(self, number: int, **changes) -> HandState:
        return replace(self, seats=tuple(replace(s, **changes) if s.seat == number else s
                                         for s in self.seats))

    def in_hand(self) -> list[SeatState]:
        return [s for s in self.seats if s.in_hand]

    def from_left_of_button(self) -> list[SeatState]:
        """Every seat dealt in, clockwise from the dealer's left (the button last)."""
        after = [s for s in self.seats if s.seat > self.button]
        return after + [s for s in self.seats if s.seat <= self.button]

    def next_seat(self, after: int, accept) -> int | None:
        """The first seat clockwise after ``after`` for which ``accept(seat)`` holds."""
        ordered = sorted(self.seats, key=lambda s: (s.seat <= after, s.seat))
        return next((s.seat for s in ordered if accept(s)), None)
