"""Dealing from the stub: to each player, to the board, and at the draw.

Cards go one at a time to each player still in, clockwise from the dealer's left.
When the stub cannot complete a deal (001, "Running out of cards"), the discards
and the folded hands are reshuffled with what is left of the stub and the deal goes
on; if there are still too few for every player to get a card, the remaining players
share one common card dealt to the board (003: the stud river of a full table). At
the draw, the discards of the player drawing are not among those reshuffled.

The reshuffle is a pure function of the hand: ``domain.cards.shuffled`` of the stub
followed by the mucked cards, seeded with the SHA-256 of their canonical JSON. Both
lists are hidden from every player and fixed by the hand's seeds, so nobody can
steer it, and the new stub is recorded (hidden) in ``StubReshuffled``.
"""

from __future__ import annotations

import hashlib

from domain.cards import codes, parse_cards, shuffled
from domain.errors import DomainError
from domain.events import BoardDealt, CardsDealt, CardsDrawn, Event, StubReshuffled
from domain.fairness import canonical_json
from domain.poker.spec import Board, Deal
from domain.poker.state import HandState


def deal_street(state: HandState, street: Deal) -> list[Event]:
    players = [s.seat for s in state.from_left_of_button() if s.in_hand]
    each = street.down + street.up
    events, stub = _enough(state, len(players) * each)
    if len(players) * each > len(stub):
        if each == 1 and stub:
            return events + [BoardDealt(cards=(stub[0],))]
        raise DomainError("out_of_cards", f"the deck cannot deal {each} cards to "
                          f"{len(players)} players")
    cards = iter(stub)
    dealt = []
    for count, face_up in ((street.down, False), (street.up, True)):
        rounds = [[next(cards) for _ in players] for _ in range(count)]
        dealt += [CardsDealt(seat=seat, cards=tuple(r[i] for r in rounds), face_up=face_up)
                  for i, seat in enumerate(players) if rounds]
    return events + dealt


def deal_board(state: HandState, street: Board) -> list[Event]:
    events, stub = _enough(state, street.cards)
    return events + [BoardDealt(cards=tuple(stub[:street.cards]))]


def draw(state: HandState, seat: int, discards: tuple[str, ...]) -> list[Event]:
    events, stub = _enough(state, len(discards))
    if len(discards) > len(stub):
        raise DomainError("out_of_cards", f"only {len(stub)} cards are left to draw")
    return events + [CardsDrawn(seat=seat, discarded=discards,
                                received=tuple(stub[:len(discards)]))]


def _enough(state: HandState, needed: int) -> tuple[list[Event], tuple[str, ...]]:
    """The stub, reshuffled with the mucked cards first when it holds fewer than ``needed``."""
    if needed <= len(state.deck) or not state.mucked:
        return [], state.deck
    cards = state.deck + state.mucked
    seed = hashlib.sha256(canonical_json({"stub": list(state.deck),
                                          "mucked": list(state.mucked)}).encode()).hexdigest()
    stub = tuple(codes(shuffled(parse_cards(cards), seed)))
    return [StubReshuffled(cards=stub)], stub
