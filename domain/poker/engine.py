"""The poker engine: ``initial_state``, ``decide`` and ``evolve`` for any variant spec.

Turn order (rule book 000, "Betting"): every round and every draw begins with
the first player still in to the dealer's left and goes clockwise (to higher
seat numbers, wrapping). Showdown order: the last player to bet or raise in
the final round shows first, else the first player to the dealer's left.
"""

from __future__ import annotations

from dataclasses import replace
from math import gcd

from domain import fairness
from domain.cards import codes, parse_cards
from domain.commands import Act, Showdown, StartHand
from domain.errors import DomainError
from domain.evaluation import high
from domain.events import (AntePosted, BetPlaced, BettingRoundClosed, CardsDealt, CardsDrawn,
                           Event, HandEnded, HandStarted, PlayerCalled, PlayerChecked,
                           PlayerFolded, PlayerRaised, PotAwarded, ShowdownEvaluated,
                           StreetStarted)
from domain.poker import betting
from domain.poker.spec import Deal, Draw, Variant
from domain.poker.state import ALL_IN, FOLDED, HandState, SeatState
from domain.poker.variants import VARIANTS
from domain.pots import build_pots, split


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


def current_limits(state: HandState) -> betting.Limits:
    """The limits of the betting round being played."""
    return betting.round_limits(state.options, variant_of(state).streets[state.street].limit)


def legal_actions(state: HandState, seat: int | None) -> list[dict]:
    if seat is None or state.to_act != seat:
        return []
    if state.status == "drawing":
        return [{"type": "draw", "max_cards": state.options["max_discard"]}]
    return betting.legal_actions(state, state.seat(seat), current_limits(state))


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
    emit = _Emitter(state)
    client_seeds = {str(s["seat"]): command.client_seeds.get(str(s["seat"]), "")
                    for s in command.seats}
    emit(HandStarted(game=state.game, hand_no=command.hand_no, options=state.options,
                     button=command.button, seats=tuple(command.seats),
                     seed_commitment=fairness.seed_commitment(command.server_seed),
                     client_seeds=client_seeds,
                     deck=tuple(fairness.deck_order(command.server_seed, client_seeds,
                                                    command.hand_no))))
    if state.options["ante"]:
        emit(*(AntePosted(seat=s.seat, amount=min(state.options["ante"], s.stack))
               for s in emit.state.from_left_of_button()))
    _advance(emit)
    return emit.events


def _act(state: HandState, command: Act) -> list[Event]:
    if state.status == "showdown_pending":
        raise DomainError("showdown_pending", "betting is over; the showdown is being settled")
    if not any(s.seat == command.seat for s in state.seats):
        raise DomainError("not_in_hand", f"seat {command.seat} was not dealt in")
    if state.to_act != command.seat:
        raise DomainError("not_your_turn", f"seat {state.to_act} is to act, not {command.seat}")
    seat = state.seat(command.seat)
    emit = _Emitter(state)
    if state.status == "drawing":
        emit(_draw_event(state, seat, command))
        if not any(s.in_hand and not s.acted for s in emit.state.seats):
            _advance(emit)
        return emit.events
    emit(betting.betting_event(state, seat, command.type, command.amount, current_limits(state)))
    if betting.round_complete(emit.state):
        emit(BettingRoundClosed(street=state.street, pot=emit.state.pot))
        _advance(emit)
    return emit.events


def _draw_event(state: HandState, seat: SeatState, command: Act) -> CardsDrawn:
    if command.type != "draw":
        raise DomainError("illegal_action", f"{command.type} is not possible now; it is the draw")
    discards = list(command.cards)
    if len(discards) > state.options["max_discard"]:
        raise DomainError("too_many_discards", f"at most {state.options['max_discard']} "
                          f"cards may be discarded, not {len(discards)}")
    if len(set(discards)) != len(discards):
        raise DomainError("duplicate_cards", "a card is discarded twice")
    missing = [c for c in discards if c not in seat.cards]
    if missing:
        raise DomainError("card_not_in_hand", f"{' '.join(missing)} not in seat {seat.seat}'s hand")
    return CardsDrawn(seat=seat.seat, discarded=tuple(discards),
                      received=state.deck[:len(discards)])


