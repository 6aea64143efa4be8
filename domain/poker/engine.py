"""The poker engine: ``initial_state``, ``decide`` and ``evolve`` for any variant spec.

``decide`` makes every decision and the events record it: the cards each street
deals, who acts next (``ActionOn``), what each action costs, the pots and who wins
them. ``evolve`` only applies those facts, so a later change of a rule never changes
how a stored hand replays. The rules themselves live in the modules the engine
composes: ``forced`` (antes, blinds), ``dealing``, ``openers``, ``betting`` with
``structures``, ``showdown`` with ``judging``, and ``domain.pots``.

Turn order (000, "Betting"): after the opener, action goes clockwise (to higher seat
numbers, wrapping). The draw goes clockwise from the dealer's left, and every player
still in draws, all-in players included (001, 002).
"""

from __future__ import annotations

from domain import fairness
from domain.commands import Act, Showdown, StartHand
from domain.errors import DomainError
from domain.events import (ActionOn, AntePosted, BetCompleted, BetPlaced, BetReturned,
                           BettingRoundClosed, BlindPosted, BoardDealt, BringInPosted,
                           CardsDealt, CardsDrawn, ChipsBought, Event, HandEnded, HandStarted,
                           PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised, PotAwarded,
                           ShowdownEvaluated, StreetStarted, StubReshuffled)
from domain.poker import betting, dealing, openers
from domain.poker.forced import forced_bets
from domain.poker.showdown import showdown
from domain.poker.spec import Bet, Board, Deal, Draw, Variant
from domain.poker.state import ALL_IN, FOLDED, HandState, SeatState, replace
from domain.poker.variants import VARIANTS


def initial_state(config: dict) -> HandState:
    """``config``: ``{"game": variant id, "options": resolved table options}``."""
    return HandState(game=config["game"], options=dict(config["options"]))


def decide(state: HandState, command) -> list[Event]:
    if isinstance(command, StartHand):
        return _start(state, command)
    if state.status == "not_started":
        raise DomainError("hand_not_started", "the hand has not started")
    if state.status == "ended":
        raise DomainError("hand_over", "the hand is over")
    if isinstance(command, Act):
        return _act(state, command)
    if isinstance(command, Showdown):
        return _showdown(state)
    raise TypeError(f"not a poker command: {command!r}")


def variant_of(state: HandState) -> Variant:
    return VARIANTS[state.game]


def legal_actions(state: HandState, seat: int | None) -> list[dict]:
    if seat is None or seat not in state.awaiting:
        return []
    if state.status == "drawing":
        return [{"type": "draw", "max_cards": state.options["max_discard"]}]
    return betting.legal_actions(state, state.seat(seat))


# --- deciding --------------------------------------------------------------

class _Emitter:
    """Collects events while keeping the state they lead to."""

    def __init__(self, state: HandState):
        self.state = state
        self.events: list[Event] = []

    def __call__(self, *events: Event) -> None:
        for event in events:
            self.events.append(event)
            self.state = evolve(self.state, event)


def _start(state: HandState, command: StartHand) -> list[Event]:
    if state.status != "not_started":
        raise DomainError("hand_already_started", "this hand has already started")
    variant = variant_of(state)
    if not variant.min_players <= len(command.seats) <= variant.max_players:
        raise DomainError("not_enough_players", f"{variant.name} needs {variant.min_players} "
                          f"to {variant.max_players} players with chips, not {len(command.seats)}")
    client_seeds = {str(s["seat"]): command.client_seeds.get(str(s["seat"]), "")
                    for s in command.seats}
    emit = _Emitter(state)
    emit(HandStarted(game=state.game, hand_no=command.hand_no, options=state.options,
                     button=command.button, seats=tuple(command.seats),
                     seed_commitment=fairness.seed_commitment(command.server_seed),
                     client_seeds=client_seeds,
                     deck=tuple(fairness.deck_order(command.server_seed, client_seeds,
                                                    command.hand_no))))
    emit(*forced_bets(emit.state, variant.forced))
    _advance(emit)
    return emit.events


