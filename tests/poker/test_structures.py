"""Betting structures, blinds and the raise rules, on hold'em and draw hands with scripted
decks: each structure's limits, the min-raise rule, incomplete all-in raises, raise caps."""

from functools import reduce

import pytest

from domain import games as registry
from domain.commands import Showdown, StartHand
from domain.errors import DomainError
from domain.events import BetReturned, BlindPosted, PotAwarded
from domain.poker import engine
from tests.poker.play import act, options, start


def legal(state, seat) -> dict:
    return {a["type"]: a for a in engine.legal_actions(state, seat)}


def refused(code, state, seat, kind, amount=None):
    with pytest.raises(DomainError) as error:
        act(state, seat, kind, amount)
    assert error.value.code == code, error.value.message


def holdem(stacks, button=1, **options):
    return start(stacks, game="texas-holdem", button=button, **options)


def test_blinds_are_posted_left_of_the_button_and_the_big_blind_has_the_option():
    state, events = holdem([1000, 1000, 1000, 1000], button=1, structure="fixed-limit")
    blinds = [(e.seat, e.amount, e.blind) for e in events if isinstance(e, BlindPosted)]
    assert blinds == [(2, 25, "small"), (3, 50, "big")]
    assert state.to_act == 4  # left of the big blind
    for seat in (4, 1, 2):
        state, _ = act(state, seat, "call")
    assert state.to_act == 3 and "check" in legal(state, 3) and "raise" in legal(state, 3)
    state, _ = act(state, 3, "check")
    assert state.board and len(state.board) == 3 and state.to_act == 2  # left of the button


def test_heads_up_the_button_posts_the_small_blind_and_acts_first_before_the_flop_only():
    state, events = holdem([1000, 1000], button=2, structure="no-limit")
    blinds = [(e.seat, e.blind) for e in events if isinstance(e, BlindPosted)]
    assert blinds == [(2, "small"), (1, "big")]
    assert state.to_act == 2
    state, _ = act(state, 2, "call")
    state, _ = act(state, 1, "check")
    assert len(state.board) == 3 and state.to_act == 1  # the big blind acts first after


def test_a_big_blind_posted_short_is_called_in_full_and_wins_only_what_it_matched():
    """The books are silent: as cardrooms play it (``short_forced_bet: full``, the default),
    the others call the whole big blind and raise from it; the short blind's pot holds
    what each player matched of its 30."""
    state, events = holdem([1000, 1000, 30, 1000], button=1, structure="no-limit")
    blinds = [(e.seat, e.amount, e.call_to) for e in events if isinstance(e, BlindPosted)]
    assert blinds == [(2, 25, None), (3, 30, 50)]
    assert legal(state, 4)["call"] == {"type": "call", "amount": 50}
    assert legal(state, 4)["raise"]["min"] == 100
    for seat in (4, 1, 2):
        state, _ = act(state, seat, "call")
    assert [s.committed for s in state.seats] == [50, 50, 30, 50] and len(state.board) == 3
    while state.status == "betting":
        state, _ = act(state, state.to_act, "check")
    pots = [(e.amount, e.eligible) for e in engine.decide(state, Showdown())
            if isinstance(e, PotAwarded)]
    assert pots == [(120, (1, 2, 3, 4)), (60, (1, 2, 4))]


@pytest.mark.parametrize("rule, to_call", [("full", 50), ("posted", 25)])
def test_a_big_blind_whose_ante_took_its_whole_stack_still_stands_when_called_in_full(
        rule, to_call):
    """Seat 3's 10 chips all go to the ante: called in full, its big blind stands at 50 (as
    it would with one chip left to post); called as posted there is none, and the small
    blind's 25 is the bet."""
    state, events = holdem([1000, 1000, 10, 1000], button=1, structure="no-limit", ante=10,
                           short_forced_bet=rule)
    blinds = [(e.seat, e.amount, e.call_to) for e in events if isinstance(e, BlindPosted)]
    assert blinds == [(2, 25, None)] + ([(3, 0, 50)] if rule == "full" else [])
    assert state.to_act == 4 and legal(state, 4)["call"]["amount"] == to_call
    assert legal(state, 4)["raise"]["min"] == to_call + 50


