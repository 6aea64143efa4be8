"""``apply``, behind the engine's ``evolve``: one recorded fact applied to the state of a
poker hand. Nothing here decides:
who acts next, what is dealt and what each action costs are in the events.

Replaying is the hot path of every read and every decision, so each event type has a
small function of its own, found by type, and seats that an event leaves as they are
are not copied.
"""

from __future__ import annotations

from domain.events import (ActionOn, AntePosted, BetCompleted, BetPlaced, BetReturned,
                           BettingRoundClosed, BlindPosted, BoardDealt, BringInPosted,
                           CardsDealt, CardsDrawn, ChipsBought, Event, HandEnded, HandStarted,
                           PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised, PotAwarded,
                           ShowdownEvaluated, StreetStarted, StubReshuffled)
from domain.frozen import replace
from domain.poker.state import ALL_IN, FOLDED, HandState, SeatState

STATUS = {"deal": "dealing", "draw": "drawing", "showdown": "showdown_pending", "bet": "betting"}


def apply(state: HandState, event: Event) -> HandState:
    applies = _APPLY.get(type(event))
    return applies(state, event) if applies else state


def _started(state: HandState, event: HandStarted) -> HandState:
    seats = tuple(SeatState(seat=s["seat"], name=s["name"], stack=s["stack"],
                            starting_stack=s["stack"], player_id=s.get("player_id", ""))
                  for s in sorted(event.seats, key=lambda s: s["seat"]))
    return replace(state, game=event.game, hand_no=event.hand_no, button=event.button,
                   seats=seats, status="dealing", deck=tuple(event.deck),
                   seed_commitment=event.seed_commitment, client_seeds=dict(event.client_seeds),
                   options=dict(event.options), source=dict(event.source),
                   reshuffle_key=event.reshuffle_key, blinds=tuple(event.blinds))


def _ante(state: HandState, event: AntePosted) -> HandState:
    return _pay(state, event.seat, event.amount)


def _blind(state: HandState, event: BlindPosted) -> HandState:
    state = _pay(state, event.seat, event.amount, bet=True)
    changes = {"current_bet": max(state.current_bet, state.seat(event.seat).bet,
                                  event.call_to or 0)}
    if event.blind in ("big", "straddle"):  # a straddle raises the bet, not the increment
        changes.update(full_bet=True, raise_size=state.options["big_blind"],
                       full_to=changes["current_bet"])
    return replace(state, **changes)


def _dealt(state: HandState, event: CardsDealt) -> HandState:
    seat = state.seat(event.seat)
    return state.with_seat(event.seat, {"deck": state.deck[len(event.cards):]},
                           cards=seat.cards + event.cards,
                           face_up=seat.face_up + (event.face_up,) * len(event.cards))


def _board(state: HandState, event: BoardDealt) -> HandState:
    return replace(state, board=state.board + event.cards, deck=state.deck[len(event.cards):])


def _reshuffled(state: HandState, event: StubReshuffled) -> HandState:
    return replace(state, deck=tuple(event.cards), mucked=(), reshuffles=state.reshuffles + 1)


def _street(state: HandState, event: StreetStarted) -> HandState:
    betting = event.kind == "bet"
    seats = _reopened(state.seats) if event.kind in ("bet", "draw") else state.seats
    return replace(state, street=event.street, status=STATUS[event.kind], awaiting=(),
                   seats=seats, betting_round=state.betting_round + betting,
                   last_aggressor=None if betting else state.last_aggressor,
                   last_full_aggressor=None if betting else state.last_full_aggressor)


def _action_on(state: HandState, event: ActionOn) -> HandState:
    return replace(state, awaiting=tuple(event.seats))


def _checked(state: HandState, event: PlayerChecked) -> HandState:
    return state.with_seat(event.seat, acted=True, may_raise=False)


def _called(state: HandState, event: PlayerCalled) -> HandState:
    return _pay(state, event.seat, event.added, bet=True, acted=True)


def _aggressive(state: HandState, event) -> HandState:
    """A bet, raise, completion or bring-in: the bet to match rises; a full one reopens the
    betting to every other seat."""
    full = getattr(event, "full", True) and type(event) is not BringInPosted
    changes = {"current_bet": max(state.current_bet, event.to,
                                  getattr(event, "call_to", None) or 0)}
    if type(event) is not BringInPosted:  # a bet or raise, even one all in short of full
        changes["last_aggressor"] = event.seat
    if full:
        opening = type(event) in (BetPlaced, BetCompleted)
        changes.update(full_bet=True, last_full_aggressor=event.seat, full_to=event.to,
                       raise_size=event.to if opening else event.to - state.current_bet,
                       raises=state.raises + (type(event) is PlayerRaised))
        state = replace(state, seats=_reopened(state.seats))
    if state.first_bettor is None and state.betting_round == 1:
        changes["first_bettor"] = event.seat
    return _pay(state, event.seat, event.added, bet=True, acted=True, hand=changes)


