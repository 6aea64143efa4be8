"""Omaha: exactly two hole cards and exactly three board cards.

Rule books: 001 ("Omaha Holdem": "two of your cards and three community
cards"), 003 (Omaha High; Omaha Hi/Lo eight-or-better: the low half needs
five different ranks of 8 or lower, ace low, two from the hand and three
from the board, and is judged ace-to-five, straights and flushes ignored).

``hole`` may hold 2 or more cards (four in Omaha, more in its cousins) and
``board`` 3 to 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from domain.cards import Card
from domain.evaluation.high_hand import SUIT_BIAS, WEIGHT, natural_key
from domain.evaluation.low import low_a5
from domain.evaluation.value import HandValue, lazy_value


def omaha_high(hole: Sequence[Card], board: Sequence[Card]) -> HandValue:
    """The best high hand of two hole cards and three board cards."""
    hole, board = _checked(hole, board)
    pairs = [(SUIT_BIAS + WEIGHT[a] + WEIGHT[b], (a, b)) for a, b in combinations(hole, 2)]
    triples = [(WEIGHT[a] + WEIGHT[b] + WEIGHT[c], (a, b, c)) for a, b, c in combinations(board, 3)]
    best_key, best = -1, None
    for pw, pc in pairs:
        for tw, tc in triples:
            key = natural_key(pc + tc, pw + tw)
            if key > best_key:
                best_key, best = key, (pc, tc)
    return lazy_value(best_key, best[0] + best[1])


def omaha_low8(hole: Sequence[Card], board: Sequence[Card]) -> HandValue | None:
    """The best eight-or-better ace-to-five low of two hole cards and three board
    cards, or ``None`` when there is none."""
    hole, board = _checked(hole, board)
    board_lows: dict[int, Card] = {}
    for c in board:
        if _low(c) <= 8:
            board_lows.setdefault(_low(c), c)
    best, best_cards = None, None
    for a, b in combinations(hole, 2):
        taken = {_low(a), _low(b)}
        if len(taken) < 2 or max(taken) > 8:
            continue
        three = [r for r in sorted(board_lows) if r not in taken][:3]
        if len(three) == 3:
            ranks = sorted(taken.union(three), reverse=True)  # no pair: compare high card first
            if best is None or ranks < best:
                best, best_cards = ranks, [a, b] + [board_lows[r] for r in three]
    return None if best is None else low_a5(best_cards, qualifier=8)


def _low(card: Card) -> int:
    return 1 if card.rank == 14 else card.rank


def _checked(hole: Sequence[Card], board: Sequence[Card]) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    hole, board = tuple(hole), tuple(board)
    if len(hole) < 2 or not 3 <= len(board) <= 5:
        raise ValueError(f"Omaha needs 2 or more hole cards and 3 to 5 board cards, not {len(hole)} and {len(board)}")
    return hole, board
