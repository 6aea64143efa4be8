"""Who sees what: the one projection every route that returns game data goes through.

A player sees their own down cards, every face-up card and every public fact;
nobody sees the deck, the seed before the hand ends, another player's down
cards or a folded hand; hands shown at showdown are public. The auditor sees
everything once the hand has ended (the seed is public then anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.events import CardsDealt, CardsDrawn, Event, HandStarted
from domain.poker import engine
from domain.poker.state import HandState, SeatState


@dataclass(frozen=True)
class Viewer:
    role: str  # player, admin or auditor
    seat: int | None = None
    player_id: str | None = None


def as_dealt(viewer: Viewer, state: HandState) -> Viewer:
    """The viewer as this hand knows them: a player who was not the one dealt into their
    seat (they sat down after the hand began) sees only what everyone sees."""
    dealt = any(s.seat == viewer.seat and s.player_id == viewer.player_id for s in state.seats)
    if viewer.role == "player" and not dealt:
        return Viewer("player", None, viewer.player_id)
    return viewer


def view_hand(state: HandState, viewer: Viewer) -> dict:
    viewer = as_dealt(viewer, state)
    ended = state.status == "ended"
    shown = {h["seat"] for h in state.showdown}
    return {
        "hand_no": state.hand_no,
        "game": state.game,
        "status": state.status,
        "street": _street_name(state),
        "button": state.button,
        "pot": state.pot,
        "current_bet": state.current_bet,
        "to_act": state.to_act,
        "seats": [_view_seat(s, viewer, ended, s.seat in shown) for s in state.seats],
        "board": [],
        "legal_actions": engine.legal_actions(state, viewer.seat if viewer.role == "player" else None),
        "deck_commitment": state.deck_commitment,
        "seed": state.seed if ended else None,
        "result": _result(state) if ended else None,
    }


def view_event(event: Event, viewer: Viewer, ended: bool) -> dict:
    """The event's data as ``viewer`` may see it, given whether the hand has ended."""
    data = event.to_dict()
    sees_all = ended and viewer.role == "auditor"
    if isinstance(event, HandStarted) and not ended:
        data["seed"] = None
    elif isinstance(event, CardsDealt) and not (event.face_up or sees_all or _owns(viewer, event.seat)):
        data["cards"] = [None] * len(event.cards)
    elif isinstance(event, CardsDrawn) and not (sees_all or _owns(viewer, event.seat)):
        data["discarded"] = [None] * len(event.discarded)
        data["received"] = [None] * len(event.received)
    return data


def _owns(viewer: Viewer, seat: int) -> bool:
    return viewer.role == "player" and viewer.seat == seat


def _view_seat(seat: SeatState, viewer: Viewer, ended: bool, shown: bool) -> dict:
    visible = _owns(viewer, seat.seat) or shown or (ended and viewer.role == "auditor")
    cards = [c if visible or up else None for c, up in zip(seat.cards, seat.face_up)]
    return {"seat": seat.seat, "name": seat.name, "stack": seat.stack, "bet": seat.bet,
            "committed": seat.committed, "status": seat.status, "cards": cards}


def _street_name(state: HandState) -> str | None:
    streets = engine.variant_of(state).streets
    if state.street < 0:
        return None
    if state.street >= len(streets):
        return "showdown"
    kind = type(streets[state.street]).__name__.lower()
    ordinal = sum(type(s) is type(streets[state.street]) for s in streets[:state.street + 1])
    return f"{kind}_{ordinal}"


def _result(state: HandState) -> dict:
    hands = {h["seat"]: h for h in state.showdown}
    pots = []
    for pot in state.pots_awarded:
        pots.append({"pot": pot["pot"], "amount": pot["amount"], "reason": pot["reason"],
                     "winners": [{"seat": seat, "amount": pot["shares"][str(seat)],
                                  **_shown(hands.get(seat))} for seat in pot["winners"]]})
    return {"pots": pots, "hands": [_shown(h) | {"seat": h["seat"]} for h in state.showdown],
            "net": dict(state.result["net"])}


def _shown(hand: dict | None) -> dict:
    if hand is None:
        return {}
    return {"cards": list(hand["cards"]), "best": list(hand["best"]),
            "category": hand["category"], "description": hand["description"]}


