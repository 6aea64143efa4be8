"""Random legal hands of every variant, with short stacks, through the deciders only.

For every hand: chips are conserved at every step; no card is ever in two places;
replaying the events gives the live state; the verifier's account of dealing
(``fairness.dealt_in_order``) takes off the stub every card the engine dealt, and its rules
check passes from every player's history and an outsider's; every event
that holds no dict reads back from its stored form (canonical JSON) exactly as it was
decided, types and all (so the writer's cache may keep it as decided: ``holds_dicts``);
the audit of the finished hand passes; and ``legal_actions`` and ``decide`` agree: every
action offered is accepted (at its smallest, largest and all-in amounts) and actions not
offered, or amounts off the offered ones, are refused.

The number of hands per case comes from ``CARDROOM_PROPERTY_HANDS`` (default 60; the
suite's 22 cases then play about 1,300 hands).
"""

import json
import os
import random
from functools import reduce

import pytest

from domain.audit import audit_hand
from domain.cards import STANDARD_DECK, codes
from domain.commands import Act, Showdown
from domain.errors import DomainError
from domain import fairness
from domain.events import BoardDealt, CardsDealt, CardsDrawn, event_from_dict, holds_dicts
from domain.poker import engine
from domain.poker.variants import VARIANTS
from tests.poker.play import rules_problems, start, table_events

HANDS = int(os.environ.get("CARDROOM_PROPERTY_HANDS", "60"))
ACTIONS = ("check", "call", "bet", "raise", "fold", "draw", "bring_in", "complete", "add_chips")

CASES = [
    ("five-card-draw", {}), ("five-card-draw", {"rules": "casino"}),
    ("five-card-draw", {"rules": "club"}), ("five-card-draw", {"all_in": "side_pots"}),
    ("five-card-draw", {"second_round_opener": "first_round_opener", "structure": "no-limit"}),
    ("seven-card-stud", {}), ("seven-card-stud", {"rules": "house"}),
    ("seven-card-stud", {"rules": "club"}), ("seven-card-stud", {"structure": "pot-limit"}),
    ("five-card-stud", {}), ("five-card-stud", {"bring_in": 0}),
    ("five-card-stud", {"structure": "no-limit"}),
    ("texas-holdem", {}), ("texas-holdem", {"structure": "fixed-limit"}),
    ("texas-holdem", {"structure": "pot-limit"}), ("texas-holdem", {"ante": 10}),
    ("texas-holdem", {"structure": "house", "all_in": "forbidden"}),
    ("omaha", {}), ("omaha", {"structure": "no-limit"}), ("omaha-hi-lo", {}),
    ("omaha-hi-lo", {"structure": "pot-limit"}), ("omaha-hi-lo", {"muck_losers": True}),
]


