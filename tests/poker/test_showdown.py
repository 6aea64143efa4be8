"""Side pots, split pots, odd chips, high-low pots and mucking, with scripted decks."""

from unittest import mock

import pytest

from domain import audit, fairness
from domain.commands import Showdown
from domain.events import BetReturned, PotAwarded, ShowdownEvaluated
from domain.frozen import replace
from domain.poker import engine
from domain.poker.showdown import showdown_order
from tests.poker.play import act, stacked, start


def settle(state):
    events = engine.decide(state, Showdown())
    for event in events:
        state = engine.evolve(state, event)
    return state, events


def pots(events) -> list[tuple[int, tuple, dict]]:
    return [(e.amount, e.eligible, e.shares) for e in events if isinstance(e, PotAwarded)]


def all_in_preflop(game, stacks, hands, board, button, order, **options):
    """Everyone goes all in or calls before the flop, in turn; then the showdown."""
    deck = stacked(game, order, hands, board)
    state, _ = start(stacks, game=game, button=button, deck=deck, **options)
    while state.status == "betting":
        seat = state.to_act
        actions = {a["type"]: a for a in engine.legal_actions(state, seat)}
        if "raise" in actions and actions["raise"].get("all_in") != actions["raise"]["min"]:
            state, _ = act(state, seat, "raise", actions["raise"]["max"])
        else:
            state, _ = act(state, seat, "call")
    assert state.status == "showdown_pending"
    return settle(state)


def test_three_all_in_levels_make_a_main_pot_and_two_side_pots():
    # button 4: seat 1 small blind, seat 2 big blind; seat 1 has the best hand, then 2, then 3
    state, events = all_in_preflop(
        "texas-holdem", [100, 200, 300, 1000],
        {1: "As Ad", 2: "Qs Qd", 3: "Ts Td", 4: "3s 4d"}, "2c 7d 9h Js Kc",
        button=4, order=[1, 2, 3, 4])
    assert pots(events) == [(400, (1, 2, 3, 4), {"1": 400}), (300, (2, 3, 4), {"2": 300}),
                            (200, (3, 4), {"3": 200})]
    assert [s.stack for s in state.seats] == [400, 300, 200, 700]


def test_an_uncalled_bet_goes_back_before_the_showdown():
    deck = stacked("texas-holdem", [1, 2], {1: "As Ad", 2: "Ks Kd"}, "2c 7d 9h Js 3c")
    state, _ = start([300, 1000], game="texas-holdem", button=2, deck=deck)
    state, _ = act(state, 2, "raise", 1000)  # the button (small blind) shoves
    state, events = act(state, 1, "call")  # all in for 300
    assert [(e.seat, e.amount) for e in events if isinstance(e, BetReturned)] == [(2, 700)]
    state, events = settle(state)
    assert pots(events) == [(600, (1, 2), {"1": 600})]
    assert [s.stack for s in state.seats] == [600, 700]


def test_a_pot_split_on_a_tie_gives_the_odd_chip_to_the_first_winner_left_of_the_button():
    board = "As Ks Qs Js Ts"  # a royal flush on the board: every hand ties
    deck = stacked("texas-holdem", [1, 2, 3], {1: "2c 3d", 2: "4c 5d", 3: "6c 7d"}, board)
    state, _ = start([1000] * 3, game="texas-holdem", button=3, deck=deck, structure="no-limit")
    state, _ = act(state, 3, "call")
    state, _ = act(state, 1, "fold")  # the small blind's 25 stays in the pot
    state, _ = act(state, 2, "check")
    while state.status == "betting":
        state, _ = act(state, state.to_act, "check")
    state, events = settle(state)
    assert pots(events) == [(125, (2, 3), {"2": 75, "3": 50})]  # five chips of 25


@pytest.mark.parametrize("split_chip, shares", [
    ("hand", {"1": 111, "2": 111}),  # a raise to 111 needs a chip of 1: split equally
    ("table", {"1": 100, "2": 122}),  # in 25s (the blinds'), the rest to the button's left
    (None, {"1": 100, "2": 122})])  # a hand from before the option: as it was split then
def test_a_tied_pot_splits_in_the_smallest_chip_the_hand_needed(split_chip, shares):
    deck = stacked("texas-holdem", [1, 2], {1: "2c 3d", 2: "4c 5d"}, "As Ks Qs Js Ts")
    state, _ = start([1000, 1000], game="texas-holdem", button=1, deck=deck,
                     structure="no-limit", split_chip=split_chip or "hand")
    if split_chip is None:
        state = replace(state, options={k: v for k, v in state.options.items()
                                        if k != "split_chip"})
    state, _ = act(state, 1, "raise", 111)  # heads-up: the button is the small blind
    state, _ = act(state, 2, "call")
    while state.status == "betting":
        state, _ = act(state, state.to_act, "check")
    assert pots(settle(state)[1]) == [(222, (1, 2), shares)]