def _bought(state: HandState, event: ChipsBought) -> HandState:
    seat = state.seat(event.seat)
    return state.with_seat(event.seat, stack=seat.stack + event.amount,
                           bought=seat.bought + event.amount)


def _folded(state: HandState, event: PlayerFolded) -> HandState:
    seat = state.seat(event.seat)
    return state.with_seat(event.seat, {"mucked": state.mucked + seat.cards, "awaiting": ()},
                           status=FOLDED, acted=True)


def _drawn(state: HandState, event: CardsDrawn) -> HandState:
    seat = state.seat(event.seat)
    replacements = iter(event.received)
    cards = tuple(next(replacements) if c in event.discarded else c for c in seat.cards)
    state = state.with_seat(event.seat, cards=cards, held=event.held, acted=True)
    return replace(state, deck=state.deck[len(event.received):], awaiting=(),
                   mucked=state.mucked + tuple(event.discarded))


def _returned(state: HandState, event: BetReturned) -> HandState:
    seat = state.seat(event.seat)
    return state.with_seat(event.seat, stack=seat.stack + event.amount,
                           bet=seat.bet - event.amount, committed=seat.committed - event.amount)


def _round_closed(state: HandState, event: BettingRoundClosed) -> HandState:
    seats = tuple(replace(s, bet=0) if s.bet else s for s in state.seats)
    return replace(state, awaiting=(), current_bet=0, raise_size=0, full_to=0, full_bet=False,
                   raises=0, seats=seats)


def _evaluated(state: HandState, event: ShowdownEvaluated) -> HandState:
    return replace(state, showdown=event.hands)


def _awarded(state: HandState, event: PotAwarded) -> HandState:
    for seat, share in event.shares.items():
        state = state.with_seat(int(seat), stack=state.seat(int(seat)).stack + share)
    award = {"pot": event.pot, "amount": event.amount, "eligible": event.eligible,
             "winners": event.winners, "shares": event.shares, "reason": event.reason,
             "halves": event.halves}
    return replace(state, pots_awarded=state.pots_awarded + (award,))


def _ended(state: HandState, event: HandEnded) -> HandState:
    return replace(state, status="ended", awaiting=(),
                   result={"pots": list(state.pots_awarded), "net": dict(event.net)})


def _pay(state: HandState, seat_no: int, amount: int, bet: bool = False,
         acted: bool = False, hand: dict | None = None) -> HandState:
    seat = state.seat(seat_no)
    changes = {"stack": seat.stack - amount, "committed": seat.committed + amount}
    if bet:
        changes["bet"] = seat.bet + amount
    if acted:
        changes.update(acted=True, may_raise=False)
    if changes["stack"] == 0 and state.options.get("all_in") != "forbidden":
        changes["status"] = ALL_IN
    return state.with_seat(seat_no, hand, **changes)


def _reopened(seats: tuple[SeatState, ...]) -> tuple[SeatState, ...]:
    """Every seat free to act (and raise) again in this round."""
    if not any(s.acted or not s.may_raise for s in seats):
        return seats
    return tuple(s if not s.acted and s.may_raise else replace(s, acted=False, may_raise=True)
                 for s in seats)


_APPLY = {
    HandStarted: _started, AntePosted: _ante, BlindPosted: _blind, CardsDealt: _dealt,
    BoardDealt: _board, StubReshuffled: _reshuffled, StreetStarted: _street,
    ActionOn: _action_on, PlayerChecked: _checked, PlayerCalled: _called,
    BetPlaced: _aggressive, PlayerRaised: _aggressive, BetCompleted: _aggressive,
    BringInPosted: _aggressive, ChipsBought: _bought, PlayerFolded: _folded, CardsDrawn: _drawn,
    BetReturned: _returned, BettingRoundClosed: _round_closed, ShowdownEvaluated: _evaluated,
    PotAwarded: _awarded, HandEnded: _ended,
}
HAND_EVENTS = frozenset(_APPLY)  # the events a hand is made of
