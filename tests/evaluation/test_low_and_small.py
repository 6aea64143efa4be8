"""Lows, Omaha, three- and two-card hands, the batch path, and invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.cards import JOKERS, PINOCHLE_48, PINOCHLE_64, STANDARD_DECK, parse_cards, shuffled, with_jokers
from domain.evaluation import (
    HandValue, high, low_27, low_a5, of_ranks, omaha_high, omaha_low8, three_card, two_card,
)
from domain.evaluation.batch import as_indices, high_batch
from domain.evaluation.wild import best_key


def p(text):
    return parse_cards(text)


def test_ace_to_five():
    wheel, eight = low_a5(p("5c 4d 3h 2s Ac")), low_a5(p("8c 6d 4h 2s Ac"))
    assert wheel.describe() == "5-4-3-2-A low" and eight.describe() == "8-6-4-2-A low"
    assert wheel > eight > low_a5(p("8c 7d 4h 2s Ac")) > low_a5(p("9c 2d 3h 4s 5c"))
    assert low_a5(p("Ac 2c 3c 4c 5c")) == wheel  # straights and flushes are ignored
    assert low_a5(p("Kc Kd 2h 3s 4c")).category == "one_pair"
    assert low_a5(p("Kc Qd Jh Ts 9c")) > low_a5(p("2c 2d 3h 4s 5c"))
    assert low_a5(p("Ac Ad 2c 2d 3c")).describe() == "Two pair, deuces and aces, three kicker (2-2-A-A-3)"
    assert low_a5(p("9c 6d 4h 2s Ac"), qualifier=8) is None
    assert low_a5(p("8c 6d 4h 2s Ac Kd 9h"), qualifier=8).describe() == "8-6-4-2-A low"
    assert low_a5(p("8c 8d 4h 2s Ac"), qualifier=8) is None
    joker = low_a5(p("Kc 6d 4h 2s Xj"))
    assert joker.describe() == "K-6-4-2-A low" and joker.plays_as[-1].code == "As"


def test_deuce_to_seven_001():
    best = low_27(p("7c 5d 4h 3s 2c"))
    assert best.describe() == "7-5-4-3-2 low"
    assert best > low_27(p("7c 6d 4h 3s 2c")) > low_27(p("8c 5d 4h 3s 2c"))
    assert low_27(p("Kc 5d 4h 3s 2c")) > low_27(p("Ac 5d 4h 3s 2c"))  # the ace is high
    assert low_27(p("Ac 5d 4h 3s 2c")).category == "high_card"
    assert low_27(p("7c 5c 4c 3c 2c")).category == "flush"  # a flush counts against
    assert low_27(p("6c 5d 4h 3s 2c")).category == "straight"
    assert low_27(p("Ac 5d 4h 3s 2c")) > low_27(p("2d 2c 4h 3s 5c")) > low_27(p("6c 5d 4h 3s 2c"))


def test_omaha_two_plus_three():
    assert omaha_high(p("Ac Ad Ks Qs"), p("Js Ts 2s 3c 4d")).category == "flush"
    assert omaha_high(p("As 2d 7h 8c"), p("Ks Qs Js 9s 3s")).category == "high_card"  # one spade only
    assert omaha_high(p("Ac Kd 7h 8c"), p("Ah Ad As 9s 3s")).describe() == "Four of a kind, aces, king kicker"
    assert omaha_high(p("Ac Kd 7h 8c"), p("Ah Ad 9s 3s 2c")).describe() == "Three of a kind, aces, king-nine kickers"
    assert omaha_low8(p("Ac 2d Kh Kc"), p("3s 4s 5d Ts Js")).describe() == "5-4-3-2-A low"
    assert omaha_low8(p("Ac Kd Kh Kc"), p("3s 4s 5d 2s Js")) is None  # needs two low hole cards
    assert omaha_low8(p("Ac 2d 3h 4c"), p("Ks Qs 5d 9s Js")) is None  # needs three low board cards


def test_three_card_000():
    order = ["Ac Kc Qc", "3d 2d Ad", "9c 9d 9h", "2c 2d 2h", "Ah Kd Qc", "3h 2d As",
             "Kc 8c 2c", "Ac Ad 5h", "Ac Kd 9h", "5c 3d 2h"]
    values = [three_card(p(x)) for x in order]
    assert all(a > b for a, b in zip(values, values[1:]))
    assert values[1].describe() == "Straight flush, three high"
    assert [c.code for c in values[5].cards] == ["3h", "2d", "As"]
    assert three_card(p("Kc Kd Ah")) > three_card(p("Ks Kh Qc"))


def test_two_card_guts_with_threes_wild_000():
    threes = of_ranks(3)
    assert three_card(p("3c 3d 3h"), wild=threes).describe() == "Straight flush, ace high"
    assert three_card(p("3c 9d 9h"), wild=threes).describe() == "Three of a kind, nines"
    assert three_card(p("3c Kd Qd"), wild=threes).describe() == "Straight flush, ace high"


def test_double_guts_001():
    assert two_card(p("Ac Ad 5h")).describe() == "Pair of aces"
    assert two_card(p("Ac Ad 5h")) > two_card(p("Kc Kd Ah")) > two_card(p("Ac Kd Qh"))
    lows = [two_card(p(x), side="low") for x in ("2c 3d Kh", "2c 4d Kh", "3c 4d Kh", "2c 5d Kh")]
    assert lows[0].describe() == "3-2"
    assert all(a > b for a, b in zip(lows, lows[1:]))
    assert two_card(p("9c 9d 9h"), side="low").category == "one_pair"


def test_families_do_not_compare():
    with pytest.raises(TypeError):
        _ = high(p("Ac Kd Qh Js 9c")) < low_27(p("7c 5d 4h 3s 2c"))
    assert high(p("Ac Kd Qh Js 9c")) != low_27(p("Ac Kd Qh Js 9c"))


def test_decks():
    assert len(with_jokers(2)) == 54 and {c.code for c in JOKERS} == {"Xj", "Yj"}
    assert len(PINOCHLE_48) == 48 and len(set(PINOCHLE_48)) == 24
    assert len(PINOCHLE_64) == 64 and min(c.rank for c in PINOCHLE_64) == 7
    assert sorted(shuffled(PINOCHLE_48, "ab" * 16), key=lambda c: c.index) == sorted(PINOCHLE_48, key=lambda c: c.index)


def test_batch_agrees_and_validates():
    rng = np.random.default_rng(5)
    for k in range(1, 8):
        idx = np.argsort(rng.random((3000, 52)), axis=1)[:, :k]
        expected = [high([STANDARD_DECK[i] for i in row]).rank_key for row in idx.tolist()]
        assert high_batch(idx).tolist() == expected
    assert high_batch(as_indices([p("As Ks Qs Js Ts")])).tolist() == [high(p("As Ks Qs Js Ts")).rank_key]
    with pytest.raises(ValueError):
        high_batch(np.zeros((2, 8), dtype=int))
    with pytest.raises(ValueError):
        high_batch(np.array([[52, 1, 2, 3, 4]]))


hands = st.lists(st.sampled_from(STANDARD_DECK), min_size=1, max_size=10, unique=True)


@settings(max_examples=300, deadline=None)
@given(hands, st.randoms(use_true_random=False))
def test_order_ignores_card_order_and_suits(cards, rnd):
    value = high(cards)
    rnd.shuffle(cards)
    assert high(cards) == value
    relabel = dict(zip("cdhs", rnd.sample("cdhs", 4)))
    renamed = [parse_cards([c.code[0] + relabel[c.suit]])[0] for c in cards]
    assert high(renamed) == value and hash(high(renamed)) == hash(value)


@settings(max_examples=300, deadline=None)
@given(hands)
def test_value_is_made_of_its_cards(cards):
    value = high(cards)
    assert len(value.cards) == min(5, len(cards)) and set(value.cards) <= set(cards)
    assert high(list(value.cards)) == value
    assert isinstance(value, HandValue) and value.to_dict()["description"] == value.describe()


@settings(max_examples=300, deadline=None)
@given(hands, hands)
def test_more_cards_never_hurt(cards, extra):
    more = cards + [c for c in extra if c not in cards]
    if len(more) <= 10:
        assert high(more) >= high(cards)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([c for c in STANDARD_DECK if c.rank != 2]), min_size=1, max_size=8, unique=True),
       st.integers(0, 2))
def test_a_wild_card_is_at_least_any_card(naturals, wilds):
    """A hand with a wild card judges at least as well as with any card in its place."""
    deuces = [c for c in STANDARD_DECK if c.rank == 2][:wilds]
    value = high(naturals + deuces, wild=of_ranks(2))
    assert value.rank_key == best_key(naturals, wilds, 0, False)
    for stand_in in STANDARD_DECK[::7]:
        assert value >= high(naturals + [stand_in] * wilds) if wilds else True