def test_each_side_pot_splits_among_its_own_tied_winners():
    board = "As Ks Qs Js Ts"
    state, events = all_in_preflop(
        "texas-holdem", [100, 200, 300],
        {1: "2c 3d", 2: "4c 5d", 3: "6c 7d"}, board, button=3, order=[1, 2, 3])
    assert pots(events) == [(300, (1, 2, 3), {"1": 100, "2": 100, "3": 100}),
                            (200, (2, 3), {"2": 100, "3": 100})]


def omaha_hi_lo(stacks, hands, board, button=3, **options):
    order = [s for s in range(1, len(stacks) + 1) if s > button] + [
        s for s in range(1, len(stacks) + 1) if s <= button]
    return all_in_preflop("omaha-hi-lo", stacks, hands, board, button=button, order=order,
                          structure="no-limit", **options)


def test_hi_lo_splits_between_the_best_high_and_the_best_qualifying_low():
    state, events = omaha_hi_lo([1000, 1000, 1000], {
        1: "Ac 3d Qc Qd",  # low A-2-3-5-8
        2: "Kc Kh 9s 9c",  # four kings
        3: "Jc Th 7s 6c"}, "2c 5d 8h Kd Ks")
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.halves == {"high": (2,), "low": (1,)}
    assert award.shares == {"2": 1500, "1": 1500}
    shown = {h["seat"]: h for h in next(e for e in events if isinstance(e, ShowdownEvaluated)).hands}
    assert shown[1]["low"]["category"] and shown[2]["low"] is None


def test_hi_lo_without_a_qualifying_low_gives_high_the_whole_pot():
    state, events = omaha_hi_lo([1000, 1000, 1000], {
        1: "Ac 3d Qc Qd", 2: "Kc Kh 9s 9c", 3: "Jc Th 7s 6c"}, "9c Td Jh Kd Ks")
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.halves == {"high": (2,), "low": ()} and award.shares == {"2": 3000}


def test_hi_lo_a_side_pot_without_a_qualifying_low_among_its_players_goes_to_high():
    # Seat 1, short, holds the only low; the side pot between seats 2 and 3 has none.
    state, events = omaha_hi_lo([300, 1000, 1000], {
        1: "Ac 3d Qc Qd", 2: "Kc Kh 9s 9c", 3: "Jc Th Qs 9d"}, "2c 5d 8h Kd Ks")
    main, side = [e for e in events if isinstance(e, PotAwarded)]
    assert (main.amount, main.shares, main.halves) == (900, {"2": 450, "1": 450},
                                                       {"high": (2,), "low": (1,)})
    assert (side.amount, side.shares, side.halves) == (1400, {"2": 1400},
                                                       {"high": (2,), "low": ()})


def test_hi_lo_quartered_pot_and_the_odd_chip_goes_to_the_high_half():
    # Seats 1 and 3 hold the same low; seat 2 the high: the low half splits in two.
    state, events = omaha_hi_lo([1000, 1000, 1000], {
        1: "Ac 3d Qc Qd", 2: "Kc Kh 9s 9c", 3: "Ad 3c Jh Js"}, "2c 5d 8h Kd Ks")
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.halves == {"high": (2,), "low": (1, 3)}
    assert award.shares == {"2": 1500, "1": 750, "3": 750}


def test_hi_lo_the_odd_chip_of_a_split_goes_to_the_high_half():
    deck = stacked("omaha-hi-lo", [1, 2, 3], {1: "Jc Th Qs 9d", 2: "Kc Kh 9s 9c",
                                              3: "Ac 3d Qc Qd"}, "2c 5d 8h Kd Ks")
    state, _ = start([1000] * 3, game="omaha-hi-lo", button=3, deck=deck, structure="no-limit")
    state, _ = act(state, 3, "raise", 1000)
    state, _ = act(state, 1, "fold")  # the small blind's 25 stays: a pot of 81 chips of 25
    state, _ = act(state, 2, "call")
    state, events = settle(state)
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.amount == 2025 and award.shares == {"2": 1025, "3": 1000}


def test_with_muck_losers_a_hand_that_wins_nothing_is_not_shown():
    hands = {1: "As Ad", 2: "Qs Qd", 3: "3s 4d"}
    board = "2c 7d 9h Js Kc"
    _, shown_all = all_in_preflop("texas-holdem", [1000] * 3, hands, board, button=3,
                                  order=[1, 2, 3])
    _, mucked = all_in_preflop("texas-holdem", [1000] * 3, hands, board, button=3,
                               order=[1, 2, 3], muck_losers=True)
    seats = lambda events: {h["seat"] for e in events if isinstance(e, ShowdownEvaluated)  # noqa: E731
                            for h in e.hands}
    assert seats(shown_all) == {1, 2, 3} and seats(mucked) == {1}


