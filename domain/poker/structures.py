"""Betting structures: how big an opening bet and a raise may be, before stacks are counted.

Each structure gives, for the betting round being played, the totals ("bet to",
"raise to") a bet may reach and the step between allowed totals. Stacks, all-in
and the raise cap are the betting module's.

* ``house`` (000, "House Betting Standards"): amounts in whole ``bet_unit`` chips.
  In a lower-limit round a bet opens at one unit and each raise adds one unit;
  in an upper-limit round (from the ``big_bet_round``) the limit doubles: a raise
  adds one or two units, and the opening bet is from ``big_round_min_bet`` up to
  two units. 000 says both that the second round's minimum is doubled and that
  raises of 25 are allowed there (Example B). The default reads it as Example B
  does: one unit is still allowed, so the opening bet is one or two units; set
  ``big_round_min_bet`` to two units for the doubled minimum.
* ``fixed-limit`` (003, 004): bets and raises of exactly ``small_bet``, then
  ``big_bet`` from the ``big_bet_round``. With ``open_pair_big_bet`` (003), an open
  pair on fourth street (the second round) lets the opening bet be either size,
  and raises follow the size opened. 003 ("all players have the option to bet the
  higher limit") does not say whether a raise may go to the upper limit after a lower
  opening bet; here it may not: whoever wants the upper limit opens with it. A raise goes
  a full bet over the last full bet or raise (``half_bet_rule``, as cardrooms play it by
  Robert's Rules of Poker: the books are silent; ``betting``); without it (the full-bet
  rule, as PokerKit plays it) a full bet over the bet to match, an all-in for less too.
* ``spread-limit``: any bet or raise from ``min_bet`` up to ``small_bet`` (lower
  rounds) or ``big_bet`` (upper rounds).
* ``club`` (001): spread-limit with the club's defaults: ante 1, minimum bet 1,
  maximum raise 5, no cap on raises.
* ``pot-limit`` (004): a bet up to the pot; a raise up to the pot after the call
  ("a player who raises may count as part of the pot the amount needed to call").
  A raise adds at least the last full bet or raise of the round, and at least
  ``min_bet``, even where the pot is smaller (blinds posted short). The number of raises
  is not capped unless the table says so (``max_raises`` null by default, as card rooms
  play pot-limit; 004's home rule, "invariably 3 raises", is ``max_raises: 3``).
* ``no-limit`` (004): as pot-limit with no upper limit but the stack.
"""

from __future__ import annotations

from typing import NamedTuple

from domain.evaluation import high
from domain.cards import parse_cards
from domain.options import MAX_CHIPS
from domain.poker.state import HandState, SeatState

NO_LIMIT = MAX_CHIPS  # a no-limit bet's ceiling: the most chips a stack may hold


class Sizes(NamedTuple):
    bet_min: int  # totals for an opening bet
    bet_max: int
    raise_min: int  # totals ("raise to") for a raise on top of ``state.current_bet``
    raise_max: int
    step: int  # allowed totals are the minimum plus whole steps


def sizes(state: HandState, seat: SeatState) -> Sizes:
    return STRUCTURES[state.options["structure"]](state, seat)


def big_round(state: HandState) -> bool:
    return state.betting_round >= state.options["big_bet_round"]


def _house(state, seat) -> Sizes:
    unit = state.options["bet_unit"]
    if not big_round(state):
        return Sizes(unit, unit, state.current_bet + unit, state.current_bet + unit, unit)
    opening = state.options["big_round_min_bet"]
    return Sizes(opening, max(opening, 2 * unit), state.current_bet + unit,
                 state.current_bet + 2 * unit, unit)


def _fixed(state, seat) -> Sizes:
    small, big = state.options["small_bet"], state.options["big_bet"]
    size = big if big_round(state) else small
    if state.current_bet == 0 and _open_pair_choice(state):
        return Sizes(small, big, small, big, big - small or 1)
    if half_bet_rule(state.options):
        if state.full_bet:  # an all-in counted as full raised by less than a bet
            size = max(size, state.raise_size)
        return Sizes(size, size, state.full_to + size, state.full_to + size, size)
    if state.full_bet and state.raise_size:
        size = state.raise_size
    return Sizes(size, size, state.current_bet + size, state.current_bet + size, size)


def half_bet_rule(options: dict) -> bool:
    return options.get("half_bet_rule", False) and options["structure"] == "fixed-limit"


def _open_pair_choice(state: HandState) -> bool:
    """003: an open pair on fourth street allows the upper limit."""
    if not state.options.get("open_pair_big_bet") or state.betting_round != 2:
        return False
    return any(high(parse_cards(s.up_cards)).category == "one_pair"
               for s in state.in_hand() if len(s.up_cards) == 2)


def _spread(state, seat) -> Sizes:
    low = state.options["min_bet"]
    top = state.options["big_bet" if big_round(state) else "small_bet"]
    return Sizes(low, max(low, top), state.current_bet + low, state.current_bet + max(low, top), 1)


def _pot_limit(state, seat) -> Sizes:
    least = max(state.raise_size, state.options["min_bet"])
    to_call = state.current_bet - seat.bet
    raise_min = state.current_bet + least
    return Sizes(state.options["min_bet"], max(state.options["min_bet"], state.pot),
                 raise_min, max(raise_min, state.current_bet + state.pot + to_call), 1)


def _no_limit(state, seat) -> Sizes:
    least = max(state.raise_size, state.options["min_bet"])
    return Sizes(state.options["min_bet"], NO_LIMIT, state.current_bet + least, NO_LIMIT, 1)


def contradiction(options: dict) -> str | None:
    """What a table's amounts say against each other, or None: the small blind above the
    big (a small blind alone may be), a lower limit above the upper, a spread whose
    smallest bet is above its top, or a bring-in that is not less than the first round's
    opening bet (it could then be "completed" to less than itself)."""
    if 0 < options["big_blind"] < options["small_blind"]:
        return "small_blind may not be above big_blind"
    structure = options["structure"]
    if structure in ("fixed-limit", "spread-limit", "club") and (
            options["small_bet"] > options["big_bet"]):
        return "small_bet (the lower limit) may not be above big_bet (the upper limit)"
    top = "big_bet" if options["big_bet_round"] == 1 else "small_bet"  # of the first round
    if structure in ("spread-limit", "club") and options["min_bet"] > options[top]:
        return f"min_bet may not be above {top}, the top of a spread-limit bet"
    bring_in = options.get("bring_in", 0)
    if bring_in and bring_in >= first_opening_bet(options):
        return (f"bring_in ({bring_in}) must be less than the first round's opening bet "
                f"({first_opening_bet(options)}, under {structure})")
    return None


def first_opening_bet(options: dict) -> int:
    """The smallest full opening bet of the first betting round (before ``big_bet_round``
    is known, as a bring-in's default is derived, that of a lower-limit round)."""
    upper = options.get("big_bet_round") == 1
    if options["structure"] == "fixed-limit":
        return options["big_bet" if upper else "small_bet"]
    if options["structure"] == "house":
        return options["big_round_min_bet" if upper else "bet_unit"]
    return options["min_bet"]


STRUCTURES = {"house": _house, "fixed-limit": _fixed, "spread-limit": _spread, "club": _spread,
              "pot-limit": _pot_limit, "no-limit": _no_limit}
CAPPED = {"house", "fixed-limit", "spread-limit", "club", "pot-limit"}  # no-limit has no cap
