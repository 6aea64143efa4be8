"""What a poker variant is: its deck, its streets, its betting and how hands are judged.

A variant is data. The engine (``domain.poker.engine``) runs any spec; a house
variant is a new spec, plus at most a small named rule hook.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.options import Option


@dataclass(frozen=True)
class Deal:
    """Deal ``down`` face-down and ``up`` face-up cards to each player, one at a time
    from the dealer's left."""

    down: int = 0
    up: int = 0


@dataclass(frozen=True)
class Bet:
    """A betting round at ``limit`` times the structure's lower limit (1: small, 2: big)."""

    limit: int = 1


@dataclass(frozen=True)
class Draw:
    """Each player still in, from the dealer's left, discards up to the ``max_discard``
    option and is dealt as many replacements."""


Street = Deal | Bet | Draw


@dataclass(frozen=True)
class Variant:
    id: str
    name: str
    min_players: int
    max_players: int
    streets: tuple[Street, ...]
    options: tuple[Option, ...]
    judge: str = "high"
    rules: str = ""  # which rule book the defaults come from

    def catalog_entry(self) -> dict:
        return {"id": self.id, "name": self.name, "min_players": self.min_players,
                "max_players": self.max_players, "rules": self.rules,
                "options": [o.to_dict() for o in self.options]}
