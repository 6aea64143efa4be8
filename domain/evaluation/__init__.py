"""Hand evaluation: every ranking the rule books use (pure, no I/O).

- `high`: the best five-card high hand from 1..10 cards, wild cards and the bug
  included (000, 001, 002, 004).

Every function returns a `HandValue`: totally ordered within its family
(greater is better, lows included), equal exactly when the hands tie.
"""

from domain.evaluation.high_hand import high
from domain.evaluation.value import HIGH_CATEGORIES, HandValue

__all__ = ["HIGH_CATEGORIES", "HandValue", "high"]
