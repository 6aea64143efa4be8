"""The poker variants the engine runs, as specs, and the options tables choose them by.

Amounts are in points, the table's chip unit. Where a rule book gives dollars, the
defaults keep its proportions (003's $1/$2 stud with a 25-cent ante becomes a small
bet of 20, a big bet of 40 and an ante of 5).

A rule added after hands were stored is an option (``split_chip``, ``short_forced_bet``,
``short_all_ins_add_up``, ``complete_needs_a_caller``, ``stub_first``): a hand's options
are resolved when it starts, so a hand whose options lack one was played before it, and
the engine reads its absence as the rule it was played by. Its audit, which decides
every move again, then still holds. ``last_bettor_shows`` came after its rule did: its absence
reads as that rule, and the audit also takes the rule before it (``showdown``).
"""

from __future__ import annotations

from domain.options import MAX_AMOUNT, REVEAL, Option
from domain.poker.openers import RULES as OPENER_RULES
from domain.poker.spec import Bet, Board, Deal, Draw, Variant
from domain.poker.structures import STRUCTURES, first_opening_bet

AMOUNT = {"minimum": 0, "maximum": MAX_AMOUNT}


def _half(name: str):
    return lambda o: o[name] // 2


def structure(default: str) -> Option:
    return Option(
        "structure", "string", default,
        "house (000: open one bet_unit and raise one unit at a time, doubled from the "
        "big_bet_round); club (001: ante 1, bets of 1 to 5, no cap); fixed-limit; spread-limit "
        "(min_bet up to small_bet, or big_bet from the big_bet_round); pot-limit; no-limit",
        allowed=tuple(STRUCTURES), sets={
            "house": {"max_raises": 3}, "fixed-limit": {"max_raises": 3},
            "spread-limit": {"max_raises": 3}, "pot-limit": {"max_raises": None},
            "no-limit": {"max_raises": None},
            "club": {"ante": 1, "min_bet": 1, "small_bet": 5, "big_bet": 5, "max_raises": None},
        })


def amounts(ante: int, small_bet: int, *, blinds: bool) -> tuple[Option, ...]:
    """The money options every variant has: ante, blinds, bet sizes."""
    return (
        Option("ante", "integer", ante, "paid by every player before the deal", **AMOUNT),
        Option("big_blind", "integer", small_bet if blinds else 0, "the big blind (0: none); "
               "it opens the first round", **AMOUNT),
        Option("small_blind", "integer", 0, "the small blind", derive=_half("big_blind"),
               derived_from="half the big blind", **AMOUNT),
        Option("small_bet", "integer", small_bet, "the lower limit: fixed-limit bets of the "
               "early rounds, the top of a spread-limit bet", minimum=1, maximum=MAX_AMOUNT,
               derive=lambda o: o["big_blind"] or small_bet,
               derived_from=f"the big blind, else {small_bet}"),
        Option("big_bet", "integer", 2 * small_bet, "the upper limit, from the big_bet_round",
               minimum=1, maximum=MAX_AMOUNT, derive=lambda o: 2 * o["small_bet"],
               derived_from="twice the small bet"),
        Option("min_bet", "integer", 0, "the smallest opening bet and raise in spread-limit, "
               "pot-limit and no-limit", derive=lambda o: o["big_blind"] or o["small_bet"],
               derived_from="the big blind, else the small bet", minimum=1, maximum=MAX_AMOUNT),
        Option("bet_unit", "integer", 25, "house structure: the chip every bet and raise is a "
               "whole number of", minimum=1, maximum=MAX_AMOUNT),
        Option("big_round_min_bet", "integer", 0, "house structure: the smallest opening bet "
               "of an upper-limit round (000 doubles the minimum, but its Example B allows bets "
               "of one unit there; two units for the doubled reading)",
               derive=lambda o: o["bet_unit"], derived_from="one bet unit, as 000's Example B "
               "reads", minimum=1, maximum=MAX_AMOUNT),
    )


