"""Hand evaluation: every ranking the rule books use (pure, no I/O).

- `high(cards, *, wild=(), bug=False, wild_limit=None)`: the best five-card
  high hand of 1..10 cards, wild cards, the bug and the club limit included
  (000, 001, 002, 004; see `high_hand` and `wild`).
- `low_a5(cards, *, qualifier=None, wild=())`, `low_27(cards)`: ace-to-five
  (eight-or-better with ``qualifier=8``) and deuce-to-seven lows (001, 003).
- `omaha_high(hole, board)`, `omaha_low8(hole, board)`: two hole cards and
  three board cards (001, 003).
- `three_card(cards, *, wild=())`, `two_card(cards, *, side="high")`: Two
  Card Guts with a Bump (000) and Double-Guts (001).
- `high_batch(hands)`: NumPy batches of natural high hands, equal to
  ``high(cards).rank_key`` hand by hand (see `batch`).

Every function returns a `HandValue`: totally ordered within its family
(greater is better, lows included), equal exactly when the hands tie.
"""

from domain.evaluation.high_hand import high
from domain.evaluation.low import low_27, low_a5
from domain.evaluation.omaha import omaha_high, omaha_low8
from domain.evaluation.small import THREE_CARD_CATEGORIES, TWO_CARD_CATEGORIES, three_card, two_card
from domain.evaluation.value import HIGH_CATEGORIES, HandValue
from domain.evaluation.wild import ONE_EYED_JACKS, lowest_rank, of_ranks

__all__ = [
    "HIGH_CATEGORIES", "ONE_EYED_JACKS", "THREE_CARD_CATEGORIES", "TWO_CARD_CATEGORIES", "HandValue",
    "high", "low_27", "low_a5", "lowest_rank", "of_ranks", "omaha_high", "omaha_low8",
    "three_card", "two_card",
]
