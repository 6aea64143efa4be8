"""Who sees what: the one projection every route that returns game data goes through.

A player sees their own down cards, every face-up card and every public fact;
nobody sees the deck, the seeds, another player's down cards or a folded hand;
hands shown at showdown are public. Once the hand has ended, the table option
``reveal`` decides who sees everything (the server seed, the deck, every card):
the auditor only (the default) or everyone.

Hidden values are stored as commitments (``domain.fairness``); what a viewer
may see of an event is the set of its commitments they may open. Each game says
which of its values are hidden and how its state looks to a viewer (``domain.games``);
this module holds what every game shares.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from domain.events import Event


@dataclass(frozen=True)
class Viewer:
    role: str  # player, admin or auditor
    seat: int | None = None
    player_id: str | None = None
    revealed: bool = False  # the reveal applies (a hand read at an earlier event of its end)

    def owns(self, seat: int) -> bool:
        return self.role == "player" and self.seat == seat


def as_dealt(viewer: Viewer, state: Any) -> Viewer:
    """The viewer as this hand knows them: a player who was not the one dealt into their
    seat (they sat down after the hand began) sees only what everyone sees."""
    if viewer.role != "player" or any(
            s.seat == viewer.seat and s.player_id == viewer.player_id for s in state.seats):
        return viewer
    return replace(viewer, seat=None)


def sees_everything(viewer: Viewer, state: Any) -> bool:
    """The reveal: after the end, the auditor (or, with ``reveal: everyone``, anyone)
    sees the seed, the deck and every card."""
    return viewer.revealed or state.status == "ended" and (
        viewer.role == "auditor" or state.options.get("reveal") == "everyone")


# The functions below ask the registry, whose games import what is above.

def view_hand(state: Any, viewer: Viewer) -> dict:
    """The hand as ``viewer`` may see it now (``server_seed`` is the service's to fill in
    when ``sees_everything``)."""
    from domain.games import game
    return game(state.game).view(state, as_dealt(viewer, state))


def hidden_values(game_id: str, event: Event) -> dict[str, int | None]:
    from domain.games import game
    return game(game_id).hidden_values(event)


def visible_openings(event: Event, viewer: Viewer, state: Any) -> list[str]:
    from domain.games import game
    return game(state.game).visible_openings(event, viewer, state)
