"""The poker variants the engine runs, as specs."""

from __future__ import annotations

from domain.options import REVEAL, Option
from domain.poker.spec import Bet, Deal, Draw, Variant

BETTING_OPTIONS = (
    Option("structure", "string", "house", "house: spread limit of rule book 000 (open and raise "
           "by 1 to `limit` bet units, the limit doubling in the last round); fixed-limit: open "
           "and raise by exactly small_bet, then big_bet", allowed=("house", "fixed-limit")),
    Option("ante", "integer", 25, "paid by every player before the deal", minimum=0, maximum=10**9),
    Option("bet_unit", "integer", 25, "house structure: the chip every bet and raise is a whole "
           "number of", minimum=1, maximum=10**9),
    Option("small_bet", "integer", 25, "fixed-limit: bet and raise size of the early rounds",
           minimum=1, maximum=10**9),
    Option("big_bet", "integer", 50, "fixed-limit: bet and raise size of the late rounds",
           minimum=1, maximum=10**9),
    Option("max_raises", "integer", 3, "raises allowed per betting round after the opening bet "
           "(null: no cap)", minimum=0, maximum=100, nullable=True),
    Option("all_in", "string", "forbidden", "forbidden: all bets must be covered (house rule, "
           "000); side_pots: a player short of a call may call all-in and side pots are formed",
           allowed=("forbidden", "side_pots")),
    Option("odd_chip", "string", "left_of_button", "who gets an indivisible chip of a split pot: "
           "the first winner to the left of the button", allowed=("left_of_button",)),
)

FIVE_CARD_DRAW = Variant(
    id="five-card-draw",
    name="Five Card Draw",
    min_players=2,
    max_players=6,
    streets=(Deal(down=5), Bet(limit=1), Draw(), Bet(limit=2)),
    options=BETTING_OPTIONS + (
        Option("max_discard", "integer", 3, "most cards a player may discard at the draw",
               minimum=0, maximum=3),
        REVEAL,
    ),
    rules="000 (house): ante 25, round one 25 to 100, round two doubled, 3 raises, draw up to 3",
)

VARIANTS: dict[str, Variant] = {v.id: v for v in (FIVE_CARD_DRAW,)}
