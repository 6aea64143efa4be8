"""Re-verifying a finished hand from its events alone.

Anyone holding a hand's events can check that the revealed seed matches the
commitment published at the start, that every card dealt came from the deck
that seed determines, that every event is exactly what the rules decide for
the move it records (replay legality), and that no chip was made or lost.
"""

from __future__ import annotations

from functools import reduce

from domain.cards import STANDARD_DECK, codes, commitment, shuffled
from domain.commands import Act, Showdown, StartHand
from domain.errors import DomainError
from domain.events import (BetPlaced, CardsDealt, CardsDrawn, Event, HandEnded, HandStarted,
                           PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised,
                           PotAwarded, ShowdownEvaluated)
from domain.poker import engine

_MOVES = {PlayerChecked: "check", PlayerCalled: "call", BetPlaced: "bet", PlayerRaised: "raise",
          PlayerFolded: "fold", CardsDrawn: "draw"}


def audit_hand(events: list[Event]) -> list[dict]:
    """Checks ``{"name", "ok", "detail"}`` of a hand's events (the hash chain is the store's)."""
    return [_check("deck_commitment", _deck_commitment, events),
            _check("dealt_cards", _dealt_cards, events),
            _check("replay_legality", _replay_legality, events),
            _check("chip_conservation", _chip_conservation, events)]


def _check(name, check, events) -> dict:
    try:
        problem = check(events)
    except (DomainError, KeyError, ValueError, TypeError, IndexError, StopIteration) as error:
        problem = f"{type(error).__name__}: {error}"
    return {"name": name, "ok": problem is None, "detail": problem or "ok"}


def _started_and_ended(events):
    started = events[0] if events and isinstance(events[0], HandStarted) else None
    ended = next((e for e in events if isinstance(e, HandEnded)), None)
    if started is None:
        raise ValueError("the hand has no HandStarted event")
    if ended is None:
        raise ValueError("the hand has not ended; the seed is not revealed yet")
    return started, ended


def _deck_commitment(events) -> str | None:
    started, ended = _started_and_ended(events)
    if ended.seed != started.seed or commitment(ended.seed) != started.deck_commitment:
        return "the revealed seed does not match the commitment"
    return None


def _dealt_cards(events) -> str | None:
    started, ended = _started_and_ended(events)
    deck = set(codes(shuffled(STANDARD_DECK, ended.seed)))
    dealt = [c for e in events if isinstance(e, CardsDealt) for c in e.cards]
    dealt += [c for e in events if isinstance(e, CardsDrawn) for c in e.received]
    if len(set(dealt)) != len(dealt):
        return "a card was dealt twice"
    strangers = [c for c in dealt if c not in deck]
    return f"cards not in the deck: {strangers}" if strangers else None


def _replay_legality(events) -> str | None:
    """Re-decide every move from the state before it; the outcome must be the stored events."""
    started, ended = _started_and_ended(events)
    state = engine.initial_state({"game": started.game, "options": started.options})
    position = 0
    while position < len(events):
        command = _command_for(events[position], ended.seed)
        if command is None:
            return f"event {position + 1} ({events[position].type}) records no move"
        decided = engine.decide(state, command)
        if list(events[position:position + len(decided)]) != decided:
            return f"event {position + 1} ({events[position].type}) is not what the rules decide"
        state = reduce(engine.evolve, decided, state)
        position += len(decided)
    return None


def _command_for(event: Event, seed: str):
    if isinstance(event, HandStarted):
        return StartHand(hand_no=event.hand_no, button=event.button, seats=event.seats, seed=seed)
    if isinstance(event, ShowdownEvaluated):
        return Showdown()
    move = _MOVES.get(type(event))
    if move is None:
        return None
    amount = getattr(event, "to", None) if move in ("bet", "raise") else None
    return Act(seat=event.seat, type=move, amount=amount,
               cards=event.discarded if isinstance(event, CardsDrawn) else ())


def _chip_conservation(events) -> str | None:
    started, ended = _started_and_ended(events)
    before = sum(s["stack"] for s in started.seats)
    after = sum(ended.stacks.values())
    if before != after:
        return f"stacks held {before} before the hand and {after} after"
    if sum(ended.net.values()) != 0:
        return "the net changes do not sum to zero"
    awarded = sum(e.amount for e in events if isinstance(e, PotAwarded))
    paid = sum(sum(e.shares.values()) for e in events if isinstance(e, PotAwarded))
    if awarded != paid:
        return f"pots of {awarded} paid out {paid}"
    return None