def _advance(emit: _Emitter) -> None:
    """Run the streets that need no player until one does, or the hand is decided."""
    streets = variant_of(emit.state).streets
    while True:
        state = emit.state
        if len(state.in_hand()) == 1:
            return _award_uncontested(emit)
        number = state.street + 1
        if number == len(streets):
            return emit(StreetStarted(street=number, kind="showdown", to_act=None))
        street = streets[number]
        if isinstance(street, Deal):
            emit(StreetStarted(street=number, kind="deal", to_act=None))
            emit(*_deal(emit.state, street))
        elif isinstance(street, Draw):
            first = state.next_seat(state.button, lambda s: s.in_hand)
            return emit(StreetStarted(street=number, kind="draw", to_act=first))
        else:
            can_act = [s for s in state.seats if s.can_act]
            first = state.next_seat(state.button, lambda s: s.can_act) if len(can_act) > 1 else None
            emit(StreetStarted(street=number, kind="bet", to_act=first))
            if first is not None:
                return
            emit(BettingRoundClosed(street=number, pot=state.pot))


def _deal(state: HandState, street: Deal) -> list[CardsDealt]:
    """One card at a time to each player still in, from the dealer's left."""
    players = [s.seat for s in state.from_left_of_button() if s.in_hand]
    deck = iter(state.deck)
    events = []
    for count, face_up in ((street.down, False), (street.up, True)):
        rounds = [[next(deck) for _ in players] for _ in range(count)]
        events += [CardsDealt(seat=seat, cards=tuple(r[i] for r in rounds), face_up=face_up)
                   for i, seat in enumerate(players) if rounds]
    return events


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
    values = {s.seat: high(parse_cards(s.cards)) for s in state.in_hand()}
    emit(ShowdownEvaluated(hands=tuple(
        {"seat": seat, "cards": state.seat(seat).cards, "category": values[seat].category,
         "description": values[seat].describe(), "best": tuple(codes(values[seat].cards))}
        for seat in _showdown_order(state))))
    left_first = [s.seat for s in state.from_left_of_button()]
    committed = {s.seat: s.committed for s in state.seats}
    in_hand = {s.seat for s in state.in_hand()}
    for number, pot in enumerate(build_pots(committed, in_hand)):
        best = max(values[seat] for seat in pot.eligible)
        winners = [seat for seat in left_first if seat in pot.eligible and values[seat] == best]
        shares = split(pot.amount, winners, _chip(state.options))
        emit(PotAwarded(pot=number, amount=pot.amount, eligible=pot.eligible,
                        winners=tuple(winners), shares={str(k): v for k, v in shares.items()},
                        reason="showdown"))
    _end(emit)
    return emit.events


def _showdown_order(state: HandState) -> list[int]:
    start = state.last_aggressor
    if start is None or not state.seat(start).in_hand:
        start = state.next_seat(state.button, lambda s: s.in_hand)
    ordered = sorted(state.in_hand(), key=lambda s: (s.seat < start, s.seat))
    return [s.seat for s in ordered]


def _chip(options: dict) -> int:
    """The smallest unit a split pot is divided in: the common chip of ante and bets."""
    sizes = [options["ante"], options["bet_unit"]] if options["structure"] == "house" else [
        options["ante"], options["small_bet"], options["big_bet"]]
    return gcd(*sizes) or 1


def _end(emit: _Emitter) -> None:
    state = emit.state
    emit(HandEnded(stacks={str(s.seat): s.stack for s in state.seats},
                   net={str(s.seat): s.stack - s.starting_stack for s in state.seats}))


# --- evolving --------------------------------------------------------------

