"""Betting rounds: the limits of each structure, who must act, what is legal.

Structures (shared/API.md "Table options"; rule book 000 "House Betting Standards"):

* ``house`` -- spread limit in whole ``bet_unit`` chips. In a round at limit L
  (1 in the first round of Five Card Draw, 2 in the last) a bet opens at 1 to L
  units and each raise adds 1 to L units. So round one opens at 25 and raises
  by 25; round two opens at 25 or 50 and raises by 25 or 50 (000's Example B).
* ``fixed-limit`` -- bets and raises are exactly ``small_bet`` (L=1) or ``big_bet``.

``max_raises`` caps the raises after the opening bet (null: no cap). With
``all_in: forbidden`` (000: "all bets must be covered") nobody may bet or call
more than their stack; a player short of a call can only fold. With
``all_in: side_pots`` a player short of a call may call for all they have.
Bets and raises must always be covered in full. A player whose stack reaches
zero is all in: they act no more and play for the pots they have matched.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import DomainError
from domain.events import BetPlaced, Event, PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised
from domain.poker.state import HandState, SeatState


@dataclass(frozen=True)
class Limits:
    open_min: int
    open_max: int
    raise_min: int  # added on top of the current bet
    raise_max: int
    step: int


def round_limits(options: dict, limit: int) -> Limits:
    if options["structure"] == "fixed-limit":
        size = options["small_bet"] if limit == 1 else options["big_bet"]
        return Limits(size, size, size, size, size)
    unit = options["bet_unit"]
    return Limits(unit, unit * limit, unit, unit * limit, unit)


def needs_action(state: HandState, seat: SeatState) -> bool:
    if not seat.can_act:
        return False
    if seat.bet < state.current_bet:
        return True
    others_can_act = any(s.can_act for s in state.seats if s.seat != seat.seat)
    return not seat.acted and others_can_act


def round_complete(state: HandState) -> bool:
    return len(state.in_hand()) <= 1 or not any(needs_action(state, s) for s in state.seats)


def next_to_act(state: HandState, after: int) -> int | None:
    if round_complete(state):
        return None
    return state.next_seat(after, lambda s: needs_action(state, s))


def legal_actions(state: HandState, seat: SeatState, limits: Limits) -> list[dict]:
    """What ``seat`` may do now, with the amounts as "bet to" totals for this round."""
    reach = seat.bet + seat.stack
    to_call = state.current_bet - seat.bet
    actions: list[dict] = []
    if to_call == 0:
        actions.append({"type": "check"})
    else:
        if to_call <= seat.stack:
            actions.append({"type": "call", "amount": state.current_bet})
        elif state.options["all_in"] == "side_pots":
            actions.append({"type": "call", "amount": reach, "all_in": True})
    if not state.opened:
        high = min(limits.open_max, _on_step(reach, 0, limits.step))
        if high >= limits.open_min:
            actions.append({"type": "bet", "min": limits.open_min, "max": high, "step": limits.step})
    elif not _raise_capped(state):
        low = state.current_bet + limits.raise_min
        high = min(state.current_bet + limits.raise_max,
                   _on_step(reach, state.current_bet, limits.step))
        if high >= low:
            actions.append({"type": "raise", "min": low, "max": high, "step": limits.step})
    if to_call > 0:
        actions.append({"type": "fold"})
    return actions


def betting_event(state: HandState, seat: SeatState, action: str, amount: int | None,
                  limits: Limits) -> Event:
    """The fact a betting action causes, or the DomainError that says why it is refused."""
    if action == "fold":
        return PlayerFolded(seat=seat.seat)
    legal = {a["type"]: a for a in legal_actions(state, seat, limits)}
    if action == "check" and "check" in legal:
        return PlayerChecked(seat=seat.seat)
    if action == "call" and "call" in legal:
        to = legal["call"]["amount"]
        return PlayerCalled(seat=seat.seat, to=to, added=to - seat.bet)
    if action == "call" and state.current_bet > seat.bet:
        raise DomainError("insufficient_chips", f"calling {state.current_bet} needs "
                          f"{state.current_bet - seat.bet} chips; the stack holds {seat.stack}; "
                          "all bets must be covered (add chips between hands)")
    if action in ("bet", "raise"):
        return _aggressive_event(state, seat, action, amount, limits)
    raise DomainError("illegal_action", f"{action} is not possible now; legal: "
                      f"{', '.join(legal) or 'nothing'}")


def _aggressive_event(state, seat, action, amount, limits) -> Event:
    if action == "bet" and state.opened:
        raise DomainError("illegal_action", "the round is already opened: call, raise or fold")
    if action == "raise" and not state.opened:
        raise DomainError("illegal_action", "nothing to raise: bet to open the round")
    if action == "raise" and _raise_capped(state):
        raise DomainError("raise_cap_reached",
                          f"{state.options['max_raises']} raises already made in this round")
    if amount is None:
        raise DomainError("amount_required", f"{action} needs an amount (the total bet)")
    base = 0 if action == "bet" else state.current_bet
    low = limits.open_min if action == "bet" else base + limits.raise_min
    high = limits.open_max if action == "bet" else base + limits.raise_max
    if not low <= amount <= high or (amount - base) % limits.step:
        raise DomainError("amount_out_of_range", f"{action} to between {low} and {high} "
                          f"in steps of {limits.step}, not {amount}")
    if amount - seat.bet > seat.stack:
        raise DomainError("insufficient_chips", f"{action} to {amount} needs "
                          f"{amount - seat.bet} chips; the stack holds {seat.stack}")
    cls = BetPlaced if action == "bet" else PlayerRaised
    return cls(seat=seat.seat, to=amount, added=amount - seat.bet)


def _raise_capped(state: HandState) -> bool:
    cap = state.options["max_raises"]
    return cap is not None and state.raises >= cap


def _on_step(reach: int, base: int, step: int) -> int:
    """The highest total at most ``reach`` that is ``base`` plus whole steps."""
    return base + (reach - base) // step * step if reach >= base else base - 1
