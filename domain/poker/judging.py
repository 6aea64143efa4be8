"""How hands are judged at the showdown: the cards speak (000, 001).

A judge turns a player's cards and the board into a high value and, in a
high-low game, a low value (None when the hand has no qualifying low):

* ``high``: the best five of all the player's cards and the board (000, 001, 002, 003).
* ``omaha_high``: exactly two of the player's four cards with exactly three of the
  board (001, 003).
* ``omaha_hi_lo8`` (003): Omaha high, and a low of five different ranks 8 or lower,
  ace low, straights and flushes ignored, made of two cards and three of the board.
* ``hi_lo8``: the best five high, and the best eight-or-better low, of all the cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from domain.cards import parse_cards
from domain.evaluation import HandValue, high, low_a5, omaha_high, omaha_low8


@dataclass(frozen=True)
class Judgement:
    high: HandValue
    low: HandValue | None = None


def _high(hole, board) -> Judgement:
    return Judgement(high(parse_cards([*hole, *board])))


def _hi_lo8(hole, board) -> Judgement:
    cards = parse_cards([*hole, *board])
    return Judgement(high(cards), low_a5(cards, qualifier=8))


def _omaha(hole, board) -> Judgement:
    return Judgement(omaha_high(parse_cards(hole), parse_cards(board)))


def _omaha_hi_lo8(hole, board) -> Judgement:
    hole, board = parse_cards(hole), parse_cards(board)
    return Judgement(omaha_high(hole, board), omaha_low8(hole, board))


JUDGES: dict[str, Callable[[Sequence[str], Sequence[str]], Judgement]] = {
    "high": _high, "hi_lo8": _hi_lo8, "omaha_high": _omaha, "omaha_hi_lo8": _omaha_hi_lo8}
SPLIT_POT = {"hi_lo8", "omaha_hi_lo8"}


def judge(name: str, hole: Sequence[str], board: Sequence[str]) -> Judgement:
    return JUDGES[name](hole, board)


def described(value: HandValue) -> dict:
    return {"category": value.category, "description": value.describe(),
            "best": tuple(c.code for c in value.cards)}
