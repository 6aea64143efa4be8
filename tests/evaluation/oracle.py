"""Brute-force judges for the wild-card tests: substitute, evaluate, keep the best.

Independent of domain.evaluation: a plain five-card evaluator and an
exhaustive search over what each wild card (or bug) could stand for. A five-card
hand's worth depends only on its multiset of ranks and on whether all five
share a suit, so each wild card is tried as every rank, once with the suit of
the other cards (when they share one) and once with a suit that breaks the
flush; that covers every card of the deck, duplicates included.

Values are ``(category, ranks)`` in the layout of `HandValue.rank_key`:
category 0 high card .. 9 five of a kind; ranks most significant first, 0 for
a missing card or a dead (blank) wild card.
"""

from collections import Counter
from functools import lru_cache
from itertools import combinations, combinations_with_replacement

STRAIGHTISH = {4, 5, 8}


@lru_cache(maxsize=None)
def five_value(ranks: tuple, flush: bool) -> tuple:
    """Up to five cards: ``ranks`` (None for a blank), ``flush`` if five share a suit."""
    live = [r for r in ranks if r is not None]
    blanks = [0] * (len(ranks) - len(live))
    counts = Counter(live)
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True) or [0]
    distinct = sorted(counts, reverse=True)
    top = 0
    if len(live) == 5 and len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            top = distinct[0]
        elif distinct == [14, 5, 4, 3, 2]:
            top = 5
    singles = sorted((r for r in live if counts[r] == 1), reverse=True) + blanks

    def pad(xs):
        return tuple(list(xs) + [0] * (5 - len(xs)))

    if shape[0] >= 5:
        return 9, pad([order[0]])
    if top and flush:
        return 8, pad([top])
    if shape[0] == 4:
        return 7, pad([order[0]] + singles[:1])
    if shape[:2] == [3, 2]:
        return 6, pad(order[:2])
    if flush:
        return 5, pad(sorted(live, reverse=True))
    if top:
        return 4, pad([top])
    if shape[0] == 3:
        return 3, pad([order[0]] + singles)
    if shape[:2] == [2, 2]:
        return 2, pad(order[:2] + singles)
    if shape[0] == 2:
        return 1, pad([order[0]] + singles)
    return 0, pad(singles)


def best(naturals, wilds: int = 0, bugs: int = 0, limited: bool = False) -> tuple:
    """The best value over every choice of five and every substitution."""
    specials = ["w"] * wilds + ["b"] * bugs
    size = min(5, len(naturals) + len(specials))
    result = None
    for k in range(0, min(len(specials), size) + 1):
        if size - k > len(naturals):
            continue
        for chosen in set(combinations(specials, k)):
            for nat in combinations(naturals, size - k):
                for value in _substitutions(nat, chosen, limited):
                    if result is None or value > result:
                        result = value
    return result


def _substitutions(nat, chosen, limited):
    nat_ranks = [c.rank for c in nat]
    nat_suits = {c.suit for c in nat}
    can_flush = len(nat_suits) <= 1
    options = list(range(2, 15)) + ([None] if limited else [])
    for stand in combinations_with_replacement(options, len(chosen)):
        for flush in ((True, False) if can_flush else (False,)):
            if flush and None in stand:
                continue
            ranks = tuple(sorted(nat_ranks + list(stand), key=lambda r: -1 if r is None else r))
            value = five_value(ranks, flush and len(ranks) == 5)
            if _allowed(value, nat_ranks, chosen, stand, limited):
                yield value


def _allowed(value, nat_ranks, chosen, stand, limited):
    category = value[0]
    for kind, rank in zip(chosen, stand):
        if kind == "b" and rank != 14 and category not in STRAIGHTISH:
            return False
    if not limited:
        return True
    wild_ranks = [r for kind, r in zip(chosen, stand) if kind == "w"]
    live = [r for r in wild_ranks if r is not None]
    if category in STRAIGHTISH:
        return len(live) <= len(nat_ranks) + sum(1 for kind in chosen if kind == "b")
    nat_count = Counter(nat_ranks + [14 for kind in chosen if kind == "b"])
    wild_count = Counter(live)
    return all(nat_count[r] >= n for r, n in wild_count.items())
