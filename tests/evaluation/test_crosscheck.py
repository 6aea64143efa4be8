"""Cross-checks against PokerKit on random hands: same category, same order of every pair.

PokerKit judges every five-card class once (a multiset of ranks, and whether
the five share a suit: nothing else matters to a five-card hand); the random
hands are then judged with NumPy over every choice of five (every 2 + 3 for
Omaha) and the best kept. A direct sample against PokerKit's own multi-card
API checks that harness. "Same order of every pair" is checked by sorting:
sorted by our value, PokerKit's never decreases and the ties are the same.

Size: CARDROOM_CROSSCHECK_HANDS (default 100000) random hands per ranking.
"""

import os
from itertools import combinations

import numpy as np
import pokerkit as pk
import pytest

from domain.cards import STANDARD_DECK
from domain.evaluation import high, low_27, omaha_high, omaha_low8
from domain.evaluation.batch import high_batch

N = int(os.environ.get("CARDROOM_CROSSCHECK_HANDS", "100000"))
DIRECT = 100
SUITS = "cdhs"
RANKS = "23456789TJQKA"


class PokerKitClasses:
    """PokerKit's judgment of every five-card class, as a dense strength (-1: not a hand)."""

    def __init__(self, hand_type, flush_matters: bool):
        self.flush_matters = flush_matters
        hands = {}
        for counts in _rank_multisets(5):
            for flush in ((False, True) if flush_matters and max(counts) == 1 else (False,)):
                code = _representative(counts, flush)
                try:
                    hands[_class_key(counts, flush)] = hand_type(code)
                except ValueError:
                    hands[_class_key(counts, flush)] = None
        valid = sorted(h for h in hands.values() if h is not None)
        strength, level = {}, 0
        for prev, cur in zip([None] + valid, valid):
            level += prev is not None and prev < cur
            strength[id(cur)] = level
        self.keys = np.array(sorted(hands), dtype=np.int64)
        self.strength = np.array([-1 if hands[k] is None else strength[id(hands[k])] for k in self.keys.tolist()])
        self.label = [None if hands[k] is None else hands[k].entry.label.name.lower() for k in self.keys.tolist()]

    def best(self, idx: np.ndarray, subsets) -> tuple[np.ndarray, list]:
        """Per row of card indices, the best strength over the given five-card subsets."""
        sub = idx[:, np.array(subsets)]
        ranks, suits = sub >> 2, sub & 3
        flush = (suits == suits[..., :1]).all(-1) if self.flush_matters else np.zeros(ranks.shape[:2], bool)
        key = (5 ** ranks).sum(-1) * 2 + flush
        pos = np.searchsorted(self.keys, key)
        assert (self.keys[pos] == key).all()
        strength = self.strength[pos]
        best = strength.argmax(axis=1)
        chosen = pos[np.arange(len(idx)), best]
        return strength.max(axis=1), [self.label[p] for p in chosen.tolist()]


def _rank_multisets(size, rank=0, counts=()):
    if rank == 13:
        if size == 0:
            yield counts
        return
    for n in range(min(4, size) + 1):
        yield from _rank_multisets(size - n, rank + 1, counts + (n,))


def _class_key(counts, flush):
    return sum(n * 5 ** r for r, n in enumerate(counts)) * 2 + flush


def _representative(counts, flush):
    cards, turn = [], 0
    for r, n in enumerate(counts):
        for _ in range(n):
            cards.append(RANKS[r] + ("s" if flush else SUITS[turn % 4]))
            turn += 1
    return "".join(cards)


def _deal(seed, n, k):
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.int64)


def _cards(row):
    return [STANDARD_DECK[i] for i in row]


def _same_order(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    order = np.lexsort((theirs, ours))
    o, t = ours[order], theirs[order]
    assert (np.diff(t) >= 0).all(), "an order disagrees"
    assert ((np.diff(o) == 0) == (np.diff(t) == 0)).all(), "a tie disagrees"


@pytest.fixture(scope="module")
def high_classes():
    return PokerKitClasses(pk.StandardHighHand, flush_matters=True)


@pytest.mark.parametrize("size", [5, 7])
def test_high_against_pokerkit(high_classes, size):
    idx = _deal(size, N, size)
    theirs, labels = high_classes.best(idx, list(combinations(range(size), 5)))
    values = [high(_cards(row)) for row in idx.tolist()]
    assert [v.category for v in values] == labels
    ours = np.array([v.rank_key for v in values])
    _same_order(ours, theirs)
    assert (high_batch(idx) == ours).all()


def test_omaha_high_against_pokerkit(high_classes):
    idx = _deal(9, N, 9)
    subsets = [p + t for p in combinations(range(4), 2) for t in combinations(range(4, 9), 3)]
    theirs, labels = high_classes.best(idx, subsets)
    values = [omaha_high(_cards(row[:4]), _cards(row[4:])) for row in idx.tolist()]
    assert [v.category for v in values] == labels
    _same_order([v.rank_key for v in values], theirs)


def test_omaha_low8_against_pokerkit():
    classes = PokerKitClasses(pk.EightOrBetterLowHand, flush_matters=False)
    idx = _deal(10, N, 9)
    subsets = [p + t for p in combinations(range(4), 2) for t in combinations(range(4, 9), 3)]
    theirs, _ = classes.best(idx, subsets)
    values = [omaha_low8(_cards(row[:4]), _cards(row[4:])) for row in idx.tolist()]
    assert [v is None for v in values] == (theirs < 0).tolist()
    assert all(v.category == "high_card" for v in values if v is not None)
    _same_order([-1 if v is None else v.rank_key for v in values], theirs)


@pytest.mark.parametrize("size", [5, 7])
def test_deuce_to_seven_against_pokerkit(size):
    classes = PokerKitClasses(pk.StandardLowHand, flush_matters=True)
    idx = _deal(20 + size, N if size == 5 else N // 10, size)
    theirs, labels = classes.best(idx, list(combinations(range(size), 5)))
    values = [low_27(_cards(row)) for row in idx.tolist()]
    assert [v.category for v in values] == labels
    _same_order([v.rank_key for v in values], theirs)


def test_harness_against_pokerkit_multi_card_api(high_classes):
    """The class tables agree with PokerKit judging whole hands itself."""
    idx = _deal(99, DIRECT, 9)
    codes = ["".join(c.code for c in _cards(row)) for row in idx.tolist()]
    seven, _ = high_classes.best(idx[:, :7], list(combinations(range(7), 5)))
    direct = [pk.StandardHighHand.from_game(code[:14]) for code in codes]
    _same_order(seven, [sorted(direct).index(h) for h in direct])
    omaha = [pk.OmahaHoldemHand.from_game(code[:8], code[8:]) for code in codes]
    subsets = [p + t for p in combinations(range(4), 2) for t in combinations(range(4, 9), 3)]
    table, _ = high_classes.best(idx, subsets)
    _same_order(table, [sorted(omaha).index(h) for h in omaha])