def test_a_table_may_have_a_short_big_blind_called_as_it_was_posted():
    state, events = holdem([1000, 1000, 30, 1000], button=1, structure="no-limit",
                           short_forced_bet="posted")
    assert [e.call_to for e in events if isinstance(e, BlindPosted)] == [None, None]
    assert legal(state, 4)["call"]["amount"] == 30 and legal(state, 4)["raise"]["min"] == 80


def test_a_hand_whose_options_do_not_name_short_forced_bet_calls_what_was_posted():
    """A hand started before the option was: its replay and its audit decide as it was
    played."""
    given = options("texas-holdem", structure="no-limit")
    del given["short_forced_bet"]
    state = engine.initial_state({"game": "texas-holdem", "options": given})
    seats = tuple({"seat": n, "name": f"p{n}", "stack": stack, "player_id": f"id{n}"}
                  for n, stack in enumerate([1000, 1000, 30, 1000], 1))
    events = engine.decide(state, StartHand(hand_no=1, button=1, seats=seats,
                                            server_seed="ab" * 32, client_seeds={}))
    state = reduce(engine.evolve, events, state)
    assert [e.call_to for e in events if isinstance(e, BlindPosted)] == [None, None]
    assert legal(state, 4)["call"]["amount"] == 30


@pytest.mark.parametrize("button_acts", [False, True])
def test_the_last_player_able_to_act_against_a_short_big_blind_gets_back_what_it_cannot_win(
        button_acts):
    """Heads-up, a small blind of 25 against a big blind all in for 20 has nothing to call:
    the hand runs out and the 5 nobody matched comes back. Three-handed, once the button
    folds, the small blind calls the whole blind and what the short one cannot match comes
    back too."""
    if not button_acts:
        state, events = holdem([20, 1000], button=2, structure="no-limit")
    else:
        state, events = holdem([1000, 1000, 30], button=1, structure="no-limit")
        state, _ = act(state, 1, "fold")
        assert legal(state, 2)["call"]["amount"] == 50 and "raise" not in legal(state, 2)
        state, events = act(state, 2, "call")
    returned = [(e.seat, e.amount) for e in events if isinstance(e, BetReturned)]
    assert returned == ([(2, 20)] if button_acts else [(2, 5)])
    assert state.status == "showdown_pending" and len(state.board) == 5


@pytest.mark.parametrize("last_all_in, rule, reopened", [
    (260, True, True), (240, True, False), (260, False, False)])
def test_short_all_ins_that_add_up_to_a_full_raise_reopen_the_betting(last_all_in, rule,
                                                                       reopened):
    """Seat 4 raises to 150, a raise of 100; all-ins to 200 and then 260 are each short of
    a full raise, but together raise the 150 seat 4 acted on by 110: the betting is open
    to it again (``short_all_ins_add_up``), not after 240 (90 together), nor at a table
    where only a full raise reopens it."""
    state, _ = holdem([200, last_all_in, 1000, 1000], button=1, structure="no-limit",
                      short_all_ins_add_up=rule)
    for seat, kind, amount in [(4, "raise", 150), (1, "raise", 200), (2, "raise", last_all_in),
                               (3, "call", None)]:
        state, _ = act(state, seat, kind, amount)
    assert state.to_act == 4 and legal(state, 4)["call"]["amount"] == last_all_in
    assert legal(state, 4).get("raise", {}).get("min") == (last_all_in + 100 if reopened
                                                          else None)


def flop(stacks, **options):
    """Fixed-limit hold'em, bets of 10, called round to the flop; seat 2 acts first on it."""
    state, _ = holdem(stacks, button=1, structure="fixed-limit", big_blind=10, **options)
    for seat, kind in [(4, "call"), (1, "call"), (2, "call"), (3, "check")]:
        state, _ = act(state, seat, kind)
    return state


def aggression(state, seat) -> dict:
    """What ``seat`` may bet, raise or complete to (the least of each)."""
    return {kind: action.get("min", action.get("amount")) for kind, action
            in legal(state, seat).items() if kind in ("bet", "raise", "complete")}


