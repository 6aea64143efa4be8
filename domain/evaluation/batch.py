"""Natural high hands in NumPy batches, for equity work.

Rule books: as `domain.evaluation.high_hand` (000, 001, 002, 004).

``high_batch(hands)`` takes an integer array of shape ``(n, k)``, 1 <= k <= 7,
of card indices (`Card.index`: ``4 * (rank - 2) + suit``, suits ``cdhs``,
0..51; natural cards only, no card twice in a row) and returns an ``int64``
array of ``n`` keys, each equal to ``high(cards).rank_key``: compare them as
integers (greater is better), or decode one with
`domain.evaluation.value.decode`. The encoding, from the top: category
(bits 20..23, 0 high card .. 8 straight flush), then five rank nibbles
(2..14, 0 for a missing card).

The sum of the cards' weights (as in `high_hand`) holds every rank count and
suit count; the rank counts are found by binary search in the sorted table
of every hand of up to seven cards (built on first use), and the few rows
with five of a suit are judged again on a 13-bit table of that suit's ranks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from domain.cards import STANDARD_DECK, Card
from domain.evaluation import high_hand

_WEIGHTS = np.array([high_hand.WEIGHT[c] for c in STANDARD_DECK], dtype=np.int64)
_RANK_BITS = np.array([1 << (c.rank - 2) for c in STANDARD_DECK], dtype=np.int64)
_SUITS = np.array([c.index & 3 for c in STANDARD_DECK], dtype=np.int64)
_tables: dict[str, np.ndarray] = {}


def high_batch(hands) -> np.ndarray:
    """``high(cards).rank_key`` for every row of card indices (see the module)."""
    hands = np.asarray(hands)
    if hands.ndim != 2 or not 1 <= hands.shape[1] <= 7 or not np.issubdtype(hands.dtype, np.integer):
        raise ValueError(f"hands must be an integer array of shape (n, 1..7), not {hands.dtype} {hands.shape}")
    if hands.size and (hands.min() < 0 or hands.max() > 51):
        raise ValueError("card indices are 0..51")
    keys, values, flushes = _load()
    total = _WEIGHTS[hands].sum(axis=1) + high_hand.SUIT_BIAS
    out = values[np.searchsorted(keys, total & high_hand.RANK_MASK)]
    rows = np.flatnonzero(total & high_hand.FLUSH_BITS)
    if rows.size:
        fields = total[rows] >> high_hand.SUIT_SHIFT
        suit = np.argmax(np.stack([(fields >> (4 * s + 3)) & 1 for s in range(4)], axis=1), axis=1)
        held = hands[rows]
        mask = np.where(_SUITS[held] == suit[:, None], _RANK_BITS[held], 0).sum(axis=1)
        out[rows] = np.maximum(out[rows], flushes[mask])
    return out


def as_indices(hands: Iterable[Sequence[Card]]) -> np.ndarray:
    """Hands of equal size as the index array `high_batch` takes."""
    return np.array([[c.index for c in hand] for hand in hands], dtype=np.int64)


def _load() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not _tables:
        table = high_hand.rank_table(7)
        keys = np.array(sorted(table), dtype=np.int64)
        _tables["keys"] = keys
        _tables["values"] = np.array([table[k] for k in keys.tolist()], dtype=np.int64)
        flushes = np.zeros(1 << 13, dtype=np.int64)
        for mask in range(1 << 13):
            if mask.bit_count() >= 5:
                flushes[mask] = high_hand.flush_key([r for r in range(2, 15) if mask >> (r - 2) & 1])
        _tables["flushes"] = flushes
    return _tables["keys"], _tables["values"], _tables["flushes"]