@pytest.mark.parametrize("game,options", CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_random_hands_keep_every_invariant(game, options):
    rng = random.Random(f"{game}{options}")
    variant = VARIANTS[game]
    for _ in range(HANDS):
        players = rng.randint(variant.min_players, variant.max_players)
        stacks = [rng.choice([40, 75, 120, 300, 1000, 5000]) for _ in range(players)]
        play_checked(game, options, stacks, rng)


def play_checked(game, options, stacks, rng):
    seed = rng.randbytes(32).hex()
    state, events = start(stacks, game=game, button=rng.randint(1, len(stacks)), seed=seed,
                          **options)
    check_cards(state)
    while state.status != "ended":
        if state.status == "showdown_pending":
            command = Showdown()
        else:
            (seat,) = state.awaiting
            legal = engine.legal_actions(state, seat)
            check_agreement(state, seat, legal, rng)
            command = random_move(state, seat, legal, rng)
        new = engine.decide(state, command)
        state = reduce(engine.evolve, new, state)
        events += new
        check_chips(state, stacks)
        check_cards(state)
    initial = engine.initial_state({"game": game, "options": state.options})
    assert reduce(engine.evolve, events, initial) == state
    at_table = table_events(events[0], events[-1])
    for decided in (events, at_table):  # what lets the writer's cache keep them as decided
        for event, stored in zip(decided, as_stored(decided)):
            assert holds_dicts(type(event)) or repr(stored) == repr(event), (event, stored)
    checks = audit_hand(1, events, at_table, seed)
    assert all(c["ok"] for c in checks), checks
    assert not rules_problems(events)
    as_history = [{"type": e.type, "data": e.to_dict(), "version": n}
                  for n, e in enumerate(events, start=1)]
    assert fairness.dealt_in_order(events[0].deck, as_history) == sum(
        len(e.cards) for e in events if isinstance(e, (CardsDealt, BoardDealt))) + sum(
        len(e.received) for e in events if isinstance(e, CardsDrawn))


def as_stored(events):
    """The events as a reader gets them back from the store: their data as canonical JSON
    text (keys sorted), read back."""
    return [event_from_dict(e.type, json.loads(json.dumps(e.to_dict(), sort_keys=True)))
            for e in events]


def check_chips(state, stacks):
    bought = sum(s.bought for s in state.seats)
    assert sum(s.stack for s in state.seats) + state.pot == sum(stacks) + bought
    assert all(s.stack >= 0 for s in state.seats)


def check_cards(state):
    """Every card is in exactly one place: a hand still in, the board, the stub, or the
    muck (discards and folded hands)."""
    places = [c for s in state.in_hand() for c in s.cards] + list(state.board)
    places += list(state.deck) + list(state.mucked)
    assert len(places) == len(set(places)) == 52, "a card is missing or in two places"
    assert set(places) == set(codes(STANDARD_DECK))


def check_agreement(state, seat, legal, rng):
    """Every offered action is accepted; what is not offered is refused."""
    offered = {a["type"]: a for a in legal}
    for action in legal:
        for amount in amounts(action):
            engine.decide(state, as_command(state, seat, action, amount, rng))
    for kind in ACTIONS:
        if kind not in offered:
            with pytest.raises(DomainError):
                engine.decide(state, Act(seat=seat, type=kind, amount=state.current_bet + 1,
                                         cards=()))
    for kind in ("bet", "raise"):
        action = offered.get(kind)
        if action:
            for wrong in (action["min"] - 1, action["max"] + 1, action["min"] + action["step"] // 2):
                if wrong not in amounts(action) and not on_steps(action, wrong):
                    with pytest.raises(DomainError):
                        engine.decide(state, Act(seat=seat, type=kind, amount=wrong))
    if state.awaiting:
        other = next((s.seat for s in state.seats if s.seat not in state.awaiting), None)
        if other is not None:
            with pytest.raises(DomainError):
                engine.decide(state, Act(seat=other, type="fold"))


def on_steps(action, amount) -> bool:
    return (action["min"] <= amount <= action["max"]
            and (amount - action["min"]) % action["step"] == 0) or amount == action.get("all_in")


def amounts(action) -> list:
    if action["type"] in ("bet", "raise"):
        return sorted({action["min"], action["max"], *([action["all_in"]] if "all_in" in action
                                                       else [])})
    if action["type"] == "add_chips":
        return [action["min"]]
    return [None]


def as_command(state, seat, action, amount, rng) -> Act:
    if action["type"] == "draw":
        held = state.seat(seat).cards
        return Act(seat=seat, type="draw",
                   cards=tuple(rng.sample(held, rng.randint(0, min(action["max_cards"], len(held))))))
    return Act(seat=seat, type=action["type"], amount=amount)


def random_move(state, seat, legal, rng) -> Act:
    weights = [1 if a["type"] == "fold" else 4 for a in legal]
    action = rng.choices(legal, weights)[0]
    choices = amounts(action)
    if action["type"] in ("bet", "raise"):
        steps = (action["max"] - action["min"]) // action["step"]
        choices.append(action["min"] + rng.randint(0, min(steps, 10**6)) * action["step"])
    return as_command(state, seat, action, rng.choice(choices), rng)
