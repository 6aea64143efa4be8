"""Properties of every hand played with random legal moves: chips are conserved, replay
equals live state, hidden cards never leak, and the audit of the finished hand passes."""

import itertools
import json
import random
from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from domain import fairness
from domain import table as table_rules
from domain.audit import audit_hand
from domain.commands import CreateTable, OpenHand, SeatPlayer, StartHand
from domain.cards import STANDARD_DECK, codes
from domain.events import CardsDealt, CardsDrawn, ChipsAdded, HandOpened, HandSettled
from domain.frozen import replace
from domain.poker import engine
from domain.poker.replayed import rules_problem
from domain.views import Viewer, view_hand, visible_openings
from tests.poker.play import (play_out, projected, rules_problems, start, table_events,
                              viewed)

hands = st.fixed_dictionaries({
    "stacks": st.lists(st.integers(30, 600), min_size=2, max_size=6),
    "seed": st.binary(min_size=32, max_size=32).map(bytes.hex),
    "moves": st.integers(0, 2**32),
    "all_in": st.sampled_from(["forbidden", "side_pots"]),
    "structure": st.sampled_from(["house", "fixed-limit"]),
    "half_bet_rule": st.booleans(),
})


def played(case):
    button = 1 + case["moves"] % len(case["stacks"])
    state, events = start(case["stacks"], button=button, seed=case["seed"],
                          all_in=case["all_in"], structure=case["structure"],
                          half_bet_rule=case.get("half_bet_rule", False))
    steps = []
    final, more = play_out(state, random.Random(case["moves"]),
                           on_step=lambda s, new: steps.append(s))
    return state, events + more, [state] + steps, final


@settings(max_examples=150, deadline=None)
@given(hands)
def test_chips_are_conserved_at_every_step(case):
    _, _, states, final = played(case)
    for state in states:
        total = sum(case["stacks"]) + sum(s.bought for s in state.seats)
        assert sum(s.stack for s in state.seats) + state.pot == total
        assert all(s.stack >= 0 for s in state.seats)
    assert final.pot == 0


@settings(max_examples=100, deadline=None)
@given(hands)
def test_replay_equals_live_state(case):
    _, events, _, final = played(case)
    initial = engine.initial_state({"game": "five-card-draw", "options": final.options})
    assert reduce(engine.evolve, events, initial) == final


@settings(max_examples=80, deadline=None)
@given(hands)
def test_players_never_see_other_players_down_cards_the_deck_or_the_seed(case):
    _, events, states, final = played(case)
    for state in states:
        for me in state.seats:
            view = view_hand(state, Viewer("player", me.seat, me.player_id))
            assert view["seats"][me.seat - 1]["cards"] == list(me.cards)
            shown = {h["seat"] for h in state.showdown}
            for seat in view["seats"]:
                if seat["seat"] != me.seat and seat["seat"] not in shown:
                    assert seat["cards"] == [None] * len(seat["cards"])
            assert view["server_seed"] is None
    for upto, state in _checkpoints(events, states):
        for me in state.seats:
            viewer = Viewer("player", me.seat, me.player_id)
            text = json.dumps([projected(e, viewer, state) for e in events[:upto]])
            leaked = [c for c in _unseen_by(me.seat, events[:upto], state) if f'"{c}"' in text]
            assert not leaked, f"seat {me.seat} can read {leaked}"
    drew = {e.seat for e in events if isinstance(e, CardsDrawn)}
    for me in final.seats:  # a hand shown that drew opens what its draw held, not its deal
        viewer = Viewer("player", me.seat, me.player_id)
        assert not [e.seat for e in events if isinstance(e, CardsDealt) and e.seat in drew - {
            me.seat} and visible_openings(e, viewer, final)]