@pytest.mark.parametrize("all_in, rule, full, offered", [
    (4, True, False, {"complete": 10}), (6, True, True, {"raise": 16}),
    (4, False, False, {"raise": 14}), (6, False, False, {"raise": 16})])
def test_a_fixed_limit_all_in_bet_of_less_than_a_bet(all_in, rule, full, offered):
    """Seat 2 checks and seat 3 bets all in for less than the bet of 10. With
    ``half_bet_rule`` one of less than half a bet is completed to 10, and one of at least
    half is a full bet, raised a full bet over, which also reopens the betting to seat 2;
    without it a raise goes a full bet over either, and neither reopens it."""
    state = flop([1000, 1000, 10 + all_in, 1000], half_bet_rule=rule)
    state, _ = act(state, 2, "check")
    state, events = act(state, 3, "bet", all_in)
    assert events[0].full is full
    assert aggression(state, 4) == offered
    for seat in (4, 1):
        state, _ = act(state, seat, "call")
    assert aggression(state, 2) == (offered if full else {})


def test_a_completed_all_in_bet_is_the_opening_bet_raised_a_full_bet_over():
    state = flop([1000, 1000, 14, 1000], half_bet_rule=True, max_raises=1)
    state, _ = act(state, 2, "check")
    state, _ = act(state, 3, "bet", 4)
    state, events = act(state, 4, "complete")
    assert (events[0].type, events[0].to, events[0].full) == ("BetCompleted", 10, True)
    assert aggression(state, 1) == {"raise": 20}  # the completion is no raise: one is left
    state, _ = act(state, 1, "raise", 20)
    assert aggression(state, 2) == {}


@pytest.mark.parametrize("all_in, rule, raise_to, raises", [
    (14, True, 20, 0), (16, True, 26, 1), (14, False, 24, 0), (16, False, 26, 0)])
def test_a_fixed_limit_all_in_raise_of_less_than_a_bet(all_in, rule, raise_to, raises):
    """Seat 2 bets 10 and seat 4 raises all in for less than a full raise. With
    ``half_bet_rule`` a raise of less than half a bet is completed to 20, and one of at
    least half is a full raise (toward the cap too), which reopens the betting to seat 2;
    without it a raise goes a full bet over either, and neither reopens it."""
    state = flop([1000, 1000, 1000, 10 + all_in], half_bet_rule=rule)
    for seat, kind, amount in [(2, "bet", 10), (3, "call", None), (4, "raise", all_in)]:
        state, _ = act(state, seat, kind, amount)
    assert state.raises == raises
    assert aggression(state, 1) == {"raise": raise_to}
    state, _ = act(state, 1, "call")
    assert aggression(state, 2) == ({"raise": raise_to} if raises else {})


def test_fixed_limit_bets_the_small_bet_then_the_big_bet_with_one_bet_and_three_raises():
    state, _ = holdem([5000] * 3, button=1, structure="fixed-limit")
    assert legal(state, 1)["raise"] == {"type": "raise", "min": 100, "max": 100, "step": 50}
    state, _ = act(state, 1, "raise", 100)
    state, _ = act(state, 2, "raise", 150)
    state, _ = act(state, 3, "raise", 200)  # the big blind's is the third raise: capped
    assert "raise" not in legal(state, 1)
    refused("raise_cap_reached", state, 1, "raise", 250)
    for seat in (1, 2):
        state, _ = act(state, seat, "call")
    for _ in range(3):  # flop: checked through
        state, _ = act(state, state.to_act, "check")
    assert state.betting_round == 3
    assert legal(state, state.to_act)["bet"] == {"type": "bet", "min": 100, "max": 100,
                                                 "step": 100}


def test_pot_limit_raises_to_at_most_the_pot_after_the_call():
    state, _ = holdem([5000] * 4, button=1, structure="pot-limit")
    raise_ = legal(state, 4)["raise"]
    assert (raise_["min"], raise_["max"]) == (100, 175)  # 50 + (75 in the pot + 50 to call)
    state, _ = act(state, 4, "raise", 175)
    assert legal(state, 1)["raise"]["max"] == 175 + (75 + 175) + 175  # 600
    refused("amount_out_of_range", state, 1, "raise", 601)


