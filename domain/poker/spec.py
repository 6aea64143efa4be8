"""What a poker variant is: its deck, its streets, its forced bets, who opens each betting
round, its betting structure and how hands are judged.

A variant is data. The engine (``domain.poker.engine``) runs any spec; a house
variant is a new spec, plus at most a small named rule hook. Choices that tables
make differently (the structure, the limits, who opens, the upper-limit round)
are table options with the variant's defaults, so a spec names an opener either
directly (``"left_of_big_blind"``) or by the option that holds it
(``"option:first_opener"``).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.cards import STANDARD_DECK, Card
from domain.options import Option


@dataclass(frozen=True)
class Deal:
    """Each player still in gets ``down`` face-down, then ``up`` face-up cards, one at a time
    from the dealer's left."""

    down: int = 0
    up: int = 0


@dataclass(frozen=True)
class Board:
    """``cards`` community cards, dealt face up to the middle of the table."""

    cards: int


@dataclass(frozen=True)
class Draw:
    """Each player still in, from the dealer's left, discards up to the ``max_discard``
    option and is dealt as many replacements."""


@dataclass(frozen=True)
class Bet:
    """A betting round. ``opener`` names the rule that says who opens it (``openers``), or
    ``"option:<name>"`` for the table option that holds the rule. Whether it plays at the
    lower or the upper limit is the ``big_bet_round`` option's (rounds are counted from 1)."""

    opener: str = "left_of_dealer"


Street = Deal | Board | Draw | Bet


@dataclass(frozen=True)
class Variant:
    id: str
    name: str
    min_players: int
    max_players: int
    streets: tuple[Street, ...]
    options: tuple[Option, ...]
    forced: tuple[str, ...] = ("ante",)  # of "ante", "blinds", "bring_in"
    judge: str = "high"  # a name in ``judging.JUDGES``
    deck: tuple[Card, ...] = STANDARD_DECK
    rules: str = ""  # which rule books the defaults come from
    max_players_by_rules: tuple[tuple[str, int], ...] = ()  # (a ``rules`` value, its most)

    def catalog_entry(self) -> dict:
        entry = {"id": self.id, "name": self.name, "min_players": self.min_players,
                 "max_players": self.max_players, "rules": self.rules,
                 "options": [o.to_dict() for o in self.options]}
        if self.max_players_by_rules:
            entry["max_players_by_rules"] = dict(self.max_players_by_rules)
        return entry
