"""Dealing from the stub: to each player, to the board, and at the draw.

Cards go one at a time to each player still in, clockwise from the dealer's left.
When the stub cannot complete a deal (001, "Running out of cards"), it is dealt to the
players it can serve in full, and at the first it cannot, the discards and the folded
hands are reshuffled with what is left of it and the deal goes on (``stub_first``, as
PokerKit deals too; a hand whose options lack it was played when the reshuffle came
before anyone was dealt). If even the reshuffle holds too few for every player to get a
card, the players share one common card dealt to the board (003: the stud river of a
full table). At the draw, the discards of the player drawing are not among those
reshuffled.

The reshuffle is a pure function of what is left of the stub, of the mucked cards and of
the hand's hidden ``reshuffle_key`` (``fairness.reshuffled_stub``, published in
``ALGORITHMS["dealing"]``), which the hand's seeds fix, so nobody can steer it, and
nobody who knows every card mucked can foretell it; the new stub is recorded (hidden) in
``StubReshuffled``. An imported hand's reshuffles make instead, in turn, the stubs its
document deals from (``HandStarted.source["stubs"]``, hidden; ``domain.phh``), each of the
cards a reshuffle there holds.
"""

from __future__ import annotations

from domain.errors import DomainError
from domain.events import BoardDealt, CardsDealt, CardsDrawn, Event, StubReshuffled
from domain.fairness import reshuffled_stub
from domain.poker.spec import Board, Deal
from domain.poker.state import HandState


def deal_street(state: HandState, street: Deal) -> list[Event]:
    players = [s.seat for s in state.from_left_of_button() if s.in_hand]
    each = street.down + street.up
    needed = len(players) * each
    if len(state.deck) < needed <= len(state.deck) + len(state.mucked) and (
            state.options.get("stub_first", False)):
        served = len(state.deck) // each
        events, stub = _reshuffled(state, state.deck[served * each:])
        return (_dealt(players[:served], state.deck, street) + events
                + _dealt(players[served:], stub, street))
    events, stub = _enough(state, needed)
    if needed > len(stub):
        if each == 1 and stub:
            return events + [BoardDealt(cards=(stub[0],))]
        raise DomainError("out_of_cards", f"the deck cannot deal {each} cards to "
                          f"{len(players)} players")
    return events + _dealt(players, stub, street)


def _dealt(players: list[int], stub: tuple[str, ...], street: Deal) -> list[Event]:
    """``street``'s cards to each of ``players`` from the top of ``stub``, a round at a time."""
    cards = iter(stub)
    dealt = []
    for count, face_up in ((street.down, False), (street.up, True)):
        rounds = [[next(cards) for _ in players] for _ in range(count)]
        dealt += [CardsDealt(seat=seat, cards=tuple(r[i] for r in rounds), face_up=face_up)
                  for i, seat in enumerate(players) if rounds]
    return dealt


def deal_board(state: HandState, street: Board) -> list[Event]:
    events, stub = _enough(state, street.cards)
    return events + [BoardDealt(cards=tuple(stub[:street.cards]))]


def draw(state: HandState, seat: int, discards: tuple[str, ...]) -> list[Event]:
    events, stub = _enough(state, len(discards))
    if len(discards) > len(stub):
        raise DomainError("out_of_cards", f"only {len(stub)} cards are left to draw")
    received = tuple(stub[:len(discards)])
    held = ()
    if state.options.get("shown_draws") == "hidden":
        kept = [card for card in state.seat(seat).cards if card not in discards]
        held = tuple(sorted(kept + list(received)))
    return events + [CardsDrawn(seat=seat, discarded=discards, received=received, held=held)]


def _enough(state: HandState, needed: int) -> tuple[list[Event], tuple[str, ...]]:
    """The stub, reshuffled with the mucked cards first when it holds fewer than ``needed``."""
    if needed <= len(state.deck) or not state.mucked:
        return [], state.deck
    return _reshuffled(state, state.deck)


def _reshuffled(state: HandState, stub: tuple[str, ...]) -> tuple[list[Event], tuple]:
    given = state.source.get("stubs", ())
    if state.reshuffles < len(given):  # an imported hand's: in the document's order
        cards = tuple(given[state.reshuffles])
        if sorted(cards) != sorted(stub + state.mucked):
            raise ValueError(f"reshuffle {state.reshuffles + 1} of the imported hand does not "
                             "hold the cards left and mucked")
    else:
        cards = tuple(reshuffled_stub(stub, state.mucked, state.reshuffle_key))
    return [StubReshuffled(cards=cards)], cards
