"""High hands: the best five-card poker hand from 1 to 10 cards.

Rule books: 000 ("5 Card Poker Hand Ranking", "Incomplete Hands"), 001
("Order of Hands"), 002, 004 ("Poker Hands").

Categories, best first: five of a kind (wild cards or several decks only),
straight flush (A-K-Q-J-10 is the royal flush, 5-4-3-2-A the lowest; no
"turning the corner"), four of a kind, full house, flush, straight, three of
a kind, two pair, one pair, high card. Suits never break ties. Fewer than
five cards make an incomplete hand (000): no straight, flush or full house,
and a kicker that is present beats a missing one (8-8-K > 8-8-6-2 > 8-8-6).

How it is fast: every standard card has one integer weight,
``8**(rank-2) + 16**suit << 40``, so the sum over a hand holds the count of
every rank (3 bits each, bits 0..38) and of every suit (4 bits each, from
bit 40, each started at 3 so that bit 3 of a field is set exactly when that
suit has five cards or more). One dict lookup on the rank counts judges every
hand without a flush; the rare hand with five of a suit is judged again on a
13-bit table of that suit's ranks. The rank table is filled on first sight
of each multiset of ranks (at most 76,154 of up to seven cards; `rank_table`
builds them all at once for the batch path). The same card given twice
(several decks) counts twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.cards import STANDARD_DECK, Card
from domain.evaluation import value as v
from domain.evaluation.value import HandValue, _set_held, _set_key, lazy_value

_new = object.__new__

_SUIT_NUMBER = {"c": 0, "d": 1, "h": 2, "s": 3}
SUIT_SHIFT = 40
RANK_MASK = (1 << 39) - 1
SUIT_BIAS = 0x3333 << SUIT_SHIFT
FLUSH_BITS = 0x8888 << SUIT_SHIFT
MAX_CARDS = 10

WEIGHT: dict[Card, int] = {
    c: (1 << 3 * (c.rank - 2)) + (1 << (SUIT_SHIFT + 4 * _SUIT_NUMBER[c.suit])) for c in STANDARD_DECK
}
_weight = WEIGHT.__getitem__


def high(cards: Sequence[Card], *, wild=(), bug: bool = False, wild_limit: str | None = None) -> HandValue:
    """The best five-card high hand that ``cards`` (1 to 10 of them) make.

    ``wild``: the cards that are wild in this hand; ``bug=True``: jokers are
    the bug; ``wild_limit="naturals"``: the club rule of 001. See
    `domain.evaluation.wild` for exactly how each is read.
    """
    if wild or bug or wild_limit is not None:
        from domain.evaluation.wild import wild_high
        return wild_high(cards, wild, bug, wild_limit)
    if type(cards) is not tuple:
        cards = tuple(cards)
    try:
        total = sum(map(_weight, cards), SUIT_BIAS)
    except KeyError:
        raise ValueError(f"not a natural card in {[str(c) for c in cards]}; jokers must be wild or the bug") from None
    if total & FLUSH_BITS:
        return lazy_value(_with_flush(cards, total), cards)
    key = RANK_TABLE.get(total & RANK_MASK)
    if key is None:
        key = _rank_miss(total & RANK_MASK)
    value = _new(HandValue)  # lazy_value(key, cards), inlined: this is the hot path
    _set_key(value, key)
    _set_held(value, cards)
    return value


def natural_key(cards: Sequence[Card], total: int | None = None) -> int:
    """`high(cards).rank_key` for natural cards, without building a value
    (``total``: the cards' weights summed with `SUIT_BIAS`, if known)."""
    if total is None:
        total = sum(map(_weight, cards), SUIT_BIAS)
    if total & FLUSH_BITS:
        return _with_flush(cards, total)
    key = RANK_TABLE.get(total & RANK_MASK)
    return _rank_miss(total & RANK_MASK) if key is None else key


def key_from_counts(counts: Sequence[int]) -> int:
    """The key of the best hand, flushes aside, from ``counts[rank]`` (rank 2..14)."""
    present = [r for r in range(14, 1, -1) if counts[r]]
    n = sum(counts[r] for r in present)
    if not 0 < n <= MAX_CARDS:
        raise ValueError(f"a high hand has 1 to {MAX_CARDS} cards, not {n}")
    top = max(counts[r] for r in present)
    first = max(r for r in present if counts[r] == top)
    others = [r for r in present if r != first]
    if top >= 5:
        return v.encode(v.FIVE_OF_A_KIND, [first])
    if top == 4:
        return v.encode(v.FOUR_OF_A_KIND, [first] + others[:1])
    pairs = [r for r in others if counts[r] >= 2]
    if top == 3 and pairs:
        return v.encode(v.FULL_HOUSE, [first, pairs[0]])
    straight = STRAIGHT_HIGH[sum(1 << (r - 2) for r in present)]
    if straight:
        return v.encode(v.STRAIGHT, [straight])
    if top == 3:
        return v.encode(v.THREE_OF_A_KIND, [first] + others[:2])
    if pairs:
        rest = [r for r in others if r != pairs[0]]
        return v.encode(v.TWO_PAIR, [first, pairs[0], rest[0] if rest else 0])
    if top == 2:
        return v.encode(v.ONE_PAIR, [first] + others[:3])
    return v.encode(v.HIGH_CARD, present[:5])


def flush_key(ranks: Sequence[int]) -> int:
    """The best straight flush or flush from the ranks of five or more cards of one suit
    (a rank may repeat when several decks are in play)."""
    mask = 0
    for r in ranks:
        mask |= 1 << (r - 2)
    straight = STRAIGHT_HIGH[mask]
    if straight:
        return v.encode(v.STRAIGHT_FLUSH, [straight])
    return v.encode(v.FLUSH, sorted(ranks, reverse=True)[:5])


def _with_flush(cards: Sequence[Card], total: int) -> int:
    if len(cards) > MAX_CARDS:
        raise ValueError(f"a high hand has 1 to {MAX_CARDS} cards, not {len(cards)}")
    key = RANK_TABLE.get(total & RANK_MASK) or _rank_miss(total & RANK_MASK)
    suits = total >> SUIT_SHIFT
    for suit, number in _SUIT_NUMBER.items():
        if (suits >> (4 * number)) & 8:
            key = max(key, flush_key([c.rank for c in cards if c.suit == suit]))
    return key


def _rank_miss(rank_part: int) -> int:
    counts = [0, 0] + [(rank_part >> 3 * i) & 7 for i in range(13)]
    key = RANK_TABLE[rank_part] = key_from_counts(counts)
    return key


def _straight_high(mask: int) -> int:
    for top in range(14, 5, -1):
        window = 0b11111 << (top - 6)
        if mask & window == window:
            return top
    return 5 if mask & 0b1000000001111 == 0b1000000001111 else 0


def rank_table(max_cards: int) -> dict[int, int]:
    """Rank counts (packed 3 bits a rank) -> key, for every hand of 1..max_cards cards."""
    table = {}
    counts = [0] * 15

    def fill(rank: int, left: int, packed: int) -> None:
        if rank == 15:
            if left < max_cards:
                table[packed] = key_from_counts(counts)
            return
        for n in range(min(4, left) + 1):
            counts[rank] = n
            fill(rank + 1, left - n, packed | n << 3 * (rank - 2))
        counts[rank] = 0

    fill(2, max_cards, 0)
    return table


STRAIGHT_HIGH: list[int] = [_straight_high(m) for m in range(1 << 13)]
RANK_TABLE: dict[int, int] = {}  # filled on first sight of each rank multiset


def _resolve(key: int, held: tuple[Card, ...]) -> tuple[Card, ...]:
    """The held cards that make the hand of ``key``, most significant first."""
    _, category, ranks = v.decode(key)
    need = expand(category, ranks)
    suit = None
    if category in (v.FLUSH, v.STRAIGHT_FLUSH):
        suit = next(s for s in _SUIT_NUMBER
                    if all(any(c.rank == r and c.suit == s for c in held) for r in need))
    by_rank: dict[int, list[Card]] = {}
    for card in held:
        if suit is None or card.suit == suit:
            by_rank.setdefault(card.rank, []).append(card)
    return tuple(by_rank[r].pop(0) for r in need)


def expand(category: int, ranks: list[int]) -> list[int]:
    """The ranks of the (up to) five cards a high key stands for, most significant first."""
    r1, r2 = ranks[0], ranks[1]
    if category == v.FIVE_OF_A_KIND:
        return [r1] * 5
    if category in (v.STRAIGHT, v.STRAIGHT_FLUSH):
        return [5, 4, 3, 2, 14] if r1 == 5 else list(range(r1, r1 - 5, -1))
    if category == v.FOUR_OF_A_KIND:
        groups = [r1] * 4 + ranks[1:2]
    elif category == v.FULL_HOUSE:
        groups = [r1] * 3 + [r2] * 2
    elif category == v.THREE_OF_A_KIND:
        groups = [r1] * 3 + ranks[1:3]
    elif category == v.TWO_PAIR:
        groups = [r1] * 2 + [r2] * 2 + ranks[2:3]
    elif category == v.ONE_PAIR:
        groups = [r1] * 2 + ranks[1:4]
    else:
        groups = ranks
    return [r for r in groups if r]


v.register_family(v.HIGH, v.Family(v.HIGH_CATEGORIES, v.describe_high, _resolve))
