"""Five Card Draw under the house rules of rule book 000: limits, raise cap, draw, pots."""

from dataclasses import replace
from functools import reduce

import pytest

from domain.commands import Showdown
from domain.errors import DomainError
from domain.fairness import deck_order
from domain.events import (BetReturned, CardsDealt, CardsDrawn, HandEnded, PotAwarded,
                           ShowdownEvaluated)
from domain.poker import engine
from domain.views import Viewer, visible_openings
from tests.poker.play import act, start


def refused(code, state, seat, type_, amount=None, cards=()):
    with pytest.raises(DomainError) as error:
        act(state, seat, type_, amount, cards)
    assert error.value.code == code, error.value.message


def test_antes_are_posted_and_five_cards_dealt_one_at_a_time_from_the_dealers_left():
    state, events = start([1000, 1000, 1000], button=3)
    assert [s.committed for s in state.seats] == [25, 25, 25]
    assert all(len(s.cards) == 5 for s in state.seats)
    deck = deck_order("ab" * 32, {"1": "", "2": "", "3": ""}, 1)
    assert state.deck == tuple(deck[15:])
    assert state.seat(1).cards[0] == deck[0]  # seat 1 is left of the button (3)
    assert state.seat(2).cards[0] == deck[1]
    assert state.seat(1).cards[1] == deck[3]
    assert state.to_act == 1 and state.status == "betting"


def test_first_round_opens_at_exactly_one_unit():
    state, _ = start([1000, 1000, 1000], button=3)
    refused("amount_out_of_range", state, 1, "bet", 50)
    refused("amount_out_of_range", state, 1, "bet", 10)
    state, _ = act(state, 1, "bet", 25)
    assert state.current_bet == 25


def test_a_call_names_no_amount_or_the_one_it_is_to():
    state, _ = start([1000, 1000, 1000], button=3)
    state, _ = act(state, 1, "bet", 25)
    refused("amount_out_of_range", state, 2, "call", 50)  # not taken as the call to 25
    refused("amount_out_of_range", state, 2, "call", 0)
    state, _ = act(state, 2, "call", 25)
    state, _ = act(state, 3, "call")
    assert [s.committed for s in state.seats] == [50, 50, 50]


def test_example_a_of_000_each_player_has_125_in_after_round_one():
    state, _ = start([1000] * 4, button=4)
    state, _ = act(state, 1, "bet", 25)
    state, _ = act(state, 2, "raise", 50)
    state, _ = act(state, 3, "raise", 75)
    state, _ = act(state, 4, "raise", 100)
    refused("raise_cap_reached", state, 1, "raise", 125)
    for seat in (1, 2, 3):
        state, _ = act(state, seat, "call")
    assert [s.committed for s in state.seats] == [125] * 4
    assert state.status == "drawing" and state.pot == 500


def test_fourth_raise_is_refused_in_house_limit():
    state, _ = start([1000, 1000], button=2)
    state, _ = act(state, 1, "bet", 25)
    for seat, to in ((2, 50), (1, 75), (2, 100)):
        state, _ = act(state, seat, "raise", to)
    refused("raise_cap_reached", state, 1, "raise", 125)
    assert "raise" not in [a["type"] for a in engine.legal_actions(state, 1)]


def to_second_round(players=6, **options):
    state, _ = start([2000] * players, button=players, **options)
    for seat in range(1, players + 1):
        state, _ = act(state, seat, "check")
    for seat in range(1, players + 1):
        state, _ = act(state, seat, "draw", cards=())
    assert state.status == "betting" and state.street == 3
    return state


def test_example_b_of_000_second_round_raises_by_25_or_50_and_caps_at_three():
    state = to_second_round()
    state, _ = act(state, 1, "fold")
    state, _ = act(state, 2, "check")
    state, _ = act(state, 3, "bet", 50)
    state, _ = act(state, 4, "call")
    state, _ = act(state, 5, "raise", 75)
    state, _ = act(state, 6, "raise", 125)
    state, _ = act(state, 2, "raise", 175)
    refused("raise_cap_reached", state, 3, "raise", 200)
    state, _ = act(state, 3, "fold")
    for seat in (4, 5, 6):
        state, _ = act(state, seat, "call")
    assert [state.seat(s).committed for s in (2, 4, 5, 6)] == [200] * 4  # 175 + ante 25
    assert state.status == "showdown_pending"


