"""``evolve`` for poker hands: apply one recorded fact to the state. Nothing here decides:
who acts next, what is dealt and what each action costs are in the events."""

from __future__ import annotations

from domain.events import (ActionOn, AntePosted, BetCompleted, BetPlaced, BetReturned,
                           BettingRoundClosed, BlindPosted, BoardDealt, BringInPosted,
                           CardsDealt, CardsDrawn, ChipsBought, Event, HandEnded, HandStarted,
                           PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised, PotAwarded,
                           ShowdownEvaluated, StreetStarted, StubReshuffled)
from domain.poker.state import ALL_IN, FOLDED, HandState, SeatState, replace


def evolve(state: HandState, event: Event) -> HandState:
    match event:
        case HandStarted():
            seats = tuple(SeatState(seat=s["seat"], name=s["name"], stack=s["stack"],
                                    starting_stack=s["stack"], player_id=s.get("player_id", ""))
                          for s in event.seats)
            return replace(state, game=event.game, hand_no=event.hand_no, button=event.button,
                           seats=seats,
                           status="dealing", deck=tuple(event.deck),
                           seed_commitment=event.seed_commitment,
                           client_seeds=dict(event.client_seeds), options=dict(event.options))
        case AntePosted():
            return _pay(state, event.seat, event.amount)
        case BlindPosted():
            state = _pay(state, event.seat, event.amount, bet=True)
            if event.blind == "big":
                state = replace(state, full_bet=True, raise_size=state.options["big_blind"])
            return replace(state, current_bet=max(state.current_bet, state.seat(event.seat).bet))
        case CardsDealt():
            seat = state.seat(event.seat)
            state = state.with_seat(event.seat, cards=seat.cards + event.cards,
                                    face_up=seat.face_up + (event.face_up,) * len(event.cards))
            return replace(state, deck=state.deck[len(event.cards):])
        case BoardDealt():
            return replace(state, board=state.board + event.cards,
                           deck=state.deck[len(event.cards):])
        case StubReshuffled():
            return replace(state, deck=tuple(event.cards), mucked=())
        case StreetStarted():
            return _start_street(state, event)
        case ActionOn():
            return replace(state, awaiting=tuple(event.seats))
        case PlayerChecked():
            return state.with_seat(event.seat, acted=True, may_raise=False)
        case PlayerCalled():
            return _pay(state, event.seat, event.added, bet=True, acted=True)
        case BetPlaced() | PlayerRaised() | BetCompleted() | BringInPosted():
            return _aggressive(state, event)
        case ChipsBought():
            seat = state.seat(event.seat)
            return state.with_seat(event.seat, stack=seat.stack + event.amount,
                                   bought=seat.bought + event.amount)
        case PlayerFolded():
            seat = state.seat(event.seat)
            state = state.with_seat(event.seat, status=FOLDED, acted=True)
            return replace(state, mucked=state.mucked + seat.cards, awaiting=())
        case CardsDrawn():
            return _drawn(state, event)
        case BetReturned():
            seat = state.seat(event.seat)
            return state.with_seat(event.seat, stack=seat.stack + event.amount,
                                   bet=seat.bet - event.amount,
                                   committed=seat.committed - event.amount)
        case BettingRoundClosed():
            return replace(state, awaiting=(), current_bet=0, raise_size=0, full_bet=False,
                           raises=0, seats=tuple(replace(s, bet=0) for s in state.seats))
        case ShowdownEvaluated():
            return replace(state, showdown=event.hands)
        case PotAwarded():
            for seat, share in event.shares.items():
                state = state.with_seat(int(seat), stack=state.seat(int(seat)).stack + share)
            return replace(state, pots_awarded=state.pots_awarded + (event.to_dict(),))
        case HandEnded():
            return replace(state, status="ended", awaiting=(),
                           result={"pots": list(state.pots_awarded), "net": dict(event.net)})
    return state


def _pay(state: HandState, seat_no: int, amount: int, bet: bool = False,
         acted: bool | None = None) -> HandState:
    seat = state.seat(seat_no)
    changes = {"stack": seat.stack - amount, "committed": seat.committed + amount}
    if bet:
        changes["bet"] = seat.bet + amount
    if acted is not None:
        changes["acted"] = acted
        changes["may_raise"] = False
    if changes["stack"] == 0 and state.options.get("all_in") != "forbidden":
        changes["status"] = ALL_IN
    return state.with_seat(seat_no, **changes)


def _aggressive(state: HandState, event) -> HandState:
    """A bet, raise, completion or bring-in: the bet to match rises; a full one reopens the
    betting to every other seat."""
    full = getattr(event, "full", True) and not isinstance(event, BringInPosted)
    increase = event.to - state.current_bet
    opening = isinstance(event, (BetPlaced, BetCompleted))
    if full:
        state = replace(state, seats=tuple(replace(s, acted=False, may_raise=True)
                                           for s in state.seats),
                        raise_size=event.to if opening else increase,
                        raises=state.raises + isinstance(event, PlayerRaised), full_bet=True)
    first = state.first_bettor
    if first is None and state.betting_round == 1:
        first = event.seat
    state = replace(state, current_bet=max(state.current_bet, event.to), first_bettor=first,
                    last_aggressor=event.seat if full else state.last_aggressor)
    return _pay(state, event.seat, event.added, bet=True, acted=True)


def _start_street(state: HandState, event: StreetStarted) -> HandState:
    seats = tuple(replace(s, acted=False, may_raise=True) for s in state.seats)
    status = {"deal": "dealing", "draw": "drawing", "showdown": "showdown_pending",
              "bet": "betting"}[event.kind]
    betting_round = state.betting_round + (event.kind == "bet")
    last = None if event.kind == "bet" else state.last_aggressor
    return replace(state, street=event.street, status=status, awaiting=(), seats=seats,
                   betting_round=betting_round, last_aggressor=last)


def _drawn(state: HandState, event: CardsDrawn) -> HandState:
    seat = state.seat(event.seat)
    replacements = iter(event.received)
    cards = tuple(next(replacements) if c in event.discarded else c for c in seat.cards)
    state = state.with_seat(event.seat, cards=cards, acted=True)
    return replace(state, deck=state.deck[len(event.received):], awaiting=(),
                   mucked=state.mucked + tuple(event.discarded))
