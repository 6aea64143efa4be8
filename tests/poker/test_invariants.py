"""Properties of every hand played with random legal moves: chips are conserved, replay
equals live state, hidden cards never leak, and the audit of the finished hand passes."""

import random
from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.audit import audit_hand
from domain.events import CardsDealt, CardsDrawn, HandStarted
from domain.poker import engine
from domain.views import Viewer, view_event, view_hand
from tests.poker.play import play_out, start

hands = st.fixed_dictionaries({
    "stacks": st.lists(st.integers(30, 600), min_size=2, max_size=6),
    "seed": st.binary(min_size=32, max_size=32).map(bytes.hex),
    "moves": st.integers(0, 2**32),
    "all_in": st.sampled_from(["forbidden", "side_pots"]),
    "structure": st.sampled_from(["house", "fixed-limit"]),
})


def played(case):
    button = 1 + case["moves"] % len(case["stacks"])
    state, events = start(case["stacks"], button=button, seed=case["seed"],
                          all_in=case["all_in"], structure=case["structure"])
    steps = []
    final, more = play_out(state, random.Random(case["moves"]),
                           on_step=lambda s, new: steps.append(s))
    return state, events + more, [state] + steps, final


@settings(max_examples=150, deadline=None)
@given(hands)
def test_chips_are_conserved_at_every_step(case):
    _, _, states, final = played(case)
    total = sum(case["stacks"])
    for state in states:
        assert sum(s.stack for s in state.seats) + state.pot == total
        assert all(s.stack >= 0 for s in state.seats)
    assert sum(s.stack for s in final.seats) == total and final.pot == 0


@settings(max_examples=100, deadline=None)
@given(hands)
def test_replay_equals_live_state(case):
    _, events, _, final = played(case)
    initial = engine.initial_state({"game": "five-card-draw", "options": final.options})
    assert reduce(engine.evolve, events, initial) == final


@settings(max_examples=100, deadline=None)
@given(hands)
def test_players_never_see_other_players_down_cards_or_the_seed(case):
    _, events, states, final = played(case)
    shown = {h["seat"] for h in final.showdown}
    for state in states[:-1]:
        for me in state.seats:
            view = view_hand(state, Viewer("player", me.seat, me.player_id))
            assert view["seats"][me.seat - 1]["cards"] == list(me.cards)
            for seat in view["seats"]:
                if seat["seat"] != me.seat and seat["seat"] not in {h["seat"] for h in state.showdown}:
                    assert seat["cards"] == [None] * len(seat["cards"])
            assert view["seed"] is None
    for event in events:
        for seat in final.seats:
            data = view_event(event, Viewer("player", seat.seat, seat.player_id), ended=False)
            if isinstance(event, HandStarted):
                assert data["seed"] is None
            if isinstance(event, CardsDealt) and event.seat != seat.seat:
                assert set(data["cards"]) == {None}
            if isinstance(event, CardsDrawn) and event.seat != seat.seat:
                assert set(data["received"]) <= {None} and set(data["discarded"]) <= {None}
    first = final.seats[0]
    after = view_hand(final, Viewer("player", first.seat, first.player_id))
    for seat in after["seats"]:
        if seat["status"] == "folded" and seat["seat"] != final.seats[0].seat:
            assert seat["cards"] == [None] * 5
        if seat["seat"] in shown:
            assert None not in seat["cards"]


@settings(max_examples=60, deadline=None)
@given(hands)
def test_the_audit_of_every_finished_hand_passes(case):
    _, events, _, _ = played(case)
    assert all(check["ok"] for check in audit_hand(events)), audit_hand(events)


def test_the_audit_catches_a_card_swapped_after_the_deal():
    _, events, _, _ = played({"stacks": [500, 500, 500], "seed": "cd" * 32, "moves": 7,
                              "all_in": "forbidden", "structure": "house"})
    index = next(i for i, e in enumerate(events) if isinstance(e, CardsDealt))
    forged = list(events)
    dealt = forged[index]
    forged[index] = CardsDealt(seat=dealt.seat, cards=("As", "Ah", "Ad", "Ac", "Ks"),
                               face_up=dealt.face_up)
    failed = {c["name"] for c in audit_hand(forged) if not c["ok"]}
    assert "replay_legality" in failed


def test_a_later_occupant_of_a_seat_sees_the_hand_as_everyone_does():
    state, _ = start([500, 500], button=1)
    dealt = view_hand(state, Viewer("player", 2, "id2"))
    stranger = view_hand(state, Viewer("player", 2, "someone-else"))
    assert None not in dealt["seats"][1]["cards"] and dealt["legal_actions"]
    assert stranger["seats"][1]["cards"] == [None] * 5 and stranger["legal_actions"] == []