def test_second_round_opens_at_25_or_50_as_example_b_reads_and_raises_by_25_or_50():
    state = to_second_round(2)
    assert {"type": "bet", "min": 25, "max": 50, "step": 25} in engine.legal_actions(state, 1)
    refused("amount_out_of_range", state, 1, "bet", 75)
    refused("amount_out_of_range", state, 1, "bet", 30)
    state, _ = act(state, 1, "bet", 50)
    refused("amount_out_of_range", state, 2, "raise", 125)
    state, _ = act(state, 2, "raise", 75)  # Example B: "raises 25"
    state, _ = act(state, 1, "raise", 125)  # and "raises 50"
    assert state.current_bet == 125


def test_the_second_round_minimum_opening_bet_is_an_option():
    state = to_second_round(2, big_round_min_bet=50)
    refused("amount_out_of_range", state, 1, "bet", 25)
    state, _ = act(state, 1, "bet", 50)
    assert state.current_bet == 50


def test_acting_out_of_turn_is_refused():
    state, _ = start([1000, 1000, 1000], button=3)
    refused("not_your_turn", state, 2, "check")


def test_illegal_moves_have_their_codes():
    state, _ = start([1000, 1000], button=2)
    refused("illegal_action", state, 1, "call")
    refused("illegal_action", state, 1, "raise", 50)
    refused("amount_required", state, 1, "bet")
    refused("illegal_action", state, 1, "draw", cards=())
    state, _ = act(state, 1, "bet", 25)
    refused("illegal_action", state, 2, "check")
    refused("illegal_action", state, 2, "bet", 25)


def test_draw_limits_and_cards_must_be_in_hand():
    state, _ = start([1000, 1000], button=2)
    state, _ = act(state, 1, "check")
    state, _ = act(state, 2, "check")
    hand = state.seat(1).cards
    other = state.seat(2).cards
    refused("too_many_discards", state, 1, "draw", cards=hand[:4])
    refused("card_not_in_hand", state, 1, "draw", cards=other[:1])
    refused("duplicate_cards", state, 1, "draw", cards=(hand[0], hand[0]))
    deck_top = state.deck[:3]
    state, _ = act(state, 1, "draw", cards=hand[1:4])
    assert state.seat(1).cards == (hand[0], *deck_top, hand[4])


def test_all_bets_must_be_covered_by_default():
    state, _ = start([1000, 60], button=2)
    state, _ = act(state, 1, "bet", 25)
    state, _ = act(state, 2, "call")
    state, _ = act(state, 1, "draw", cards=())
    state, _ = act(state, 2, "draw", cards=())
    state, _ = act(state, 1, "bet", 50)
    assert engine.legal_actions(state, 2) == [
        {"type": "add_chips", "min": 40, "max": 10**9 - 60}, {"type": "fold"}]  # 60 in play
    refused("amount_out_of_range", state, 2, "add_chips", 10**9 - 59)  # past a stack's most
    refused("amount_required", state, 2, "add_chips", None)
    refused("insufficient_chips", state, 2, "call")
    refused("insufficient_chips", state, 2, "raise", 75)
    state, _ = act(state, 2, "add_chips", 40)  # "game will be paused to accommodate buying"
    assert state.seat(2).stack == 50 and state.to_act == 2 and state.seat(2).status == "active"
    state, events = act(state, 2, "call")
    assert state.status == "showdown_pending"


def test_side_pots_option_lets_a_short_stack_call_all_in():
    state, _ = start([1000, 1000, 60], button=3, all_in="side_pots")
    state, _ = act(state, 1, "bet", 25)
    state, _ = act(state, 2, "raise", 50)
    state, _ = act(state, 3, "call")  # 35 left: all in for 35
    assert state.seat(3).status == "all_in" and state.seat(3).stack == 0
    state, _ = act(state, 1, "call")
    for seat in (1, 2, 3):
        state, _ = act(state, seat, "draw", cards=())
    state, _ = act(state, 1, "bet", 50)
    state, _ = act(state, 2, "call")
    assert state.status == "showdown_pending"
    events = engine.decide(state, Showdown())
    pots = [e for e in events if isinstance(e, PotAwarded)]
    assert [p.amount for p in pots] == [180, 130]
    assert pots[0].eligible == (1, 2, 3) and pots[1].eligible == (1, 2)


def test_everyone_folding_to_one_player_ends_the_hand_without_showdown():
    state, _ = start([1000, 1000, 1000], button=3)
    state, _ = act(state, 1, "bet", 25)
    state, _ = act(state, 2, "fold")
    state, events = act(state, 3, "fold")
    assert not any(isinstance(e, ShowdownEvaluated) for e in events)
    returned = [e for e in events if isinstance(e, BetReturned)]
    assert [(e.seat, e.amount) for e in returned] == [(1, 25)]  # the uncalled bet
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.reason == "uncontested" and award.shares == {"1": 75}
    assert isinstance(events[-1], HandEnded) and events[-1].net == {"1": 50, "2": -25, "3": -25}
    assert state.status == "ended"


