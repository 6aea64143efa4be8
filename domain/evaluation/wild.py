"""High hands with wild cards, the bug and the club's wild-card limit.

Rule books: 000 (Acey Duecy One Eyed Jack; Kings and Low Man: "A-3-3-7-9 =
3 Aces, Q-10-K-2-2 = 4 Qs"), 001 ("Wild", Baseball, The Good The Bad and The
Ugly, Special Rules "Wilds"), 004 (Wild Cards: the joker, the bug, deuces,
one-eyed jacks, low hole card).

How each rule is read here:

- A wild card stands for any card, a duplicate of a held card included
  (004: "such as a fifth queen"). So five of a kind exists and ranks above a
  straight flush, and in a flush every wild card is an ace of the flush suit
  (a "double-ace flush" A-A-K-Q-9 beats A-K-Q-J-9).
- The bug (``bug=True``: every joker in the hand) is an ace of any suit, or
  any card at all in a straight, flush or straight flush (004) -- so in a
  flush it is an ace too.
- ``wild_limit="naturals"`` (001: "a hand can not have more wilds than normal
  cards to match against") is read as: every wild card must be matched
  against a natural card of the five that play. In a straight, flush or
  straight flush the wild cards may not outnumber the natural cards of the
  five; in a set of equal ranks (pair, three, four or five of a kind) the
  wild cards of the set may not outnumber its natural cards, and a wild card
  can never be an unmatched card (a kicker). A wild card that cannot be used
  is dead: it plays as a blank, below a deuce, worth exactly a missing card.
  So A♥ K♥ + three wilds is two pair, aces and kings, with a blank; A♥ K♥ Q♥
  + two wilds is a royal flush; a hand of wild cards alone is worth nothing.
  The bug, under the limit, is a natural ace and a wild card in a straight
  or flush.

No substitution is tried: the best hand is found category by category from
the natural cards' rank counts and suit masks, with the wild cards counted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from domain.cards import Card, parse_card
from domain.evaluation import value as v
from domain.evaluation.high_hand import MAX_CARDS, expand, flush_key, high, key_from_counts
from domain.evaluation.value import HandValue

ONE_EYED_JACKS: frozenset[Card] = frozenset({parse_card("Js"), parse_card("Jh")})
_SUITS = "cdhs"
_RANKS_DOWN = range(14, 1, -1)


def of_ranks(*ranks: int) -> frozenset[Card]:
    """Every standard card of the given ranks (2..14): ``of_ranks(2)`` is deuces wild."""
    return frozenset(parse_card("23456789TJQKA"[r - 2] + s) for r in ranks for s in _SUITS)


def lowest_rank(cards: Iterable[Card], *, ignoring: Collection[Card] = ()) -> frozenset[Card]:
    """The held cards of the lowest rank, not counting ``ignoring`` (already wild):
    Kings and Low Man (000) and the low hole card (004, pass the hole cards)."""
    naturals = [c for c in cards if c not in ignoring and c.suit != "j"]
    if not naturals:
        return frozenset()
    low = min(c.rank for c in naturals)
    return frozenset(c for c in naturals if c.rank == low)


def wild_high(cards: Sequence[Card], wild: Collection[Card], bug: bool, wild_limit: str | None) -> HandValue:
    """`domain.evaluation.high` with wild cards, the bug or the club limit (see the module)."""
    if wild_limit not in (None, "naturals"):
        raise ValueError(f"unknown wild_limit {wild_limit!r} (None or 'naturals')")
    cards = tuple(cards)
    if not 0 < len(cards) <= MAX_CARDS:
        raise ValueError(f"a high hand has 1 to {MAX_CARDS} cards, not {len(cards)}")
    wild = frozenset(wild)
    naturals, wilds, bugs = [], [], []
    for c in cards:
        if c.suit == "j" and bug:
            bugs.append(c)
        elif c in wild:
            wilds.append(c)
        elif c.suit == "j":
            raise ValueError(f"{c.code} is a joker: it must be wild or the bug")
        else:
            naturals.append(c)
    if not wilds and not bugs:
        return high(naturals)
    limited = wild_limit == "naturals"
    key = best_key(naturals, len(wilds), len(bugs), limited)
    return HandValue(key, *_make(key, naturals, wilds, bugs))


def best_key(naturals: Sequence[Card], w: int, b: int, limited: bool) -> int:
    """The key of the best hand: naturals, ``w`` wild cards, ``b`` bugs."""
    counts = [0] * 15
    for c in naturals:
        counts[c.rank] += 1
    counts[14] += b
    group = _groups(counts, w, limited) if w or limited else key_from_counts(counts)
    return max(group, _straights(naturals, w + b, limited))


def _groups(counts: list[int], w: int, limited: bool) -> int:
    """The best hand made of sets of equal ranks and kickers (no straight or flush)."""
    def need(rank: int, size: int) -> int:
        missing = max(0, size - counts[rank])
        if limited and missing > min(counts[rank], size):
            return w + 1
        return missing

    def kickers(exclude: Sequence[int], spare: int, room: int) -> list[int]:
        extra = [] if limited else [14] * spare
        singles = [r for r in _RANKS_DOWN if counts[r] and r not in exclude for _ in range(counts[r])]
        return (extra + singles)[:room]

    # A rank the naturals lack can only be all wild cards, and then aces are best.
    ranks = [r for r in _RANKS_DOWN if counts[r] or (r == 14 and not limited)]
    for r in ranks:
        if need(r, 5) <= w:
            return v.encode(v.FIVE_OF_A_KIND, [r])
    for r in ranks:
        n = need(r, 4)
        if n <= w:
            return v.encode(v.FOUR_OF_A_KIND, [r] + kickers([r], w - n, 1))
    for t in ranks:
        nt = need(t, 3)
        if nt <= w:
            for p in ranks:
                if p != t and nt + need(p, 2) <= w:
                    return v.encode(v.FULL_HOUSE, [t, p])
    for r in ranks:
        n = need(r, 3)
        if n <= w:
            return v.encode(v.THREE_OF_A_KIND, [r] + kickers([r], w - n, 2))
    for p1 in ranks:
        n1 = need(p1, 2)
        if n1 <= w:
            for p2 in (r for r in ranks if r < p1):
                n2 = need(p2, 2)
                if n1 + n2 <= w:
                    return v.encode(v.TWO_PAIR, [p1, p2] + kickers([p1, p2], w - n1 - n2, 1))
    for r in ranks:
        n = need(r, 2)
        if n <= w:
            return v.encode(v.ONE_PAIR, [r] + kickers([r], w - n, 3))
    return v.encode(v.HIGH_CARD, kickers([], w, 5))


def _straights(naturals: Sequence[Card], w: int, limited: bool) -> int:
    """The best straight flush, flush or straight with ``w`` cards to fill gaps (0: none)."""
    most = min(w, 2) if limited else w
    by_suit = {s: [c.rank for c in naturals if c.suit == s] for s in _SUITS}
    best = 0
    for ranks in by_suit.values():
        if len(ranks) + most >= 5:
            top = _filled_straight(ranks, most)
            if top:
                best = max(best, v.encode(v.STRAIGHT_FLUSH, [top]))
            else:
                best = max(best, flush_key([14] * most + ranks))
    if best < v.encode(v.STRAIGHT, [14]):
        top = _filled_straight([c.rank for c in naturals], most)
        if top:
            best = max(best, v.encode(v.STRAIGHT, [top]))
    return best


def _filled_straight(ranks: Sequence[int], fill: int) -> int:
    """The top of the best straight these ranks make with ``fill`` cards to fill gaps."""
    mask = 0
    for r in ranks:
        mask |= 1 << (r - 2)
    for top in range(14, 4, -1):
        window = 0b1000000001111 if top == 5 else 0b11111 << (top - 6)
        if 5 - (mask & window).bit_count() <= fill:
            return top
    return 0


def _make(key: int, naturals: list[Card], wilds: list[Card], bugs: list[Card]):
    """The five cards that play for ``key`` and what each stands for."""
    _, category, ranks = v.decode(key)
    need = expand(category, ranks)
    straightish = category in (v.STRAIGHT, v.STRAIGHT_FLUSH, v.FLUSH)
    suit = None
    if category in (v.FLUSH, v.STRAIGHT_FLUSH):
        suit = max(_SUITS, key=lambda s: sum(c.suit == s and c.rank in need for c in naturals))
    free = list(naturals)
    made, plays = [], []
    for r in need:
        match = next((c for c in free if c.rank == r and (suit is None or c.suit == suit)), None)
        if match is not None:
            free.remove(match)
            made.append(match)
            plays.append(match)
            continue
        stand_in = bugs if bugs and (straightish or r == 14) else wilds
        made.append(stand_in.pop())
        plays.append(_card(r, suit or _spare_suit(r, plays)))
    dead = wilds + bugs
    while len(made) < 5 and dead:
        made.append(dead.pop())
        plays.append(None)
    return made, plays


def _spare_suit(rank: int, played: Sequence[Card | None]) -> str:
    taken = {c.suit for c in played if c is not None and c.rank == rank}
    return next((s for s in "shdc" if s not in taken), "s")


def _card(rank: int, suit: str) -> Card:
    return parse_card("23456789TJQKA"[rank - 2] + suit)