def betting(all_in: str, big_bet_round: int) -> tuple[Option, ...]:
    return (
        Option("max_raises", "integer", 3, "raises allowed per betting round after the opening "
               "bet (null: no cap; no-limit has none)", minimum=0, maximum=100, nullable=True),
        Option("big_bet_round", "integer", big_bet_round, "the first betting round (counted from "
               "1) played at the upper limit", minimum=1, maximum=10),
        Option("all_in", "string", all_in, "forbidden: all bets must be covered (000): nobody is "
               "all in and a player short of a call adds chips or folds; side_pots: a player may "
               "go all in for less and side pots form (001)", allowed=("forbidden", "side_pots")),
        Option("short_forced_bet", "string", "full", "a big blind or a bring-in posted all in "
               "for less than its amount (the books are silent): full, the others call the "
               "whole of it, as cardrooms play it; posted, they call what was posted, as PHH "
               "and PokerKit play it and as hands played before this option were",
               allowed=("full", "posted")),
        Option("short_all_ins_add_up", "boolean", True, "all-ins each short of a full raise "
               "that together raise the bet a player acted on by a full raise reopen the "
               "betting to that player, as cardrooms play it (the books are silent); false: "
               "only a full bet or raise reopens it, as in hands played before this option"),
        Option("half_bet_rule", "boolean", True, "fixed-limit: an all-in bet or raise of at "
               "least half a full one counts as full (it reopens the betting, counts toward "
               "max_raises, and a raise goes a full bet over it); one of less may be called or "
               "completed to a full one, as cardrooms play it by Robert's Rules of Poker (the "
               "books are silent); false: the full-bet rule, only a full bet or raise counts "
               "and a raise goes a full bet over the all-in, as PokerKit plays it and as "
               "tables created before this option do"),
        Option("odd_chip", "string", "first_left_of_button", "who gets the indivisible chips "
               "of a split pot: the high half (as cardrooms play it), then first_left_of_button, "
               "every odd chip to the first winner to the left of the button (003: \"any odd "
               "amount going to the player immediately to the left of the dealer\"); "
               "left_of_button, one odd chip each, clockwise from there, as tables created "
               "until 24 November 2026 split them",
               allowed=("first_left_of_button", "left_of_button")),
        Option("split_chip", "string", "hand", "the chip a split pot is divided in (004: "
               "equally, but for the odd chip): hand, the largest chip every amount of the "
               "hand is a whole number of (a pot of 222 splits 111 and 111); table, the "
               "largest chip every money option is a whole number of (25 with the defaults: "
               "122 and 100), as hands played before this option were split",
               allowed=("hand", "table")),
        Option("stub_first", "boolean", True, "when the stub cannot deal a street to every "
               "player (001, running out of cards), it is dealt to the players it can serve, and "
               "at the first it cannot, the discards and folded hands are reshuffled with what is "
               "left of it (as PokerKit deals); false: that reshuffle comes before anyone is "
               "dealt, as in hands played before this option"),
        Option("muck_losers", "boolean", False, "a hand that can win no pot is not shown at the "
               "showdown, but the last to bet or raise shows (001, 003: losing hands may be "
               "mucked)"),
        Option("last_bettor_shows", "boolean", True, "the last player to bet or raise in the "
               "final round, all in short of a full bet or raise too (000: positive action), "
               "shows first, and shows with muck_losers (001); false: only a full bet or raise "
               "counts and muck_losers shows winners only, as every hand was played until 24 "
               "November"),
        Option("reshuffle", "string", "seeded", "how a stub that runs short is reshuffled "
               "with the mucked cards: seeded, by them and a key derived from the hand's "
               "server seed (HandStarted's hidden reshuffle_key), so that nobody who knows "
               "every card mucked can foretell the new stub; a hand whose options lack it "
               "was reshuffled by the cards alone, as every hand until 24 November 2026",
               allowed=("seeded",)),
        Option("shown_draws", "string", "hidden", "what a hand shown at the showdown tells "
               "of its draws: hidden, only how many cards were drawn, as at a table (each draw "
               "commits to the seat's whole hand again, sorted: CardsDrawn's hidden held, which "
               "the showdown opens instead of the cards dealt and drawn); a hand whose options "
               "lack it opened those, telling which cards were kept, as every hand until 24 "
               "November 2026", allowed=("hidden",)),
        REVEAL,
        Option("dealers_choice", "boolean", False, "each hand may name its game (001, 004): "
               "POST .../hands with {\"game\": id}"),
    )


