"""High hands: the worked examples of rule books 000, 001, 002 and 004."""

import pytest

from domain.cards import parse_cards
from domain.evaluation import HIGH_CATEGORIES, HandValue, high


def h(text: str, **wild) -> HandValue:
    return high(parse_cards(text), **wild)


def ranked(*hands: str) -> None:
    """Each hand beats the next one."""
    values = [h(x) for x in hands]
    for better, worse in zip(values, values[1:]):
        assert better > worse, (better, worse)


@pytest.mark.parametrize("text, category, description", [
    ("As Ks Qs Js Ts", "straight_flush", "Royal flush"),
    ("5d 4d 3d 2d Ad", "straight_flush", "Straight flush, five high"),
    ("Jh Th 9h 8h 7h", "straight_flush", "Straight flush, jack high"),
    ("Qc Qd Qh Qs 3c", "four_of_a_kind", "Four of a kind, queens, three kicker"),
    ("7c 7d 7h Ts Tc", "full_house", "Full house, sevens over tens"),
    ("Kc Kd Kh 7s 7d", "full_house", "Full house, kings over sevens"),
    ("Kh Jh 9h 3h 2h", "flush", "Flush, king-jack-nine-three-deuce"),
    ("Qc Jd Th 9s 8c", "straight", "Straight, queen high"),
    ("5c 4d 3h 2s Ad", "straight", "Straight, five high"),
    ("Ac Kd Qh Js Tc", "straight", "Straight, ace high"),
    ("5c 5d 5h 3s 2c", "three_of_a_kind", "Three of a kind, fives, three-deuce kickers"),
    ("Jc Jd 2h 2s 4c", "two_pair", "Two pair, jacks and deuces, four kicker"),
    ("6c 6d 4h 3s 2c", "one_pair", "One pair, sixes, four-three-deuce kickers"),
    ("Ac Jd 9h 5s 3c", "high_card", "High card, ace-jack-nine-five-three"),
    ("7c 5d 4h 3s 2c", "high_card", "High card, seven-five-four-three-deuce"),
])
def test_categories_and_descriptions(text, category, description):
    value = h(text)
    assert value.category == category
    assert value.describe() == description
    assert category in HIGH_CATEGORIES


def test_category_order_000():
    ranked("As Ks Qs Js Ts", "9c 8c 7c 6c 5c", "5d 4d 3d 2d Ad", "3c 3d 3h 3s Kc",
           "9c 9d 9h 4s 4c", "Kh Jh 9h 3h 2h", "Ac Kd Qh Js Tc", "5c 4d 3h 2s Ad",
           "Ac Ad Ah Ks Qc", "Ac Ad Kh Ks Qc", "Ac Ad Kh Qs Jc", "Ac Kd Qh Js 9c",
           "7c 5d 4h 3s 2c")


def test_worked_examples_000():
    ranked("4c 4d 4h 4s 2c", "3c 3d 3h 3s Ac")                      # four of a kind
    ranked("9c 9d 9h 4s 4c", "8c 8d 8h As Ac")                      # full house
    ranked("Kc Jc 9c 3c 2c", "Kd Jd 7d 6d 5d")                      # flush
    ranked("5c 5d 5h 3s 2c", "4c 4d 4h Ks 5c", "4d 4h 4s Qs 9c", "4c 4d 4s Qd 8c")
    ranked("Jc Jd 2h 2s 4c", "Tc Td 9h 9s 8c")                      # two pair
    ranked("8c 8d 6h 6s 3c", "8h 8s 5h 5s Kc")
    ranked("Qc Qd 5h 5s 8c", "Qh Qs 5c 5d 4c")
    ranked("6c 6d 4h 3s 2c", "5c 5d Ah Ks Qc")                      # one pair
    ranked("Jc Jd Ah 9s 3c", "Jh Js Ac 8s 7c")
    ranked("Ac Jd 9h 5s 3c", "Ad Th 9s 6s 4c")                      # high card


def test_straights_do_not_turn_the_corner():
    assert h("4c 3d 2h As Kc").category == "high_card"
    assert h("2c Ad Kh Qs Jc").category == "high_card"


