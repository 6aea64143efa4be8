"""The poker engine: ``initial_state``, ``decide`` and ``evolve`` (``domain.poker.evolve``)
for any variant spec.

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
from domain.events import (ActionOn, BetReturned, BettingRoundClosed, ChipsBought, Event,
                           HandEnded, HandStarted, PotAwarded, StreetStarted)
from domain.poker import betting, dealing, openers
from domain.poker.forced import forced_bets
from domain.poker.showdown import showdown
from domain.poker.spec import Bet, Board, Deal, Draw, Variant
from domain.poker.evolve import apply
from domain.poker.state import HandState, SeatState
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

def evolve(state: HandState, event: Event) -> HandState:
    """Apply one event (``domain.poker.evolve``). ``decide`` has just computed the state
    after each event it returned, and the caller almost always applies those events next:
    that result is reused instead of computed again (same state in, same event: evolve is
    pure, so the answer is the same)."""
    known = _just_decided.get(id(event))
    if known is not None and known[0] is event and known[1] is state:
        return known[2]
    return apply(state, event)


_just_decided: dict[int, tuple[Event, HandState, HandState]] = {}


class _Emitter:
    """Collects events while keeping the state they lead to (and remembering each step for
    ``evolve``)."""

    def __init__(self, state: HandState):
        global _just_decided
        self.state = state
        self.events: list[Event] = []
        self.steps: dict[int, tuple[Event, HandState, HandState]] = {}
        _just_decided = self.steps

    def __call__(self, *events: Event) -> None:
        for event in events:
            after = apply(self.state, event)
            self.steps[id(event)] = (event, self.state, after)
            self.events.append(event)
            self.state = after


def _start(state: HandState, command: StartHand) -> list[Event]:
    if state.status != "not_started":
        raise DomainError("hand_already_started", "this hand has already started")
    variant = variant_of(state)
    if not variant.min_players <= len(command.seats) <= variant.max_players:
        code = ("not_enough_players" if len(command.seats) < variant.min_players
                else "too_many_players")
        raise DomainError(code, f"{variant.name} needs {variant.min_players} to "
                          f"{variant.max_players} players with chips, not {len(command.seats)}")
    emit = _Emitter(state)
    if command.deck is not None:  # imported: the document's cards, no seeds
        emit(HandStarted(game=state.game, hand_no=command.hand_no, options=state.options,
                         button=command.button, seats=tuple(command.seats), seed_commitment="",
                         client_seeds={}, deck=tuple(command.deck), source=command.source))
    else:
        client_seeds = {str(s["seat"]): command.client_seeds.get(str(s["seat"]), "")
                        for s in command.seats}
        emit(HandStarted(game=state.game, hand_no=command.hand_no, options=state.options,
                         button=command.button, seats=tuple(command.seats),
                         seed_commitment=fairness.seed_commitment(command.server_seed),
                         client_seeds=client_seeds,
                         deck=tuple(fairness.deck_order(command.server_seed, client_seeds,
                                                        command.hand_no)),
                         reshuffle_key=(fairness.reshuffle_key(command.server_seed)
                                        if state.options.get("reshuffle") == "seeded" else ""),
                         blinds=tuple(command.blinds)))
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
        started = next_street(state)
        emit(started)
        if started.kind == "showdown":
            return
        if started.kind == "deal":
            street = streets[started.street]
            deal = dealing.deal_street if isinstance(street, Deal) else dealing.deal_board
            emit(*deal(emit.state, street))
        else:
            first = first_to_act(emit.state)
            if first is not None:
                return emit(ActionOn(seats=(first,)))
            _close_round(emit)


def next_street(state: HandState) -> StreetStarted:
    """The street the hand goes on to: the variant's next, or the showdown after the last."""
    streets, number = variant_of(state).streets, state.street + 1
    if number == len(streets):
        return StreetStarted(street=number, kind="showdown")
    street = streets[number]
    return StreetStarted(street=number, kind="deal" if isinstance(street, (Deal, Board))
                         else "draw" if isinstance(street, Draw) else "bet")


def first_to_act(state: HandState) -> int | None:
    """Who acts first on a draw or betting street just started: at the draw the first
    player still in left of the button; in a betting round its opener, unless nobody has
    a bet to make (None: the round closes at once)."""
    street = variant_of(state).streets[state.street]
    if isinstance(street, Draw):
        return state.next_seat(state.button, lambda s: s.in_hand)
    first = openers.opener(state, _opener_rule(state, street))
    return first if first is not None and not betting.round_complete(state) else None


def _opener_rule(state: HandState, street: Bet) -> str:
    if street.opener.startswith("option:"):
        return state.options[street.opener.removeprefix("option:")]
    return street.opener


def _close_round(emit: _Emitter) -> None:
    """An uncalled bet goes back (before the showdown); the round's bets join the pot."""
    returned = uncalled(emit.state)
    if returned is not None:
        emit(returned)
    emit(BettingRoundClosed(street=emit.state.street, pot=emit.state.pot))


def uncalled(state: HandState) -> BetReturned | None:
    """The part of the round's largest bet that nobody matched, back to its seat."""
    bets = sorted(((s.bet, s.seat) for s in state.seats), reverse=True)
    if len(bets) > 1 and bets[0][0] > bets[1][0]:
        return BetReturned(seat=bets[0][1], amount=bets[0][0] - bets[1][0])
    return None


def _award_uncontested(emit: _Emitter) -> None:
    emit(uncontested(emit.state))
    _end(emit)


def uncontested(state: HandState) -> PotAwarded:
    """The whole pot to the one player left in."""
    (winner,) = state.in_hand()
    return PotAwarded(pot=0, amount=state.pot, eligible=(winner.seat,), winners=(winner.seat,),
                      shares={str(winner.seat): state.pot}, reason="uncontested")


def _showdown(state: HandState) -> list[Event]:
    if state.status != "showdown_pending":
        raise DomainError("no_showdown_pending", "the hand is not waiting for a showdown")
    emit = _Emitter(state)
    emit(*showdown(state, variant_of(state).judge))
    _end(emit)
    return emit.events


def _end(emit: _Emitter) -> None:
    emit(ended(emit.state))


def ended(state: HandState) -> HandEnded:
    """The hand's end: each seat's stack, and what it won or lost over the hand."""
    return HandEnded(stacks={str(s.seat): s.stack for s in state.seats},
                     net={str(s.seat): s.stack - s.starting_stack - s.bought for s in state.seats})