DEAD_BUTTON = Option(
    "dead_button", "boolean", True, "with blinds: after each hand the big blind moves to the "
    "next player on its left and the small blind to the seat the big blind had (not posted "
    "if that seat is dealt out), the button on its right, so that nobody posts the big blind "
    "twice in a row or skips it when a player busts or leaves, as cardrooms play it (the "
    "books say only that the button moves one player to the left); false: the button "
    "moves to the next player dealt in and the blinds follow it, as at tables created "
    "until 25 November 2026")


def opener(name: str, default: str, what: str, **kwargs) -> Option:
    return Option(name, "string", default, f"who opens {what}: one of {', '.join(OPENER_RULES)}",
                  allowed=OPENER_RULES, **kwargs)


# --- draw --------------------------------------------------------------------

FIVE_CARD_DRAW = Variant(
    id="five-card-draw", name="Five Card Draw", min_players=2, max_players=6,
    streets=(Deal(down=5), Bet(opener="option:first_opener"), Draw(),
             Bet(opener="option:second_round_opener")),
    forced=("ante", "blinds"),
    options=(
        Option("rules", "string", "house", "the rule book the other defaults come from: house "
               "(000: ante 25, a bet of 25 raised 25 at a time to 100, round two doubled, all bets "
               "covered, draw 3); "
               "casino (002: blinds, fixed limit, draw 5); club (001: ante 1, bets 1 to 5)",
               allowed=("house", "casino", "club"), sets={
                   "house": {"structure": "house", "all_in": "forbidden"},
                   "casino": {"structure": "fixed-limit", "ante": 0, "big_blind": 50,
                              "max_discard": 5,
                              "first_opener": "left_of_big_blind", "all_in": "side_pots"},
                   "club": {"structure": "club", "max_discard": 5, "all_in": "side_pots"}}),
        structure("house"),
        *amounts(25, 25, blinds=False),
        DEAD_BUTTON,
        *betting("forbidden", 2),
        Option("max_discard", "integer", 3, "most cards a player may discard at the draw",
               minimum=0, maximum=5),
        opener("first_opener", "left_of_dealer", "the first round"),
        opener("second_round_opener", "left_of_dealer", "the round after the draw (002's home "
               "games: first_round_opener)"),
    ),
    rules="000 (house), 001 (club), 002 (casino)")


# --- stud ----------------------------------------------------------------------

def _stud_streets(*deals: Deal) -> tuple:
    first, *later = deals
    streets = [first, Bet(opener="option:first_opener")]
    for deal in later:
        streets += [deal, Bet(opener="option:later_opener")]
    return tuple(streets)