def _act(state: HandState, command: Act) -> list[Event]:
    if state.status == "showdown_pending":
        raise DomainError("showdown_pending", "betting is over; the showdown is being settled")
    if not any(s.seat == command.seat for s in state.seats):
        raise DomainError("not_in_hand", f"seat {command.seat} was not dealt in")
    if command.seat not in state.awaiting:
        waiting = ", ".join(map(str, state.awaiting)) or "nobody"
        raise DomainError("not_your_turn", f"seat {waiting} is to act, not {command.seat}")
    seat = state.seat(command.seat)
    emit = _Emitter(state)
    if state.status == "drawing":
        emit(*_draw(state, seat, command))
        following = emit.state.next_seat(seat.seat, lambda s: s.in_hand and not s.acted)
        if following is None:
            return _advance(emit) or emit.events
        emit(ActionOn(seats=(following,)))
        return emit.events
    emit(betting.action_event(state, seat, command.type, command.amount))
    if isinstance(emit.events[-1], ChipsBought):
        return emit.events  # still this seat's turn, now with the chips to call
    following = betting.next_to_act(emit.state, seat.seat)
    if following is None:
        _close_round(emit)
        _advance(emit)
    else:
        emit(ActionOn(seats=(following,)))
    return emit.events


def _draw(state: HandState, seat: SeatState, command: Act) -> list[Event]:
    if command.type != "draw":
        raise DomainError("illegal_action", f"{command.type} is not possible now; it is the draw")
    discards = tuple(command.cards)
    if len(discards) > state.options["max_discard"]:
        raise DomainError("too_many_discards", f"at most {state.options['max_discard']} "
                          f"cards may be discarded, not {len(discards)}")
    if len(set(discards)) != len(discards):
        raise DomainError("duplicate_cards", "a card is discarded twice")
    missing = [c for c in discards if c not in seat.cards]
    if missing:
        raise DomainError("card_not_in_hand", f"{' '.join(missing)} not in seat {seat.seat}'s hand")
    return dealing.draw(state, seat.seat, discards)


def _advance(emit: _Emitter) -> None:
    """Run the streets that need no player until one does, or the hand is decided."""
    streets = variant_of(emit.state).streets
    while True:
        state = emit.state
        if len(state.in_hand()) == 1:
            return _award_uncontested(emit)
        number = state.street + 1
        if number == len(streets):
            return emit(StreetStarted(street=number, kind="showdown"))
        street = streets[number]
        if isinstance(street, (Deal, Board)):
            emit(StreetStarted(street=number, kind="deal"))
            deal = dealing.deal_street if isinstance(street, Deal) else dealing.deal_board
            emit(*deal(emit.state, street))
        elif isinstance(street, Draw):
            emit(StreetStarted(street=number, kind="draw"))
            return emit(ActionOn(seats=(state.next_seat(state.button, lambda s: s.in_hand),)))
        else:
            emit(StreetStarted(street=number, kind="bet"))
            first = openers.opener(emit.state, _opener_rule(emit.state, street))
            if first is not None and not betting.round_complete(emit.state):
                return emit(ActionOn(seats=(first,)))
            _close_round(emit)


def _opener_rule(state: HandState, street: Bet) -> str:
    if street.opener.startswith("option:"):
        return state.options[street.opener.removeprefix("option:")]
    return street.opener


def _close_round(emit: _Emitter) -> None:
    """An uncalled bet goes back (before the showdown); the round's bets join the pot."""
    bets = sorted(((s.bet, s.seat) for s in emit.state.seats), reverse=True)
    if len(bets) > 1 and bets[0][0] > bets[1][0]:
        emit(BetReturned(seat=bets[0][1], amount=bets[0][0] - bets[1][0]))
    emit(BettingRoundClosed(street=emit.state.street, pot=emit.state.pot))


def _award_uncontested(emit: _Emitter) -> None:
    (winner,) = emit.state.in_hand()
    amount = emit.state.pot
    emit(PotAwarded(pot=0, amount=amount, eligible=(winner.seat,), winners=(winner.seat,),
                    shares={str(winner.seat): amount}, reason="uncontested"))
    _end(emit)


def _showdown(state: HandState) -> list[Event]:
    if state.status != "showdown_pending":
        raise DomainError("no_showdown_pending", "the hand is not waiting for a showdown")
    emit = _Emitter(state)
    emit(*showdown(state, variant_of(state).judge))
    _end(emit)
    return emit.events


def _end(emit: _Emitter) -> None:
    state = emit.state
    emit(HandEnded(stacks={str(s.seat): s.stack for s in state.seats},
                   net={str(s.seat): s.stack - s.starting_stack - s.bought for s in state.seats}))


# --- evolving --------------------------------------------------------------

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
                state = replace(state, big_blind=event.seat, full_bet=True,
                                raise_size=state.options["big_blind"])
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