@settings(max_examples=60, deadline=None)
@given(hands)
def test_every_viewer_finds_each_pot_paid_as_the_hands_they_can_read_make_it(case):
    """The verifier's rules check passes every finished hand from each player's history
    and an outsider's, and finds a pot paid to another seat."""
    _, events, _, final = played(case)
    assert not rules_problems(events)
    history = viewed(events, Viewer("admin"), final)
    pot = next(e["data"] for e in history if e["type"] == "PotAwarded")
    other = next(s.seat for s in final.seats if s.seat not in pot["winners"])
    pot.update(winners=[other], shares={str(other): pot["amount"]})
    assert rules_problem(history) is not None


def test_the_rules_check_finds_a_showdown_left_out_and_a_pot_left_unpaid():
    """An edited history that pays a showdown's pots without its ShowdownEvaluated, or pays
    nothing and ends with the stacks the bets leave, fails the rules check."""
    cases = ({"stacks": [400, 300, 200], "seed": "ef" * 32, "moves": moves, "all_in": "side_pots",
              "structure": "house"} for moves in range(100))
    events, final = next((events, final) for _, events, _, final in map(played, cases)
                         if any(e.type == "ShowdownEvaluated" for e in events))
    history = viewed(events, Viewer("admin"), final)
    left_out = [e for e in history if e["type"] != "ShowdownEvaluated"]
    assert "no ShowdownEvaluated records" in rules_problem(left_out)
    unpaid = [e for e in history if e["type"] not in ("ShowdownEvaluated", "PotAwarded")]
    ended = unpaid[-1]["data"]
    ended["stacks"] = {str(s.seat): s.stack - sum(
        p["shares"].get(str(s.seat), 0) for p in final.pots_awarded) for s in final.seats}
    assert "in the pot unpaid" in rules_problem(unpaid)


