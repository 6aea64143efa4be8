"""Main and side pots, and splitting a pot between tied winners.

Pots are built from what each seat put in over the hand (rule book 000,
"table stakes"; 001, "running out of chips"): every level at which a player
still in the hand is all in closes a pot that only players who matched it may
win. Chips of folded players stay in the pots they reached.

A split pot is divided in whole chips; the indivisible chips go to the first
winner clockwise from the button's left (003: "any odd amount going to the player
immediately to the left of the dealer"), or one at a time to the winners in that
order (``odd_chip: left_of_button``, as hands were split until 24 November 2026).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # seats that may win it


def build_pots(committed: dict[int, int], in_hand: set[int]) -> list[Pot]:
    levels = sorted({committed[s] for s in in_hand if committed[s] > 0})
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, previous) for c in committed.values())
        eligible = tuple(sorted(s for s in in_hand if committed[s] >= level))
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    leftover = sum(committed.values()) - sum(p.amount for p in pots)
    if leftover and pots:
        pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
    return pots


def split(amount: int, winners_in_order: list[int], chip: int,
          odd_to_first: bool = True) -> dict[int, int]:
    """Shares of ``amount`` for winners listed clockwise from the button's left; the odd
    chips all to the first of them, or (``odd_to_first`` false) one each in turn."""
    count = len(winners_in_order)
    chips, loose = divmod(amount, chip)
    each, odd = divmod(chips, count)
    shares = {seat: each * chip for seat in winners_in_order}
    if odd_to_first:
        shares[winners_in_order[0]] += odd * chip
    else:
        for seat in winners_in_order[:odd]:
            shares[seat] += chip
    shares[winners_in_order[0]] += loose
    return shares
