"""Three-card hands (Two Card Guts with a Bump) and two-card hands (Double-Guts).

Rule books: 000 ("3 Card Poker Hand Ranking": straight flush > three of a
kind > straight > flush > pair > high card; the ace is high or low, so A-K-Q
is the best straight and 3-2-A a three-high one; suits never break ties;
"Two Card Guts with a Bump – 3s Wild"), 001 (Double-Guts: the best pair of
cards, a pair of aces highest, or the worst, 3-2 lowest, then 4-2, then 4-3;
"Cards Speak" does not apply, the player declares high or low).

`three_card` takes three or more cards (the best three play) and wild cards,
read as in `domain.evaluation.wild` (any card, a duplicate included; in a
flush a wild card is an ace). `two_card` takes two or more cards and keeps the
best (``side="high"``) or the worst (``side="low"``) two, aces high; a pair
beats any two unpaired cards, which compare high card first.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import combinations

from domain.cards import Card, parse_card
from domain.evaluation import value as v
from domain.evaluation.value import HandValue

THREE_CARD_CATEGORIES = ("high_card", "one_pair", "flush", "straight", "three_of_a_kind", "straight_flush")
_HIGH, _PAIR, _FLUSH, _STRAIGHT, _TRIPS, _STRAIGHT_FLUSH = range(6)
TWO_CARD_CATEGORIES = ("high_card", "one_pair")
_FLIP = (1 << 24) - 1
_TOPS = range(14, 2, -1)  # a three-card straight's top card; 3 is 3-2-A


def three_card(cards: Sequence[Card], *, wild: Collection[Card] = ()) -> HandValue:
    """The best three-card hand of three or more cards."""
    cards = tuple(cards)
    if len(cards) < 3:
        raise ValueError(f"a three-card hand needs three cards, not {len(cards)}")
    best = None
    for three in combinations(cards, 3):
        wilds = [c for c in three if c in wild or c.suit == "j"]
        naturals = [c for c in three if c not in wilds]
        key, plays = _three(naturals, len(wilds))
        if best is None or key > best[0]:
            best = (key, naturals, wilds, plays)
    key, naturals, wilds, plays = best
    return HandValue((v.THREE_CARD << 32) | key, *_assign(naturals, wilds, plays))


def two_card(cards: Sequence[Card], *, side: str = "high") -> HandValue:
    """The best (``side="high"``) or worst (``side="low"``) two of two or more cards."""
    if side not in ("high", "low"):
        raise ValueError(f"side is 'high' or 'low', not {side!r}")
    cards = tuple(cards)
    if len(cards) < 2:
        raise ValueError(f"a two-card hand needs two cards, not {len(cards)}")
    pick = max if side == "high" else min
    two = pick(combinations(cards, 2), key=_two_key)
    two = tuple(sorted(two, key=lambda c: -c.rank))
    if side == "high":
        return HandValue((v.TWO_CARD_HIGH << 32) | _two_key(two), two)
    return HandValue((v.TWO_CARD_LOW << 32) | (_FLIP - _two_key(two)), two)


def _two_key(two: Sequence[Card]) -> int:
    a, b = sorted((two[0].rank, two[1].rank), reverse=True)
    return v.encode(_PAIR, [a]) if a == b else v.encode(_HIGH, [a, b])


def _three(naturals: list[Card], w: int) -> tuple[int, list[Card]]:
    """The best key of these naturals and ``w`` wild cards, and the three cards as played."""
    ranks = [c.rank for c in naturals]
    suits = {c.suit for c in naturals}
    one_suit = len(suits) <= 1
    suit = next(iter(suits), "s")
    for top in _TOPS:
        window = [3, 2, 14] if top == 3 else [top, top - 1, top - 2]
        if len(set(ranks) & set(window)) + w >= 3 and len(set(ranks)) == len(ranks):
            if one_suit:
                return v.encode(_STRAIGHT_FLUSH, [top]), _cards(window, suit)
            break
    for r in range(14, 1, -1):
        if ranks.count(r) + w >= 3:
            return v.encode(_TRIPS, [r]), _cards([r] * 3, suit, mixed=True)
    for top in _TOPS:
        window = [3, 2, 14] if top == 3 else [top, top - 1, top - 2]
        if len(set(ranks) & set(window)) + w >= 3 and len(set(ranks)) == len(ranks):
            return v.encode(_STRAIGHT, [top]), _cards(window, suit, mixed=True)
    if one_suit:
        flush = sorted([14] * w + ranks, reverse=True)
        return v.encode(_FLUSH, flush), _cards(flush, suit)
    for r in range(14, 1, -1):
        if ranks.count(r) + w >= 2:
            rest = [x for x in ranks if x != r]
            return v.encode(_PAIR, [r] + rest), _cards([r, r] + rest, suit, mixed=True)
    high = sorted(ranks, reverse=True)
    return v.encode(_HIGH, high), _cards(high, suit, mixed=True)


def _cards(ranks: Sequence[int], suit: str, mixed: bool = False) -> list[Card]:
    """The cards ``ranks`` stand for: of ``suit``, or (``mixed``) of any suits."""
    suits = "shdc" if mixed else suit * 3
    return [parse_card("23456789TJQKA"[r - 2] + s) for r, s in zip(ranks, suits)]


def _assign(naturals: list[Card], wilds: list[Card], plays: list[Card]):
    """The held cards in the order they play, and what each stands for."""
    free, spare = list(naturals), list(wilds)
    made, shown = [], []
    for p in plays:
        match = next((c for c in free if c.rank == p.rank), None)
        if match is None:
            made.append(spare.pop())
            shown.append(p)
        else:
            free.remove(match)
            made.append(match)
            shown.append(match)
    return made, shown


def describe_three(category: int, ranks: list[int]) -> str:
    name = THREE_CARD_CATEGORIES[category].replace("_", " ").capitalize()
    if category in (_STRAIGHT, _STRAIGHT_FLUSH):
        return f"{name}, {v.SINGULAR[ranks[0]]} high"
    if category == _TRIPS:
        return f"Three of a kind, {v.PLURAL[ranks[0]]}"
    if category == _PAIR:
        return f"One pair, {v.PLURAL[ranks[0]]}, {v.SINGULAR[ranks[1]]} kicker"
    return f"{name}, {v.kickers(ranks)}"


def describe_two(category: int, ranks: list[int]) -> str:
    if category == _PAIR:
        return f"Pair of {v.PLURAL[ranks[0]]}"
    return f"{v.SHORT[ranks[0]]}-{v.SHORT[ranks[1]]}"


v.register_family(v.THREE_CARD, v.Family(THREE_CARD_CATEGORIES, describe_three, None))
v.register_family(v.TWO_CARD_HIGH, v.Family(TWO_CARD_CATEGORIES, describe_two, None))
v.register_family(v.TWO_CARD_LOW, v.Family(TWO_CARD_CATEGORIES, describe_two, None))