def evolve(state: HandState, event: Event) -> HandState:
    match event:
        case HandStarted():
            seats = tuple(SeatState(seat=s["seat"], name=s["name"], stack=s["stack"],
                                    starting_stack=s["stack"], player_id=s.get("player_id", ""))
                          for s in event.seats)
            return replace(state, hand_no=event.hand_no, button=event.button, seats=seats,
                           status="dealing", deck=tuple(event.deck),
                           seed_commitment=event.seed_commitment,
                           client_seeds=dict(event.client_seeds), options=dict(event.options))
        case AntePosted():
            return _pay(state, event.seat, event.amount)
        case CardsDealt():
            seat = state.seat(event.seat)
            return replace(state.with_seat(
                event.seat, cards=seat.cards + event.cards,
                face_up=seat.face_up + (event.face_up,) * len(event.cards)),
                deck=tuple(c for c in state.deck if c not in event.cards))
        case StreetStarted():
            return _start_street(state, event)
        case PlayerChecked():
            return _after_action(state.with_seat(event.seat, acted=True), event.seat)
        case PlayerCalled():
            return _after_action(_pay(state, event.seat, event.added, acted=True), event.seat)
        case BetPlaced() | PlayerRaised():
            raised = isinstance(event, PlayerRaised)
            state = replace(state, seats=tuple(replace(s, acted=False) for s in state.seats),
                            current_bet=event.to, opened=True, last_aggressor=event.seat,
                            raises=state.raises + raised)
            return _after_action(_pay(state, event.seat, event.added, acted=True), event.seat)
        case PlayerFolded():
            return _after_action(state.with_seat(event.seat, status=FOLDED), event.seat)
        case CardsDrawn():
            return _drawn(state, event)
        case BettingRoundClosed():
            return replace(state, to_act=None)
        case ShowdownEvaluated():
            return replace(state, showdown=event.hands)
        case PotAwarded():
            for seat, share in event.shares.items():
                state = state.with_seat(int(seat), stack=state.seat(int(seat)).stack + share)
            return replace(state, pots_awarded=state.pots_awarded + (event.to_dict(),))
        case HandEnded():
            return replace(state, status="ended", to_act=None,
                           result={"pots": list(state.pots_awarded), "net": dict(event.net)})
    return state


def _pay(state: HandState, seat_no: int, amount: int, acted: bool | None = None) -> HandState:
    seat = state.seat(seat_no)
    changes = {"stack": seat.stack - amount, "committed": seat.committed + amount}
    if acted is not None:
        changes["bet"] = seat.bet + amount
        changes["acted"] = acted
    if changes["stack"] == 0:
        changes["status"] = ALL_IN
    return state.with_seat(seat_no, **changes)


def _after_action(state: HandState, seat: int) -> HandState:
    return replace(state, to_act=betting.next_to_act(state, seat))


def _start_street(state: HandState, event: StreetStarted) -> HandState:
    if event.kind == "bet":
        return replace(state, street=event.street, status="betting", to_act=event.to_act,
                       current_bet=0, raises=0, opened=False, last_aggressor=None,
                       seats=tuple(replace(s, bet=0, acted=False) for s in state.seats))
    status = {"deal": "dealing", "draw": "drawing", "showdown": "showdown_pending"}[event.kind]
    seats = tuple(replace(s, acted=False) for s in state.seats)
    return replace(state, street=event.street, status=status, to_act=event.to_act, seats=seats)


def _drawn(state: HandState, event: CardsDrawn) -> HandState:
    seat = state.seat(event.seat)
    replacements = iter(event.received)
    cards = tuple(next(replacements) if c in event.discarded else c for c in seat.cards)
    state = replace(state.with_seat(event.seat, cards=cards, acted=True),
                    deck=state.deck[len(event.received):])
    return replace(state, to_act=state.next_seat(event.seat, lambda s: s.in_hand and not s.acted))