def _checkpoints(events, states):
    """(number of events, state after them) after the deal, halfway and at the end."""
    ends = list(itertools.accumulate(len(step) for step in _steps(events, states)))
    picks = {0, len(states) // 2, len(states) - 1}
    return [(ends[i], states[i]) for i in sorted(picks)]


def _steps(events, states):
    """The events of each state in ``states`` (the first holds the start)."""
    count, total = [], 0
    for state in states:
        replayed = engine.initial_state({"game": "five-card-draw", "options": state.options})
        n = next(n for n in range(total, len(events) + 1)
                 if reduce(engine.evolve, events[:n], replayed) == state)
        count.append(events[total:n])
        total = n
    return count


def _unseen_by(seat: int, events, state) -> set[str]:
    """Cards ``seat`` never held, never saw face up and never saw shown."""
    seen = {c for h in state.showdown for c in h["cards"]}
    for event in events:
        if isinstance(event, CardsDealt) and (event.seat == seat or event.face_up):
            seen |= set(event.cards)
        if isinstance(event, CardsDrawn) and event.seat == seat:
            seen |= set(event.received)
    return set(codes(STANDARD_DECK)) - seen


@settings(max_examples=60, deadline=None)
@given(hands)
def test_the_audit_of_every_finished_hand_passes(case):
    _, events, _, _ = played(case)
    checks = audit_hand(1, events, table_events(events[0], events[-1]), case["seed"])
    assert {c["name"] for c in checks} == {"completeness", "table_start", "table_settlement",
                                           "replay_legality", "chip_conservation"}
    assert all(check["ok"] for check in checks), checks


def test_the_audit_catches_a_card_swapped_after_the_deal():
    _, events, _, _ = played({"stacks": [500, 500, 500], "seed": "cd" * 32, "moves": 7,
                              "all_in": "forbidden", "structure": "house"})
    index = next(i for i, e in enumerate(events) if isinstance(e, CardsDealt))
    forged = list(events)
    dealt = forged[index]
    forged[index] = CardsDealt(seat=dealt.seat, cards=("As", "Ah", "Ad", "Ac", "Ks"),
                               face_up=dealt.face_up)
    checks = audit_hand(1, forged, table_events(events[0], events[-1]), "cd" * 32)
    assert {c["name"] for c in checks if not c["ok"]} == {"replay_legality"}
    replay = next(c for c in checks if c["name"] == "replay_legality")
    assert replay["detail"] == (f"event {index + 1} (CardsDealt) is not what the rules "
                                "decide")  # the forged event, not the start it followed


def test_the_audit_catches_another_server_seed():
    _, events, _, _ = played({"stacks": [500, 500], "seed": "cd" * 32, "moves": 3,
                              "all_in": "forbidden", "structure": "house"})
    checks = audit_hand(1, events, table_events(events[0], events[-1]), "ce" * 32)
    assert {c["name"] for c in checks if not c["ok"]} == {"replay_legality"}


def test_the_audit_catches_a_truncated_hand_and_a_settlement_that_differs():
    _, events, _, _ = played({"stacks": [500, 500], "seed": "cd" * 32, "moves": 3,
                              "all_in": "forbidden", "structure": "house"})
    table = table_events(events[0], events[-1])
    truncated = audit_hand(1, events[:-2], table, "cd" * 32)
    assert [c["name"] for c in truncated if not c["ok"]] == ["completeness"]
    wrong = dict(events[-1].stacks, **{"1": events[-1].stacks["1"] + 25})
    table[-1] = HandSettled(hand_no=1, stacks=wrong)
    settled = audit_hand(1, events, table, "cd" * 32)
    assert [c["name"] for c in settled if not c["ok"]] == ["table_settlement"]


def test_the_audit_catches_a_hand_that_did_not_start_as_the_table_published():
    _, events, _, _ = played({"stacks": [500, 500], "seed": "cd" * 32, "moves": 3,
                              "all_in": "forbidden", "structure": "house"})
    table = table_events(events[0], events[-1])
    opened = next(i for i, e in enumerate(table) if isinstance(e, HandOpened) and e.hand_no == 1)
    table.insert(opened, ChipsAdded(seat=1, amount=25))  # the hand began without them
    checks = audit_hand(1, events, table, "cd" * 32)
    failed = [c for c in checks if not c["ok"]]
    assert [c["name"] for c in failed] == ["table_start"] and "seats" in failed[0]["detail"]


def test_a_later_occupant_of_a_seat_sees_the_hand_as_everyone_does():
    state, _ = start([500, 500], button=1)
    dealt = view_hand(state, Viewer("player", 2, "id2"))
    stranger = view_hand(state, Viewer("player", 2, "someone-else"))
    assert None not in dealt["seats"][1]["cards"] and dealt["legal_actions"]
    assert stranger["seats"][1]["cards"] == [None] * 5 and stranger["legal_actions"] == []


def _dealers_choice_hand(seed="ab" * 32):
    """Hand 1 of Texas Hold'em at a Five Card Draw table of dealer's choice: the table's
    events up to its opening, and the hand's start."""
    state, table_log = table_rules.initial_state(), []
    for command in (CreateTable("five-card-draw", {"dealers_choice": True}, 6, "a", "u",
                                fairness.seed_commitment(seed)),
                    SeatPlayer("id1", "p1", 500, "t1"), SeatPlayer("id2", "p2", 500, "t2"),
                    OpenHand("c", game="texas-holdem")):
        for event in table_rules.decide(state, command):
            state = table_rules.evolve(state, event)
            table_log.append(event)
    opened = table_log[-1]
    hand = engine.initial_state({"game": "texas-holdem", "options": opened.options})
    seats = tuple({"seat": s.seat, "name": s.name, "stack": s.stack, "player_id": s.player_id}
                  for s in state.seats)
    events = engine.decide(hand, StartHand(hand_no=1, button=opened.button, seats=seats,
                                           server_seed=seed, client_seeds={},
                                           blinds=opened.blinds))
    return table_log, events


def _table_start(events, table_log) -> dict:
    return next(c for c in audit_hand(1, events, table_log, None) if c["name"] == "table_start")


def test_a_dealers_choice_hand_starts_with_the_options_its_table_recorded():
    table_log, events = _dealers_choice_hand()
    assert table_log[-1].options["big_blind"] == 50 and table_log[-1].options["dead_button"]
    assert _table_start(events, table_log)["ok"]
    started = events[0]
    options = {k: v for k, v in started.options.items() if k != "dead_button"}
    forged = [replace(started, options=options), *events[1:]]
    assert "options" in _table_start(forged, table_log)["detail"]


def test_a_dealers_choice_hand_opened_before_its_options_were_recorded_audits():
    """Its options were resolved by the ones its game had then: those added since (here
    ``dead_button``) are missing, and read as the rules before them; the rest must agree."""
    table_log, events = _dealers_choice_hand()
    table_log[-1] = replace(table_log[-1], options={}, blinds=())
    started = events[0]
    then = {k: v for k, v in started.options.items() if k != "dead_button"}
    assert _table_start([replace(started, options=then, blinds=()), *events[1:]],
                        table_log)["ok"]
    other = replace(started, options={**then, "big_blind": 100}, blinds=())
    assert "options" in _table_start([other, *events[1:]], table_log)["detail"]


def _after_a_bust(seed="ab" * 32):
    """Hand 2 of a four-player Texas Hold'em table whose big blind (seat 3) busted in hand 1
    (button 1, blinds 2 and 3): the table's events to its opening, and the hand's start."""
    state, table_log = table_rules.initial_state(), []

    def apply(*events):
        nonlocal state
        for event in events:
            state = table_rules.evolve(state, event)
            table_log.append(event)

    for command in (CreateTable("texas-holdem", {}, 6, "a", "u", "c"),
                    *(SeatPlayer(f"id{n}", f"p{n}", 500, f"t{n}") for n in range(1, 5)),
                    OpenHand(fairness.seed_commitment(seed))):
        apply(*table_rules.decide(state, command))
    apply(HandSettled(hand_no=1, stacks={"1": 500, "2": 400, "3": 0, "4": 1100}))
    apply(*table_rules.decide(state, OpenHand("c")))
    return table_log, _started(table_log, state, seed)


def _started(table_log, table, seed, **forged) -> list:
    """The hand opened last in ``table_log``, started as its ``HandOpened`` says once
    ``forged`` replaces fields of it (the table then records the forgery too)."""
    opened = table_log[-1] = replace(table_log[-1], **forged)
    seats = tuple({"seat": s.seat, "name": s.name, "stack": s.stack, "player_id": s.player_id}
                  for s in table.seats if s.seat in opened.dealt_in)
    hand = engine.initial_state({"game": "texas-holdem", "options": table.options})
    return engine.decide(hand, StartHand(hand_no=opened.hand_no, button=opened.button,
                                         seats=seats, server_seed=seed, client_seeds={},
                                         blinds=opened.blinds))


def test_the_audit_re_decides_where_the_table_put_the_button_and_the_blinds():
    table_log, events = _after_a_bust()
    assert (table_log[-1].button, table_log[-1].blinds) == (2, (3, 4))  # a dead small blind
    table_start = next(c for c in audit_hand(2, events, table_log, None)
                       if c["name"] == "table_start")
    assert table_start["ok"], table_start
    table = reduce(table_rules.evolve, table_log[:-1], table_rules.initial_state())
    for forged, named in (({"blinds": (4, 1)}, "blinds [4, 1] (the rules give [3, 4])"),
                          ({"button": 4, "blinds": (1, 2)}, "button 4 (the rules give 2)"),
                          ({"dealt_in": (1, 2), "button": 1, "blinds": (1, 2)},
                           "dealt_in [1, 2] (the rules give [1, 2, 4])")):
        log = list(table_log)
        started = _started(log, table, "ab" * 32, **forged)  # the hand as the forgery says
        check = next(c for c in audit_hand(2, started, log, None) if c["name"] == "table_start")
        assert not check["ok"] and named in check["detail"], (forged, check)
