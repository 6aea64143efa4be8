"""Wild cards, the bug and the club limit: worked examples and a brute-force oracle."""

import os
import random

import pytest

from domain.cards import JOKERS, STANDARD_DECK, parse_cards
from domain.evaluation import high
from domain.evaluation.value import decode
from domain.evaluation.wild import ONE_EYED_JACKS, lowest_rank, of_ranks
from . import oracle

DEUCES = of_ranks(2)
KINGS = of_ranks(13)
X1, X2 = JOKERS
ORACLE_HANDS = int(os.environ.get("CARDROOM_ORACLE_HANDS", "150"))


def h(text, **kw):
    return high(parse_cards(text), **kw)


def test_five_of_a_kind_004():
    """Deuces wild: 10-10-2-2-2 is five tens and beats 8-8-8-8-2 (five eights)."""
    tens, eights = h("Tc Td 2c 2d 2h", wild=DEUCES), h("8c 8d 8h 8s 2s", wild=DEUCES)
    assert tens.describe() == "Five of a kind, tens"
    assert eights.describe() == "Five of a kind, eights"
    assert tens > eights
    assert h("Ac Ad Ah As 2c", wild=DEUCES) > tens
    assert eights > h("As Ks Qs Js Ts")  # above a royal flush


def test_kings_and_low_man_000():
    for text, description in [("Ac 3d 3h 7s 9c", "Three of a kind, aces, nine-seven kickers"),
                              ("Qc Td Kh 2s 2c", "Four of a kind, queens, ten kicker")]:
        cards = parse_cards(text)
        value = high(cards, wild=KINGS | lowest_rank(cards, ignoring=KINGS))
        assert value.describe() == description


def test_acey_deucy_one_eyed_jacks_000():
    wild = of_ranks(14, 2) | ONE_EYED_JACKS
    assert h("Jh Js Ac 2d 9h", wild=wild).describe() == "Five of a kind, nines"
    assert h("Jd Qd Kd Tc 2h", wild=wild).category == "straight"
    assert h("Jd Jc Kd 5c 7h", wild=wild).category == "one_pair"  # two-eyed jacks are natural


def test_wild_card_shows_what_it_stands_for():
    value = h("Kh Qh 9h 2c 2d 5s 7d", wild=DEUCES)
    assert value.describe() == "Straight flush, king high"
    assert value.to_dict()["cards"] == ["Kh", "Qh", "2d", "2c", "9h"]
    assert value.to_dict()["plays_as"] == ["Kh", "Qh", "Jh", "Th", "9h"]


def test_a_wild_may_duplicate_a_held_card():
    assert h("Ah 9h 6h 4h 2s", wild=DEUCES).describe() == "Flush, ace-ace-nine-six-four"
    assert h("Ah 9h 6h 4h 2s", wild=DEUCES) > h("Ah Kh Qh Jh 9h")
    assert h("2c", wild=DEUCES).describe() == "High card, ace"
    assert h("2c 2d 2h", wild=DEUCES).describe() == "Three of a kind, aces"


def test_the_bug_004():
    assert h("As Ad Xj Kc Kd", bug=True).describe() == "Full house, aces over kings"
    assert h("Kc Kd Xj 7h 4s", bug=True).describe() == "One pair, kings, ace-seven-four kickers"
    assert h("9c Td Xj Qh Ks", bug=True).describe() == "Straight, king high"
    assert h("9c Tc Xj Qc Kc", bug=True).describe() == "Straight flush, king high"
    assert h("9c 3c Xj Qc Kc", bug=True).describe() == "Flush, ace-king-queen-nine-three"
    assert h("Ac Ad Ah As Xj", bug=True).describe() == "Five of a kind, aces"
    assert h("Kc Kd Kh Ks Xj", bug=True).describe() == "Four of a kind, kings, ace kicker"
    assert h("Kc Kd Kh Ks Xj", wild=JOKERS).describe() == "Five of a kind, kings"


def test_a_joker_must_be_wild_or_the_bug():
    with pytest.raises(ValueError):
        high(parse_cards("Xj Ac Kd"))
    with pytest.raises(ValueError):
        high(parse_cards("Xj Ac Kd"), wild=DEUCES)


def test_club_wild_limit_001():
    limit = {"wild": DEUCES, "wild_limit": "naturals"}
    two_pair = h("Ah Kh 2c 2d 2s", **limit)
    assert two_pair.category == "two_pair"
    assert decode(two_pair.rank_key)[2] == [14, 13, 0, 0, 0]  # the third wild is dead
    assert two_pair.plays_as[-1] is None
    assert h("Ah Kh Qh 2d 2s", **limit).describe() == "Royal flush"
    assert h("Ah Kh 2c 2d 2s", wild=DEUCES).describe() == "Royal flush"  # without the limit
    assert h("Tc Td 2c 2d 2h", **limit).describe() == "Four of a kind, tens"
    assert h("2c 2d 2h 2s", **limit).category == "high_card"


def _random_hand(rng, size, wilds):
    deck = [c for c in STANDARD_DECK if c.rank != 2]
    return rng.sample(deck, size - wilds) + rng.sample(sorted(DEUCES, key=lambda c: c.index), wilds)


def _ours(value):
    family, category, ranks = decode(value.rank_key)
    return category, tuple(ranks)


@pytest.mark.parametrize("wilds", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", ["wild", "limit", "bug"])
def test_against_brute_force(wilds, mode):
    """Random hands of one to ten cards with 1..4 wild cards (or bugs) agree with
    substituting every card for every wild card and keeping the best."""
    rng = random.Random(f"{mode}-{wilds}")
    count = ORACLE_HANDS if wilds <= 2 else ORACLE_HANDS // 3
    for _ in range(count):
        size = rng.randint(max(wilds, 1), 7 if wilds <= 2 else 6)
        if mode == "bug":
            if wilds > 2:
                continue
            naturals = rng.sample(STANDARD_DECK, size - wilds)
            value = high(naturals + list(JOKERS[:wilds]), bug=True)
            expected = oracle.best(naturals, bugs=wilds)
        else:
            cards = _random_hand(rng, size, wilds)
            limited = mode == "limit"
            value = high(cards, wild=DEUCES, wild_limit="naturals" if limited else None)
            expected = oracle.best(cards[: size - wilds], wilds=wilds, limited=limited)
        assert _ours(value) == expected, (cards if mode != "bug" else naturals, value)
        assert len(value.cards) == min(5, size)
