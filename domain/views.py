"""Who sees what: the one projection every route that returns game data goes through.

A player sees their own down cards, every face-up card and every public fact;
nobody sees the deck, the seeds, another player's down cards or a folded hand;
hands shown at showdown are public. Once the hand has ended, the table option
``reveal`` decides who sees everything (the server seed, the deck, every card):
the auditor only (the default) or everyone.

Hidden values are stored as commitments (``domain.fairness``); what a viewer
may see of an event is the set of its commitments they may open.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.events import CardsDealt, CardsDrawn, Event, HandStarted
from domain.fairness import resolve
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


def hidden_values(event: Event) -> dict[str, int | None]:
    """The values of ``event`` that some viewer may not see, by JSON pointer into its
    data, each with the seat it belongs to (None: nobody's, such as the deck)."""
    if isinstance(event, HandStarted):
        return {"/deck": None}
    if isinstance(event, CardsDealt) and not event.face_up:
        return {f"/cards/{i}": event.seat for i in range(len(event.cards))}
    if isinstance(event, CardsDrawn):
        return {f"/{field}/{i}": event.seat for field in ("discarded", "received")
                for i in range(len(getattr(event, field)))}
    return {}


def sees_everything(viewer: Viewer, state: HandState) -> bool:
    """The reveal: after the end, the auditor (or, with ``reveal: everyone``, anyone)
    sees the seed, the deck and every card."""
    return state.status == "ended" and (
        viewer.role == "auditor" or state.options.get("reveal") == "everyone")


def visible_openings(event: Event, viewer: Viewer, state: HandState) -> list[str]:
    """The hidden values of ``event`` that ``viewer`` may open, given the hand as it is now:
    their own cards, and the cards of hands shown at the showdown."""
    hidden = hidden_values(event)
    if sees_everything(viewer, state):
        return list(hidden)
    shown = {h["seat"]: set(h["cards"]) for h in state.showdown}
    data = event.to_dict()
    return [pointer for pointer, owner in hidden.items() if owner is not None and (
        _owns(viewer, owner) or resolve(data, pointer) in shown.get(owner, ()))]


def view_hand(state: HandState, viewer: Viewer) -> dict:
    """The hand as ``viewer`` may see it now (``server_seed`` is the service's to fill in
    when ``sees_everything``)."""
    viewer = as_dealt(viewer, state)
    ended = state.status == "ended"
    everything = sees_everything(viewer, state)
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
        "seats": [_view_seat(s, viewer, everything or s.seat in shown) for s in state.seats],
        "board": [],
        "legal_actions": engine.legal_actions(state, viewer.seat if viewer.role == "player" else None),
        "seed_commitment": state.seed_commitment,
        "client_seeds": dict(state.client_seeds),
        "reveal": state.options.get("reveal"),
        "server_seed": None,
        "result": _result(state) if ended else None,
    }


def _owns(viewer: Viewer, seat: int) -> bool:
    return viewer.role == "player" and viewer.seat == seat


def _view_seat(seat: SeatState, viewer: Viewer, revealed: bool) -> dict:
    visible = _owns(viewer, seat.seat) or revealed
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


