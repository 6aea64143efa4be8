"""A hand's payout, checked from its history as any viewer holds it, without the seed.

The events are replayed as facts (``evolve``); a card this viewer may not read stands as a
placeholder, which the bookkeeping carries and no judging reads. At the showdown each pot
is judged again among the hands this viewer can read (the hands shown, and a player's own);
a pot won without a showdown must have had one player left in it. The hand's end must leave
each seat the stack that its bets and the pots make. Judging the hands shown awards each
pot as the showdown did: a hand goes unshown only when it wins no part of any pot
(``muck_losers``), or when it was mucked at the showdown of an imported hand, conceding.
"""

from __future__ import annotations

from typing import Any

from domain.events import HandEnded, HandStarted, PotAwarded, ShowdownEvaluated, event_from_dict
from domain.fairness import unseal
from domain.poker import engine
from domain.poker.judging import judge
from domain.poker.showdown import awarded
from domain.poker.state import HandState

UNREAD = "?"  # a placeholder: "?" and the commitment of the card it stands for


def payout_problem(events: list[dict]) -> str | None:
    """What is wrong with the pots and the final stacks of a history's ``events`` (their
    hidden values opened where its viewer may read them), or None."""
    facts = [event_from_dict(e["type"], _readable(e["data"], e.get("openings") or {}))
             for e in events]
    if not facts or not isinstance(facts[0], HandStarted):
        return "the hand does not begin with HandStarted"
    state, shown = engine.initial_state({"game": facts[0].game, "options": facts[0].options}), False
    for position, fact in enumerate(facts):
        problem = None
        if isinstance(fact, ShowdownEvaluated):
            shown = True
            problem = _rejudged(state, fact, [f for f in facts[position:]
                                              if isinstance(f, PotAwarded)])
        elif isinstance(fact, PotAwarded) and fact.reason == "uncontested":
            problem = _uncontested(state, fact)
        elif isinstance(fact, PotAwarded) and not shown:
            problem = "a pot is paid at a showdown that no ShowdownEvaluated records"
        elif isinstance(fact, HandEnded):
            problem = _ended(state, fact)
        if problem:
            return f"event {events[position]['version']}: {problem}"
        state = engine.evolve(state, fact)
    return None


def _uncontested(state: HandState, award: PotAwarded) -> str | None:
    left = [s.seat for s in state.in_hand()]
    due = PotAwarded(pot=0, amount=state.pot, eligible=tuple(left), winners=tuple(left),
                     shares={str(seat): state.pot for seat in left}, reason="uncontested")
    if len(left) != 1 or award != due:
        return (f"an uncontested pot of {award.amount} to seats {list(award.winners)}, with "
                f"seats {left} in and {state.pot} in the pot")
    return None


def _ended(state: HandState, ended: HandEnded) -> str | None:
    stacks = {str(s.seat): s.stack for s in state.seats}
    net = {str(s.seat): s.stack - s.starting_stack - s.bought for s in state.seats}
    if state.pot:
        return f"the hand ends with {state.pot} in the pot unpaid"
    if dict(ended.stacks) != stacks or dict(ended.net) != net:
        return (f"the hand ends with stacks {dict(ended.stacks)}, where its bets and pots "
                f"leave {stacks}")
    return None


def _rejudged(state: HandState, shown: ShowdownEvaluated, paid: list[PotAwarded]) -> str | None:
    cards = {s.seat: s.cards for s in state.in_hand()}
    cards.update({hand["seat"]: tuple(hand["cards"]) for hand in shown.hands})
    mucked = set(state.source.get("mucked", ()))
    judge_name = engine.variant_of(state).judge
    judged = {seat: judge(judge_name, held, state.board) for seat, held in cards.items()
              if seat not in mucked and not any(card.startswith(UNREAD) for card in held)}
    try:
        due = awarded(state, judge_name, judged)
    except ValueError:
        return "a pot is paid that no hand shown could win"
    if due != paid:
        return (f"the pots paid, {[dict(p.shares) for p in paid]}, are not what the hands "
                f"shown make, {[dict(p.shares) for p in due]}")
    return None


def _readable(data: dict, openings: dict) -> Any:
    """``data`` with its openings in place and every commitment left a placeholder."""
    return _placeholders(unseal(data, openings))


def _placeholders(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"commitment"}:
            return UNREAD + str(value["commitment"])
        return {key: _placeholders(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_placeholders(item) for item in value]
    return value