def test_the_last_aggressor_of_the_final_round_shows_first():
    deck = stacked("texas-holdem", [1, 2, 3], {1: "As Ad", 2: "Qs Qd", 3: "3s 4d"},
                   "2c 7d 9h Js Kc")
    state, _ = start([1000] * 3, game="texas-holdem", button=3, deck=deck)
    for seat in (3, 1):
        state, _ = act(state, seat, "call")
    state, _ = act(state, 2, "check")
    for _ in range(2):  # flop and turn checked through
        for seat in (1, 2, 3):
            state, _ = act(state, seat, "check")
    state, _ = act(state, 1, "check")
    state, _ = act(state, 2, "bet", 50)
    for seat in (3, 1):
        state, _ = act(state, seat, "call")
    state, events = settle(state)
    order = [h["seat"] for h in next(e for e in events if isinstance(e, ShowdownEvaluated)).hands]
    assert order == [2, 3, 1]


def played_before_last_bettor_shows(state):
    """``state`` as a hand stored before the option came: its options do not name it."""
    return replace(state, options={name: value for name, value in state.options.items()
                                   if name != "last_bettor_shows"})


def checked_to_the_river(state):
    """Seat 3 folds, seat 1 calls, seat 2 checks; the flop and the turn are checked through."""
    events = []
    for seat, move in [(3, "fold"), (1, "call"), (2, "check")] + [(1, "check"), (2, "check")] * 2:
        state, new = act(state, seat, move)
        events += new
    return state, events


@pytest.mark.parametrize("rule, first", [("option", 2), ("false", 1), ("stored before", 2)])
def test_a_raise_all_in_short_of_a_full_one_is_the_last_positive_action(rule, first):
    """000: "the player who was the last to take positive action (bet or raise) in the
    final betting round must show first" (an all-in raise below the minimum too), also in a
    hand stored before the option. With ``last_bettor_shows: false`` only a full bet or
    raise counts."""
    state, _ = start([1000, 400, 1000], game="texas-holdem", button=3,
                     last_bettor_shows=rule != "false")
    if rule == "stored before":
        state = played_before_last_bettor_shows(state)
    state, _ = checked_to_the_river(state)
    state, _ = act(state, 1, "bet", 300)
    state, _ = act(state, 2, "raise", 350)  # all in: 50 more, short of a full raise
    state, _ = act(state, 1, "call")
    assert showdown_order(state) == [first, 3 - first]


@pytest.mark.parametrize("rule, shown", [("option", [1, 2]), ("false", [2]),
                                         ("stored before", [1, 2])])
def test_with_muck_losers_the_last_bettor_shows_though_they_lose(rule, shown):
    """001: losing hands may be mucked, but "the last player to raise shows his hand", also
    in a hand stored before the option. With ``last_bettor_shows: false`` only winners
    show."""
    deck = stacked("texas-holdem", [1, 2, 3], {1: "3s 4d", 2: "As Ad", 3: "Qs Qd"},
                   "2c 7d 9h Js Kc")
    state, _ = start([1000] * 3, game="texas-holdem", button=3, deck=deck, muck_losers=True,
                     last_bettor_shows=rule != "false")
    if rule == "stored before":
        state = played_before_last_bettor_shows(state)
    state, _ = checked_to_the_river(state)
    state, _ = act(state, 1, "bet", 100)  # a bluff, called
    state, _ = act(state, 2, "call")
    _, events = settle(state)
    (evaluated,) = [e for e in events if isinstance(e, ShowdownEvaluated)]
    assert [h["seat"] for h in evaluated.hands] == shown


@pytest.mark.parametrize("stored_rule", [True, False])
def test_a_hand_stored_before_last_bettor_shows_audits_by_either_rule_it_was_played_by(
        stored_rule):
    """Until 24 November only winners showed with muck_losers; then the last bettor did too,
    before the option came. A hand stored in either time lacks the option: its showdown is
    legal by either rule, and a showdown neither rule decides is not."""
    deck = stacked("texas-holdem", [1, 2, 3], {1: "3s 4d", 2: "As Ad", 3: "Qs Qd"},
                   "2c 7d 9h Js Kc")
    state, events = start([1000] * 3, game="texas-holdem", button=3, deck=deck,
                          muck_losers=True, last_bettor_shows=stored_rule)
    state, new = checked_to_the_river(state)
    events += new
    for seat, move, *amount in [(1, "bet", 100), (2, "call")]:
        state, new = act(state, seat, move, *amount)
        events += new
    state, new = settle(state)
    options = {k: v for k, v in events[0].options.items() if k != "last_bettor_shows"}
    stored = [replace(events[0], options=options), *events[1:], *new]
    with mock.patch.object(fairness, "deck_order", lambda *_: list(deck)):
        assert audit._replay_legality(stored, "ab" * 32) is None
        (evaluated,) = [e for e in new if isinstance(e, ShowdownEvaluated)]
        forged = replace(evaluated, hands=())  # nobody shown: neither rule
        assert audit._replay_legality([forged if e is evaluated else e for e in stored],
                                      "ab" * 32) is not None