def showdown_with(hands: dict[int, str], button: int, ante=25):
    """Settle a showdown where each seat holds the given cards."""
    state, _ = start([1000] * len(hands), button=button, ante=ante)
    for seat in [s.seat for s in state.from_left_of_button()]:
        state, _ = act(state, seat, "check")
    for seat in [s.seat for s in state.from_left_of_button()]:
        state, _ = act(state, seat, "draw", cards=())
    for seat in [s.seat for s in state.from_left_of_button()]:
        state, _ = act(state, seat, "check")
    state = replace(state, seats=tuple(replace(s, cards=tuple(hands[s.seat].split()))
                                       for s in state.seats))
    return engine.decide(state, Showdown())


def test_tied_hands_split_the_pot_and_the_odd_chip_goes_left_of_the_dealer():
    events = showdown_with({1: "As Kd Qh Jc 9s", 2: "2c 3d 4h 6s 8c", 3: "Ac Kh Qd Js 9h"},
                           button=2, ante=25)
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    # 75 points = 3 chips of 25 between seats 1 and 3: seat 3 is first left of the button (2)
    assert award.winners == (3, 1) and award.shares == {"3": 50, "1": 25}


def test_suits_never_break_ties_and_the_best_hand_wins():
    events = showdown_with({1: "Ts 9s 8s 7s 6s", 2: "Ah Ad Ac As Kd"}, button=2)
    (award,) = [e for e in events if isinstance(e, PotAwarded)]
    assert award.winners == (1,)
    shown = [e for e in events if isinstance(e, ShowdownEvaluated)][0].hands
    assert {h["seat"]: h["category"] for h in shown} == {1: "straight_flush", 2: "four_of_a_kind"}


def drawn_to_showdown(played_before_shown_draws=False):
    """Three players check to the draw, where seat 2 throws its first two cards and the
    others stand pat, then check to the showdown: the hand at its end and every event."""
    state, events = start([1000] * 3, button=1)
    if played_before_shown_draws:
        state = replace(state, options={k: v for k, v in state.options.items()
                                        if k != "shown_draws"})
    for seat, move, cards in ((2, "check", ()), (3, "check", ()), (1, "check", ()),
                              (2, "draw", state.seat(2).cards[:2]), (3, "draw", ()),
                              (1, "draw", ()), (2, "check", ()), (3, "check", ()),
                              (1, "check", ())):
        state, more = act(state, seat, move, cards=cards)
        events += more
    ended = engine.decide(state, Showdown())
    return reduce(engine.evolve, ended, state), events + ended


def opened_to_seat_3(state, events, seat) -> set:
    """What seat 3's player may open of ``seat``'s cards once the hand has ended."""
    viewer = Viewer(role="player", seat=3, player_id="id3")
    return {(type(e).__name__, pointer) for e in events
            if isinstance(e, (CardsDealt, CardsDrawn)) and e.seat == seat
            for pointer in visible_openings(e, viewer, state)}


def test_a_hand_shown_at_the_showdown_does_not_tell_which_of_its_cards_were_drawn():
    """Each draw commits to the seat's whole hand again, sorted, and the showdown opens that
    commitment only: the others learn the hand and how many cards it drew, not which."""
    state, events = drawn_to_showdown()
    (drew,) = [e for e in events if isinstance(e, CardsDrawn) and e.seat == 2]
    assert len(drew.received) == 2 and drew.held == tuple(sorted(state.seat(2).cards))
    assert {h["seat"] for h in state.showdown} == {1, 2, 3}
    assert opened_to_seat_3(state, events, 2) == {("CardsDrawn", f"/held/{i}") for i in range(5)}
    assert opened_to_seat_3(state, events, 1) == {("CardsDrawn", f"/held/{i}") for i in range(5)}


def test_a_hand_played_before_shown_draws_opens_the_cards_dealt_and_drawn():
    """A hand whose options lack ``shown_draws`` commits to nothing again at the draw, and
    its showdown opens, as it did, each card dealt or drawn that a hand shows."""
    state, events = drawn_to_showdown(played_before_shown_draws=True)
    (drew,) = [e for e in events if isinstance(e, CardsDrawn) and e.seat == 2]
    assert drew.held == ()
    assert opened_to_seat_3(state, events, 2) == {
        ("CardsDealt", "/cards/2"), ("CardsDealt", "/cards/3"), ("CardsDealt", "/cards/4"),
        ("CardsDrawn", "/received/0"), ("CardsDrawn", "/received/1")}
