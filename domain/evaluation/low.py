"""Low hands: ace-to-five (with the eight-or-better qualifier) and deuce-to-seven.

Rule books: 001 ("Lowball": the worst hand wins, ace high, straights and
flushes count against, best is 7-5-4-3-2 of more than one suit), 003 (Omaha
Hi/Lo eight-or-better).

- `low_a5`: the ace is the lowest card, straights and flushes are ignored;
  the best five of 5..10 cards, fewest pairs first, then the highest card
  compared first (5-4-3-2-A is the best, the "wheel"). A wild card becomes
  the lowest rank the hand does not hold.
- `low_27`: deuce-to-seven, the exact reverse of the high ranking with the
  ace always high (A-5-4-3-2 is an ace-high no-pair hand, not a straight).

Both return a `HandValue` whose greater is the better low. Categories use
the high names (``high_card`` is a hand without a pair); descriptions read
"8-6-4-2-A low".
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import combinations

from domain.cards import Card, parse_card
from domain.evaluation import value as v
from domain.evaluation.high_hand import expand, natural_key
from domain.evaluation.value import HandValue

_FLIP = (1 << 24) - 1
_WHEEL_STRAIGHT = v.encode(v.STRAIGHT, [5])
_WHEEL_STRAIGHT_FLUSH = v.encode(v.STRAIGHT_FLUSH, [5])
_ACE_FIVE = [14, 5, 4, 3, 2]


def low_a5(cards: Sequence[Card], *, qualifier: int | None = None, wild: Collection[Card] = ()) -> HandValue | None:
    """The best ace-to-five low of 5..10 cards; with ``qualifier=8``, ``None`` unless
    five different ranks of 8 or lower (ace low) are there to make it."""
    cards = _sized(cards)
    wilds = [c for c in cards if c in wild or c.suit == "j"]
    naturals = [c for c in cards if c not in wilds]
    ranks = _best_a5(naturals, len(wilds))
    key = _groups_key(ranks)
    if qualifier is not None and (key >> 20 != v.HIGH_CARD or ranks[0] > qualifier):
        return None
    order = expand(key >> 20, v.decode(key)[2])
    return HandValue((v.LOW_A5 << 32) | (_FLIP - key), *_pick_low(naturals, wilds, order))


def low_27(cards: Sequence[Card]) -> HandValue:
    """The best deuce-to-seven low of 5..10 natural cards."""
    cards = _sized(cards)
    best = min(combinations(cards, 5), key=_key_27)
    return HandValue((v.LOW_27 << 32) | (_FLIP - _key_27(best)), sorted(best, key=_rank_desc))


def _sized(cards: Sequence[Card]) -> tuple[Card, ...]:
    cards = tuple(cards)
    if not 5 <= len(cards) <= 10:
        raise ValueError(f"a low hand has 5 to 10 cards, not {len(cards)}")
    return cards


def _key_27(five: Sequence[Card]) -> int:
    key = natural_key(five)
    if key == _WHEEL_STRAIGHT:
        return v.encode(v.HIGH_CARD, _ACE_FIVE)
    if key == _WHEEL_STRAIGHT_FLUSH:
        return v.encode(v.FLUSH, _ACE_FIVE)
    return key


def _rank_desc(card: Card) -> int:
    return -card.rank


def _low_rank(card: Card) -> int:
    return 1 if card.rank == 14 else card.rank


def _best_a5(naturals: Sequence[Card], wilds: int) -> list[int]:
    """The five ace-low ranks of the best low, highest first."""
    held = {_low_rank(c) for c in naturals}
    ranks, spare = [], wilds
    for r in range(1, 14):
        if r in held:
            ranks.append(r)
        elif spare:
            ranks.append(r)
            spare -= 1
        if len(ranks) == 5:
            return ranks[::-1]
    # Fewer than five different ranks: some must pair. Try every choice of five.
    best = None
    for used in range(min(wilds, 5) + 1):
        for chosen in combinations(naturals, 5 - used):
            have = {_low_rank(c) for c in chosen}
            fill = [r for r in range(1, 14) if r not in have][:used]
            five = sorted([_low_rank(c) for c in chosen] + fill, reverse=True)
            if best is None or _groups_key(five) < _groups_key(best):
                best = five
    return best


def _groups_key(ranks: Sequence[int]) -> int:
    """A high-style key of five ranks by pairs, trips and kickers only (no straights)."""
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    singles = sorted((r for r in ranks if counts[r] == 1), reverse=True)
    if shape[0] >= 5:
        return v.encode(v.FIVE_OF_A_KIND, order[:1])
    if shape[0] == 4:
        return v.encode(v.FOUR_OF_A_KIND, order[:2])
    if shape[:2] == [3, 2]:
        return v.encode(v.FULL_HOUSE, order[:2])
    if shape[0] == 3:
        return v.encode(v.THREE_OF_A_KIND, order[:1] + singles)
    if shape[:2] == [2, 2]:
        return v.encode(v.TWO_PAIR, order[:2] + singles)
    if shape[0] == 2:
        return v.encode(v.ONE_PAIR, order[:1] + singles)
    return v.encode(v.HIGH_CARD, singles)


def _pick_low(naturals: Sequence[Card], wilds: Sequence[Card], ranks: Sequence[int]):
    """The cards of the low: naturals of the needed ranks, wild cards for the rest."""
    free, spare = list(naturals), list(wilds)
    made, plays = [], []
    for r in ranks:
        match = next((c for c in free if _low_rank(c) == r), None)
        if match is None:
            made.append(spare.pop())
            plays.append(parse_card("A23456789TJQK"[r - 1] + "s"))
        else:
            free.remove(match)
            made.append(match)
            plays.append(match)
    return made, plays


def describe_low(category: int, ranks: list[int]) -> str:
    shown = "-".join(v.SHORT[r] for r in expand(category, ranks))
    if category == v.HIGH_CARD:
        return f"{shown} low"
    return f"{v.describe_high(category, ranks)} ({shown})"


v.register_family(v.LOW_A5, v.Family(v.HIGH_CATEGORIES, describe_low, None))
v.register_family(v.LOW_27, v.Family(v.HIGH_CATEGORIES, describe_low, None))
