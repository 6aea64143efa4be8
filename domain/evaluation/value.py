"""`HandValue`: the judged worth of a hand, for every ranking family.

Rule books: 000 ("Hand Ranking", "Incomplete Hands"), 001 ("Order of Hands").

A value is one integer, ``rank_key``, plus the cards that make it. In every
family a greater key is a better hand ("max() is the winner", lows included),
and two values are equal exactly when the hands tie. The key layout is

    bits 32..   family (0 high, 1 ace-to-five low, 2 deuce-to-seven low,
                3 three-card, 4 two-card high, 5 two-card low)
    bits 20..23 category (high family: 0 high card .. 9 five of a kind)
    bits 0..19  five rank nibbles, most significant first; 2..14 (ace 14),
                0 for a card that is missing from an incomplete hand

so a high-family key is the same small integer `high_batch` returns. Low
families store the complement of a high-style key (``_LOW_FLIP - key``) so
that greater still means better; `describe` undoes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.cards import Card

HIGH, LOW_A5, LOW_27, THREE_CARD, TWO_CARD_HIGH, TWO_CARD_LOW = range(6)
FAMILY_NAMES = ("high", "low_a5", "low_27", "three_card", "two_card_high", "two_card_low")

HIGH_CATEGORIES = (
    "high_card", "one_pair", "two_pair", "three_of_a_kind", "straight",
    "flush", "full_house", "four_of_a_kind", "straight_flush", "five_of_a_kind",
)
(HIGH_CARD, ONE_PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT,
 FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH, FIVE_OF_A_KIND) = range(10)

_LOW_FLIP = (1 << 24) - 1

SINGULAR = {0: "blank", 1: "ace", 2: "deuce", 3: "three", 4: "four", 5: "five", 6: "six",
            7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen",
            13: "king", 14: "ace"}
PLURAL = {r: ("sixes" if r == 6 else name + "s") for r, name in SINGULAR.items()}
SHORT = {0: "-", 1: "A", 10: "10", 11: "J", 12: "Q", 13: "K", 14: "A",
         **{r: str(r) for r in range(2, 10)}}


def encode(category: int, ranks: Sequence[int], family: int = HIGH) -> int:
    """The key of a hand: category, then up to five ranks (missing ones are 0)."""
    key = category
    for i in range(5):
        key = (key << 4) | (ranks[i] if i < len(ranks) else 0)
    return (family << 32) | key


def decode(key: int) -> tuple[int, int, list[int]]:
    """``(family, category, ranks)`` of a key, low families un-flipped."""
    family, body = key >> 32, key & 0xFFFFFFFF
    if family in (LOW_A5, LOW_27, TWO_CARD_LOW):
        body = _LOW_FLIP - body
    return family, body >> 20, [(body >> s) & 15 for s in (16, 12, 8, 4, 0)]


class Family:
    """How keys of one family are named, described and turned back into cards."""

    def __init__(self, categories: Sequence[str], describe: Callable[[int, list[int]], str],
                 resolve: Callable[[int, tuple[Card, ...]], tuple[Card, ...]] | None):
        self.categories = tuple(categories)
        self.describe = describe
        self.resolve = resolve


FAMILIES: dict[int, Family] = {}


def register_family(family: int, spec: Family) -> None:
    FAMILIES[family] = spec


_new = object.__new__


class HandValue:
    """A judged hand: totally ordered within its family, hashable, immutable.

    ``rank_key`` orders hands (greater is better); ``category`` names the kind
    of hand; ``cards`` are the held cards that make it, most significant first;
    ``plays_as`` says, card by card, what each one stands for (a wild card's
    chosen card, ``None`` for a wild that may not be used under the
    ``wild_limit`` rule; a natural card stands for itself).
    """

    __slots__ = ("rank_key", "_held", "_made")

    def __setattr__(self, name, value):
        raise AttributeError("HandValue is immutable")

    __delattr__ = __setattr__

    def __init__(self, rank_key: int, cards: Sequence[Card], plays_as: Sequence[Card | None] | None = None):
        cards = tuple(cards)
        _set_key(self, rank_key)
        _set_held(self, cards)
        _set_made(self, (cards, cards if plays_as is None else tuple(plays_as)))

    @property
    def family(self) -> str:
        return FAMILY_NAMES[self.rank_key >> 32]

    @property
    def category(self) -> str:
        family, category, _ = decode(self.rank_key)
        return FAMILIES[family].categories[category]

    @property
    def cards(self) -> tuple[Card, ...]:
        return self._resolved()[0]

    @property
    def plays_as(self) -> tuple[Card | None, ...]:
        return self._resolved()[1]

    def _resolved(self) -> tuple[tuple[Card, ...], tuple[Card | None, ...]]:
        try:
            return self._made
        except AttributeError:  # a lazy value: pick the cards now, once
            made = FAMILIES[self.rank_key >> 32].resolve(self.rank_key, self._held)
            _set_made(self, (made, made))
            return self._made

    def describe(self) -> str:
        family, category, ranks = decode(self.rank_key)
        return FAMILIES[family].describe(category, ranks)

    def to_dict(self) -> dict:
        """Plain JSON: category, the cards that make the hand, what each plays as."""
        return {
            "category": self.category,
            "cards": [c.code for c in self.cards],
            "plays_as": [None if c is None else c.code for c in self.plays_as],
            "description": self.describe(),
        }

    def __repr__(self) -> str:
        return f"HandValue({self.describe()!r}, {' '.join(c.code for c in self.cards)})"

    def __hash__(self) -> int:
        return hash(self.rank_key)

    def _key_of(self, other) -> int:
        if not isinstance(other, HandValue):
            return NotImplemented
        if (self.rank_key ^ other.rank_key) >> 32:
            raise TypeError(f"cannot compare a {self.family} hand with a {other.family} hand")
        return other.rank_key

    def __eq__(self, other):
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.rank_key == other.rank_key

    def __lt__(self, other):
        key = self._key_of(other)
        return key if key is NotImplemented else self.rank_key < key

    def __le__(self, other):
        key = self._key_of(other)
        return key if key is NotImplemented else self.rank_key <= key

    def __gt__(self, other):
        key = self._key_of(other)
        return key if key is NotImplemented else self.rank_key > key

    def __ge__(self, other):
        key = self._key_of(other)
        return key if key is NotImplemented else self.rank_key >= key


_set_key = HandValue.rank_key.__set__
_set_held = HandValue._held.__set__
_set_made = HandValue._made.__set__


def lazy_value(rank_key: int, held: tuple[Card, ...]) -> HandValue:
    """A `HandValue` that picks its cards from ``held`` on first use (the fast path)."""
    value = _new(HandValue)
    _set_key(value, rank_key)
    _set_held(value, held)
    return value


def kickers(ranks: Sequence[int]) -> str:
    return "-".join(SINGULAR[r] for r in ranks if r)


def describe_high(category: int, ranks: list[int]) -> str:
    """"Full house, kings over sevens", "Two pair, jacks and deuces, four kicker"."""
    r1, r2 = ranks[0], ranks[1]
    if category == FIVE_OF_A_KIND:
        return f"Five of a kind, {PLURAL[r1]}"
    if category == STRAIGHT_FLUSH:
        return "Royal flush" if r1 == 14 else f"Straight flush, {SINGULAR[r1]} high"
    if category == FOUR_OF_A_KIND:
        return f"Four of a kind, {PLURAL[r1]}" + _kick(ranks[1:])
    if category == FULL_HOUSE:
        return f"Full house, {PLURAL[r1]} over {PLURAL[r2]}"
    if category == FLUSH:
        return f"Flush, {kickers(ranks)}"
    if category == STRAIGHT:
        return f"Straight, {SINGULAR[r1]} high"
    if category == THREE_OF_A_KIND:
        return f"Three of a kind, {PLURAL[r1]}" + _kick(ranks[1:])
    if category == TWO_PAIR:
        return f"Two pair, {PLURAL[r1]} and {PLURAL[r2]}" + _kick(ranks[2:])
    if category == ONE_PAIR:
        return f"One pair, {PLURAL[r1]}" + _kick(ranks[1:])
    return f"High card, {kickers(ranks)}"


def _kick(ranks: Sequence[int]) -> str:
    present = [r for r in ranks if r]
    if not present:
        return ""
    return f", {kickers(present)} kicker" + ("s" if len(present) > 1 else "")
