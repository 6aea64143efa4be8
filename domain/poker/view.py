"""A poker hand as a viewer may see it, and which of its values are hidden from whom."""

from __future__ import annotations

from domain.events import CardsDealt, CardsDrawn, Event, HandStarted, StubReshuffled
from domain.fairness import resolve
from domain.poker import engine
from domain.poker.state import HandState, SeatState
from domain.views import Viewer, sees_everything


def hidden_values(event: Event) -> dict[str, int | None]:
    """The values of ``event`` that some viewer may not see, by JSON pointer into its
    data, each with the seat it belongs to (None: nobody's, such as the deck)."""
    if isinstance(event, HandStarted):
        hidden = {"/deck": None}
        if event.reshuffle_key:
            hidden["/reshuffle_key"] = None
        if event.source.get("stubs"):  # an import's reshuffled stubs
            hidden["/source/stubs"] = None
        return hidden
    if isinstance(event, StubReshuffled):
        return {"/cards": None}
    if isinstance(event, CardsDealt) and not event.face_up:
        return {f"/cards/{i}": event.seat for i in range(len(event.cards))}
    if isinstance(event, CardsDrawn):
        return {f"/{field}/{i}": event.seat for field in ("discarded", "received", "held")
                for i in range(len(getattr(event, field)))}
    return {}


def visible_openings(event: Event, viewer: Viewer, state: HandState) -> list[str]:
    """The hidden values of ``event`` that ``viewer`` may open, given the hand as it is now:
    their own cards, and the cards of hands shown at the showdown."""
    hidden = hidden_values(event)
    if not hidden or sees_everything(viewer, state):  # most events hide nothing
        return list(hidden)
    shown = {h["seat"]: set(h["cards"]) for h in state.showdown}
    data = event.to_dict()
    return [pointer for pointer, owner in hidden.items() if owner is not None and (
        viewer.owns(owner) or owner in shown and _shows(event, pointer, data, state.seat(owner),
                                                        shown[owner]))]


def _shows(event: Event, pointer: str, data: dict, seat: SeatState, shown: set) -> bool:
    """Whether showing ``seat``'s hand opens this hidden card: where its last draw committed
    to the hand again (``held``), that commitment alone, so nobody learns which cards were
    drawn; else each card dealt or drawn that is in the hand shown."""
    if seat.held:
        return isinstance(event, CardsDrawn) and pointer.startswith("/held/") and (
            event.held == seat.held)
    return resolve(data, pointer) in shown


def view_hand(state: HandState, viewer: Viewer) -> dict:
    ended = state.status == "ended"
    everything = sees_everything(viewer, state)
    shown = {h["seat"] for h in state.showdown}
    fillers = frozenset(state.source.get("unknown", ()))  # an import's: cards nobody knows
    return {
        "hand_no": state.hand_no,
        "game": state.game,
        "status": state.status,
        "street": _street_name(state),
        "button": state.button,
        "pot": state.pot,
        "current_bet": state.current_bet,
        "to_act": state.to_act,
        "awaiting": list(state.awaiting),
        "seats": [_view_seat(s, viewer, everything or s.seat in shown, fillers)
                  for s in state.seats],
        "board": list(state.board),
        "legal_actions": engine.legal_actions(state, viewer.seat if viewer.role == "player"
                                              else None),
        "seed_commitment": state.seed_commitment,
        "client_seeds": dict(state.client_seeds),
        "reveal": state.options.get("reveal"),
        "server_seed": None,
        "result": _result(state) if ended else None,
    }


def _view_seat(seat: SeatState, viewer: Viewer, revealed: bool, fillers: frozenset) -> dict:
    visible = viewer.owns(seat.seat) or revealed
    cards = [c if (visible or up) and c not in fillers else None
             for c, up in zip(seat.cards, seat.face_up)]
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
        entry = {"pot": pot["pot"], "amount": pot["amount"], "reason": pot["reason"],
                 "winners": [{"seat": seat, "amount": pot["shares"][str(seat)],
                              **_shown(hands.get(seat))} for seat in pot["winners"]]}
        if pot.get("halves"):
            entry["halves"] = pot["halves"]
        pots.append(entry)
    return {"pots": pots, "hands": [_shown(h) | {"seat": h["seat"]} for h in state.showdown],
            "net": dict(state.result["net"])}


def _shown(hand: dict | None) -> dict:
    if hand is None:
        return {}
    shown = {"cards": list(hand["cards"]), "best": list(hand["best"]),
             "category": hand["category"], "description": hand["description"]}
    if "low" in hand:
        shown["low"] = hand["low"] and {**hand["low"], "best": list(hand["low"]["best"])}
    return shown