def test_suits_never_break_ties():
    assert h("As Ks Qs Js Ts") == h("Ah Kh Qh Jh Th")
    assert hash(h("Kc Jc 9c 3c 2c")) == hash(h("Kd Jd 9d 3d 2d"))
    assert h("Ac Ad Kh Qs Jc") == h("Ah As Kc Qd Jd")


def test_board_quads_kicker_000():
    """J-J-J-J-9 on the board: K-7 beats Q-10; 8-2 and 6-5 split; A-2 and A-K split."""
    board = "Jc Jd Jh Js 9c"
    with_hole = lambda hole: h(f"{board} {hole}")  # noqa: E731
    assert with_hole("Kd 7h") > with_hole("Qd Th")
    assert with_hole("8d 2h") == with_hole("6d 5h")
    assert with_hole("Ad 2h") == with_hole("Ah Kd")


def test_incomplete_hands_000():
    ranked("8c 8d Kh", "8h 8s 6c 2d", "8c 8d 6h")
    ranked("Tc", "9c 5d", "9d 3h 2s", "9h 3c", "9s")
    assert h("8c 8d 8h 8s").category == "four_of_a_kind"
    assert h("8c 8d 3h 3s").category == "two_pair"
    assert h("9c Tc Jc Qc").category == "high_card"  # no straight or flush under five cards


def test_best_five_of_seven_and_more():
    value = h("Ac Kc 9c 4c 3c 3d 3h")
    assert value.category == "flush"
    assert [c.code for c in value.cards] == ["Ac", "Kc", "9c", "4c", "3c"]
    # Baseball: more than seven cards
    value = h("Jc Jd Qh 2s 2c 4c 9h 9d Qd")
    assert value.describe() == "Two pair, queens and jacks, nine kicker"
    assert len(value.cards) == 5


def test_cards_most_significant_first():
    value = h("7d 2c Kc 7s Kh Kd")
    assert [c.code for c in value.cards] == ["Kc", "Kh", "Kd", "7d", "7s"]
    assert [c.code for c in h("Ad 2s 3h 4c 5c").cards] == ["5c", "4c", "3h", "2s", "Ad"]


def test_json_friendly():
    assert h("Kc Kd Kh 7s 7d 2c").to_dict() == {
        "category": "full_house",
        "cards": ["Kc", "Kd", "Kh", "7s", "7d"],
        "plays_as": ["Kc", "Kd", "Kh", "7s", "7d"],
        "description": "Full house, kings over sevens",
    }


def test_value_is_immutable_and_hashable():
    value = h("As Ks Qs Js Ts")
    with pytest.raises(AttributeError):
        value.rank_key = 0
    assert len({value, h("Ah Kh Qh Jh Th"), h("2c 3c 4c 5c 7d")}) == 2
    assert sorted([h("2c 3c 4c 5c 7d"), value, h("Ac Ad Kh Qs Jc")])[-1] is value


@pytest.mark.parametrize("count", [0, 11])
def test_hand_size(count):
    from domain.cards import STANDARD_DECK
    with pytest.raises(ValueError):
        high(STANDARD_DECK[:count])


def test_lowest_high_card_002():
    """002: "The lowest possible high card is seven-high"."""
    lowest = h("7c 5d 4h 3s 2c")
    assert lowest.category == "high_card"
    assert h("7c 6d 4h 3s 2c") > lowest
    assert h("6c 5d 4h 3s 2c").category == "straight"


def test_five_of_a_kind_examples_004():
    """004: "four 10s and a wild card or two queens and three wild cards"."""
    from domain.cards import JOKERS
    assert h("Tc Td Th Ts Xj", wild=JOKERS).describe() == "Five of a kind, tens"
    deuces = [c for c in parse_cards("2c 2d 2h 2s")]
    assert h("Qc Qd 2c 2d 2h", wild=deuces).describe() == "Five of a kind, queens"
    assert h("Qc Qd 2c 2d 2h", wild=deuces) > h("Tc Td Th Ts Xj", wild=JOKERS)


def test_royal_flushes_are_equal_001():
    assert len({h(f"A{s} K{s} Q{s} J{s} T{s}") for s in "cdhs"}) == 1


def test_wild_argument_without_wild_cards_is_natural():
    from domain.evaluation import of_ranks
    assert h("Ac Kd Qh Js 9c", wild=of_ranks(2)) == h("Ac Kd Qh Js 9c")
