"""Who opens a betting round. Every rule picks a seat still in the hand; when that seat
cannot act (it is all in), the next seat clockwise that can act opens instead.

* ``left_of_dealer`` (000, 001, 003 after the first round): the first seat to the dealer's left.
* ``left_of_big_blind`` (003, 004): the first seat to the left of the big blind (of the
  larger blind, where a table's small blind is the larger; of an imported hand's largest
  blind or straddle).
* ``first_round_opener`` (002, home games): whoever made the first bet of the first round;
  left of the dealer when nobody bet.
* ``lowest_up_card_suit`` (003): the lowest up card, ace high; ties by suit, clubs lowest,
  then diamonds, hearts, spades. With a bring-in, this seat brings in.
* ``lowest_up_card`` (001): the lowest up card; a tie goes to the first to the dealer's left.
* ``highest_up_card`` (002, five card stud without a bring-in): the highest up card; a tie
  goes to the first clockwise from the dealer.
* ``best_hand_showing`` (000, 002, 003): the best poker hand among the up cards, incomplete
  hands ranking as 000 says (straights and flushes of fewer than five cards do not count);
  a tie goes to the first to the dealer's left.
* ``highest_cards_showing`` (001, "the player with the highest two cards"): up cards
  compared highest first, pairs counting for nothing; ties to the dealer's left.
"""

from __future__ import annotations

from domain.cards import RANKS, SUITS, parse_card, parse_cards
from domain.evaluation import high
from domain.poker.forced import largest_blind
from domain.poker.state import HandState, SeatState


def opener(state: HandState, rule: str) -> int | None:
    """The seat that opens the round under ``rule``; None when nobody can act."""
    if rule == "first_round_opener" and state.first_bettor is not None:
        chosen = state.first_bettor
    elif rule in _BY_CARDS:
        showing = [s for s in state.from_left_of_button() if s.in_hand and s.up_cards]
        chosen = max(showing, key=_BY_CARDS[rule], default=None)  # max keeps the first of ties
        chosen = chosen and chosen.seat
    else:
        chosen = largest_blind(state) if rule == "left_of_big_blind" else state.button
        return state.next_seat(chosen, lambda s: s.can_act)
    if chosen is None:
        return state.next_seat(state.button, lambda s: s.can_act)
    if state.seat(chosen).can_act:
        return chosen
    return state.next_seat(chosen, lambda s: s.can_act)


def _rank(card: str) -> int:
    return RANKS.index(card[0])


def _lowest_by_suit(seat: SeatState) -> tuple:
    card = seat.up_cards[0]
    return (-_rank(card), -SUITS.index(card[1]))


def _lowest(seat: SeatState) -> tuple:
    return (-_rank(seat.up_cards[0]),)


def _highest(seat: SeatState) -> tuple:
    return (_rank(seat.up_cards[0]),)


def _best_hand(seat: SeatState) -> int:
    return high(parse_cards(seat.up_cards)).rank_key


def _highest_cards(seat: SeatState) -> tuple:
    return tuple(sorted((parse_card(c).rank for c in seat.up_cards), reverse=True))


_BY_CARDS = {"lowest_up_card_suit": _lowest_by_suit, "lowest_up_card": _lowest,
             "highest_up_card": _highest, "best_hand_showing": _best_hand,
             "highest_cards_showing": _highest_cards}
RULES = ("left_of_dealer", "left_of_big_blind", "first_round_opener", *_BY_CARDS)