def test_no_limit_min_raise_is_the_last_full_raise_and_an_incomplete_all_in_does_not_reopen():
    state, _ = holdem([5000, 5000, 5000, 230], button=1, structure="no-limit")
    state, _ = act(state, 4, "call")  # 50: 180 left behind
    state, _ = act(state, 1, "raise", 150)  # a raise of 100
    assert legal(state, 2)["raise"]["min"] == 250
    refused("amount_out_of_range", state, 2, "raise", 200)
    state, _ = act(state, 2, "call")
    state, _ = act(state, 3, "call")
    state, events = act(state, 4, "raise", 230)  # all in: 80 more, less than a full raise
    assert not events[0].full
    assert "raise" not in legal(state, 1)  # seat 1 already acted: call or fold only
    assert set(legal(state, 1)) == {"call", "fold"} and legal(state, 1)["call"]["amount"] == 230


def test_a_full_raise_reopens_the_betting_after_an_incomplete_one():
    state, _ = holdem([5000, 5000, 5000, 5000], button=1, structure="no-limit")
    state, _ = act(state, 4, "raise", 150)
    state, _ = act(state, 1, "raise", 250)
    assert legal(state, 2)["raise"]["min"] == 350


def test_spread_limit_bets_from_the_minimum_up_to_the_round_limit():
    state, _ = holdem([5000] * 3, button=1, structure="spread-limit", min_bet=20,
                      small_bet=60, big_bet=120)
    assert legal(state, 1)["raise"] == {"type": "raise", "min": 70, "max": 110, "step": 1}


def test_club_structure_bets_one_to_five_with_no_cap_on_raises():
    state, _ = start([500, 500], game="five-card-draw", button=2, rules="club")
    assert state.options["ante"] == 1 and state.pot == 2
    assert legal(state, 1)["bet"] == {"type": "bet", "min": 1, "max": 5, "step": 1}
    state, _ = act(state, 1, "bet", 5)
    for n in range(10):  # ten raises and counting
        seat = state.to_act
        state, _ = act(state, seat, "raise", state.current_bet + 5)
    assert "raise" in legal(state, state.to_act)


def test_the_raise_cap_is_an_option():
    state, _ = holdem([5000] * 3, button=1, structure="fixed-limit", max_raises=1)
    state, _ = act(state, 1, "raise", 100)
    refused("raise_cap_reached", state, 2, "raise", 150)


def test_pot_limit_raises_without_a_cap_unless_the_table_sets_004s_three():
    def raised(state, times):
        for _ in range(times):
            seat = state.to_act
            state, _ = act(state, seat, "raise", legal(state, seat)["raise"]["min"])
        return state

    state = raised(holdem([10**9] * 3, button=1, structure="pot-limit")[0], 6)
    assert "raise" in legal(state, state.to_act)
    capped = raised(holdem([10**9] * 3, button=1, structure="pot-limit", max_raises=3)[0], 3)
    assert "raise" not in legal(capped, capped.to_act)
    refused("raise_cap_reached", capped, capped.to_act, "raise", 10**6)


def test_an_option_set_fills_defaults_and_an_explicit_option_wins():
    casino = start([1000] * 3, game="five-card-draw", rules="casino")[0].options
    assert (casino["structure"], casino["ante"], casino["big_blind"], casino["max_discard"]) == (
        "fixed-limit", 0, 50, 5)
    mine = start([1000] * 3, game="five-card-draw", rules="casino", structure="no-limit",
                 big_blind=20)[0].options
    assert (mine["structure"], mine["big_blind"], mine["small_blind"], mine["max_raises"]) == (
        "no-limit", 20, 10, None)