STUD_OPTIONS = (
    Option("bring_in", "integer", 0, "the forced opening bet of the first round, made by the "
           "seat the first_opener names (0: none, the opener may check)",
           derive=lambda o: max(0, min(o["small_bet"] // 2, first_opening_bet(o) - 1)),
           derived_from="half the small bet, below the first round's opening bet", **AMOUNT),
    Option("open_pair_big_bet", "boolean", False, "an open pair on fourth street allows the "
           "upper limit (003)"),
    Option("complete_needs_a_caller", "boolean", True, "nobody completes the bring-in when "
           "every other player is all in, as nobody raises then: no one could call it; false: "
           "the completion is offered and what nobody called comes back, as in hands played "
           "before this option"),
)

SEVEN_CARD_STUD = Variant(
    id="seven-card-stud", name="Seven Card Stud", min_players=2, max_players=8,
    streets=_stud_streets(Deal(down=2, up=1), Deal(up=1), Deal(up=1), Deal(up=1), Deal(down=1)),
    forced=("ante",),
    options=(
        Option("rules", "string", "cardroom", "the rule book the other defaults come from: "
               "house (000: antes, best hand showing opens, house limits doubled in the last "
               "round, all bets covered, 2 to 6 players); cardroom (003: bring-in by the "
               "lowest up card, fixed limit, open pair rule); club (001: lowest up card "
               "opens, then highest cards)",
               allowed=("house", "cardroom", "club"), sets={
                   "house": {"structure": "house", "ante": 25, "bring_in": 0,
                             "first_opener": "best_hand_showing",
                             "later_opener": "best_hand_showing", "big_bet_round": 5,
                             "all_in": "forbidden"},
                   "cardroom": {"structure": "fixed-limit", "first_opener": "lowest_up_card_suit",
                                "open_pair_big_bet": True},
                   "club": {"structure": "club", "bring_in": 0, "first_opener": "lowest_up_card",
                            "later_opener": "highest_cards_showing"}}),
        structure("fixed-limit"),
        *amounts(5, 20, blinds=False),
        *STUD_OPTIONS,
        *betting("side_pots", 3),
        opener("first_opener", "lowest_up_card_suit", "third street"),
        opener("later_opener", "best_hand_showing", "the later rounds"),
    ),
    rules="000 (house), 001 (club), 003 (cardroom)",
    max_players_by_rules=(("house", 6),))  # 000: "2-6 Players"; 003 deals eight

FIVE_CARD_STUD = Variant(
    id="five-card-stud", name="Five Card Stud", min_players=2, max_players=10,
    streets=_stud_streets(Deal(down=1, up=1), Deal(up=1), Deal(up=1), Deal(up=1)),
    forced=("ante",),
    options=(
        structure("fixed-limit"),
        *amounts(5, 20, blinds=False),
        *STUD_OPTIONS,
        *betting("side_pots", 3),
        opener("first_opener", "lowest_up_card_suit", "the first round (with a bring-in, the "
               "lowest up card; without, the highest)",
               derive=lambda o: "lowest_up_card_suit" if o["bring_in"] else "highest_up_card",
               derived_from="lowest_up_card_suit with a bring-in, else highest_up_card"),
        opener("later_opener", "best_hand_showing", "the later rounds"),
    ),
    rules="002")


# --- hold'em and Omaha ----------------------------------------------------------

def _board_game(id_: str, name: str, hole: int, judge: str, default_structure: str,
                rules: str) -> Variant:
    return Variant(
        id=id_, name=name, min_players=2, max_players=10,
        streets=(Deal(down=hole), Bet(opener="left_of_big_blind"), Board(3), Bet(), Board(1),
                 Bet(), Board(1), Bet()),
        forced=("ante", "blinds"), judge=judge,
        options=(structure(default_structure), *amounts(0, 50, blinds=True), DEAD_BUTTON,
                 *betting("side_pots", 3)),
        rules=rules)


TEXAS_HOLDEM = _board_game("texas-holdem", "Texas Hold'em", 2, "high", "no-limit",
                           "001, 003, 004")
OMAHA = _board_game("omaha", "Omaha", 4, "omaha_high", "pot-limit", "001, 003")
OMAHA_HI_LO = _board_game("omaha-hi-lo", "Omaha Hi/Lo (eight or better)", 4, "omaha_hi_lo8",
                          "fixed-limit", "003")

VARIANTS: dict[str, Variant] = {v.id: v for v in (
    FIVE_CARD_DRAW, SEVEN_CARD_STUD, FIVE_CARD_STUD, TEXAS_HOLDEM, OMAHA, OMAHA_HI_LO)}
