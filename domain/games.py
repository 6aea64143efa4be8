"""The game registry: every game id maps to one object that gives its options, its decider
(``initial_state``, ``decide``, ``evolve``), the view for a viewer, its legal actions and
its audit hooks. The service, the views, the audit and the table know only this.

A game is anything with the ``Game`` shape. Poker variants are registered from their
specs; games of other families register the same way. The turn is the set of seats
whose decision is awaited (``awaiting``): one seat in most games, several where
players choose at once in secret.
"""

from __future__ import annotations

from typing import Any, Protocol

from domain.errors import DomainError
from domain.events import Event
from domain.options import Option


class Game(Protocol):
    id: str
    name: str
    min_players: int
    max_players: int
    options: tuple[Option, ...]
    earlier_rules: tuple[dict, ...]  # options a hand that lacks them may have played by

    def catalog_entry(self) -> dict: ...
    def max_seats(self, options: dict) -> int: ...
    def resolve_options(self, given: dict) -> dict: ...
    def initial_state(self, options: dict) -> Any: ...
    def decide(self, state: Any, command: Any) -> list[Event]: ...
    def evolve(self, state: Any, event: Event) -> Any: ...
    def legal_actions(self, state: Any, seat: int | None) -> list[dict]: ...
    def view(self, state: Any, viewer: Any) -> dict: ...
    def hidden_values(self, event: Event) -> dict[str, int | None]: ...
    def visible_openings(self, event: Event, viewer: Any, state: Any) -> list[str]: ...
    def replay_command(self, event: Event, server_seed: str) -> Any | None: ...
    def job_owed(self, state: Any) -> bool: ...


GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    GAMES[game.id] = game
    return game


def game(game_id: str) -> Game:
    try:
        return GAMES[game_id]
    except KeyError:
        raise DomainError("unknown_game", f"no game {game_id!r}; see GET /v1/games") from None


def catalog() -> list[dict]:
    return [g.catalog_entry() for g in GAMES.values()]


def _register_all() -> None:
    from domain.poker.game import PokerGame
    from domain.poker.variants import VARIANTS

    for variant in VARIANTS.values():
        register(PokerGame(variant))


_register_all()