def test_a_call_that_would_need_more_bought_than_a_buy_in_names_is_not_offered():
    """All bets covered: a short player buys the chips to call, at most 10**9 at once (as a
    buy-in names); a bet that would need more leaves them only the fold."""
    state, _ = holdem([3 * 10**9, 500], button=1, all_in="forbidden", bet_unit=1)
    first = state.to_act
    other = 2 if first == 1 else 1
    big = first if state.seat(first).stack > 10**9 else other
    while state.to_act != big:
        state, _ = act(state, state.to_act, "call" if "call" in legal(state, state.to_act)
                       else "check")
    top = legal(state, big)[next(k for k in ("raise", "bet") if k in legal(state, big))]
    assert top["max"] == 3 * 10**9
    state, _ = act(state, big, "raise" if "raise" in legal(state, big) else "bet", top["max"])
    small = other if big == first else first
    assert engine.legal_actions(state, small) == [{"type": "fold"}]
    with pytest.raises(DomainError):
        act(state, small, "add_chips", 3 * 10**9 - 500)


def test_a_no_limit_stack_past_10_to_the_15_may_bet_it_all():
    state, _ = holdem([5 * 10**15, 5 * 10**15], button=1, bet_unit=1)
    seat = state.to_act
    assert legal(state, seat)["raise"]["max"] == 5 * 10**15
    state, _ = act(state, seat, "raise", 5 * 10**15)
    assert state.seat(seat).stack == 0


@pytest.mark.parametrize("game, given, named", [
    ("seven-card-stud", {"bring_in": 30}, "bring_in"),  # above the small bet of 20
    ("seven-card-stud", {"bring_in": 20}, "bring_in"),  # a bring-in is less than a full bet
    ("five-card-stud", {"structure": "no-limit", "bring_in": 50, "min_bet": 50}, "bring_in"),
    ("texas-holdem", {"structure": "spread-limit", "min_bet": 500, "small_bet": 100},
     "min_bet"),
    ("texas-holdem", {"structure": "fixed-limit", "small_bet": 100, "big_bet": 10},
     "small_bet"),
    ("omaha", {"small_blind": 60, "big_blind": 50}, "small_blind")])
def test_amounts_that_contradict_each_other_make_no_table(game, given, named):
    with pytest.raises(DomainError) as error:
        registry.game(game).resolve_options(given)
    assert error.value.code == "invalid_option" and named in error.value.message


@pytest.mark.parametrize("game, given", [
    ("seven-card-stud", {}), ("seven-card-stud", {"rules": "club"}),
    ("seven-card-stud", {"bring_in": 19}), ("five-card-stud", {"bring_in": 0}),
    ("texas-holdem", {"structure": "no-limit", "min_bet": 500}),  # small_bet is not used
    ("texas-holdem", {"structure": "spread-limit", "min_bet": 100, "small_bet": 100}),
    ("texas-holdem", {"structure": "spread-limit", "min_bet": 150, "small_bet": 100,
                      "big_bet_round": 1}),  # every round at the upper limit: big_bet 200
    ("five-card-draw", {"small_blind": 2}),  # a small blind alone
    ("five-card-draw", {"rules": "club"}),
    ("five-card-stud", {"structure": "club"}),  # its bring-in's default is below min_bet
    ("seven-card-stud", {"structure": "club"})])
def test_amounts_that_agree_make_a_table(game, given):
    options = registry.game(game).resolve_options(given)
    assert all(options[name] == value for name, value in given.items() if name != "rules")


def test_a_dead_small_blind_is_not_posted_and_the_first_round_opens_left_of_the_big_blind():
    """The table's dead button (``domain.table``): seat 3 left after posting the big blind,
    so its seat holds the small blind, which nobody posts; seat 4 posts the big one."""
    state = engine.initial_state({"game": "texas-holdem",
                                  "options": options("texas-holdem", structure="fixed-limit")})
    seats = tuple({"seat": n, "name": f"p{n}", "stack": 1000, "player_id": f"id{n}"}
                  for n in (1, 2, 4))
    events = engine.decide(state, StartHand(hand_no=1, button=2, seats=seats,
                                            server_seed="ab" * 32, client_seeds={},
                                            blinds=(3, 4)))
    state = reduce(engine.evolve, events, state)
    assert [(e.seat, e.blind) for e in events if isinstance(e, BlindPosted)] == [(4, "big")]
    assert state.to_act == 1 and legal(state, 1)["call"]["amount"] == 50
    for seat in (1, 2):
        state, _ = act(state, seat, "call")
    state, _ = act(state, 4, "check")
    assert len(state.board) == 3 and state.to_act == 4  # left of the button
