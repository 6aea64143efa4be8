"""Betting rounds: who must act, what each player may do, and the fact each action causes.

Amounts are totals for the round ("bet to", "raise to"); the structure
(``structures``) says how big a bet or raise may be. What this module adds:

* ``all_in: side_pots`` (001, "Running out of chips"; 003; 004 "table stakes"): a player
  may call, bet or raise all in for less; side pots form. ``all_in: forbidden`` (000,
  "all bets must be covered"): nobody is ever all in; bets and raises are covered in
  full, and a player short of a call adds chips during the hand (``add_chips``, "game
  will be paused to accommodate buying more chips") or folds.
* A full bet or raise reopens the betting to everyone. An all-in for less than a full
  raise does not reopen it to players who have already acted: they may call or fold,
  unless such all-ins together have raised the bet they acted on by a full raise
  (``short_all_ins_add_up``: as cardrooms play it, where the books are silent).
* ``half_bet_rule`` (fixed limit; as cardrooms play it by Robert's Rules of Poker, where
  the books are silent; tables created before it lack it, and play the full-bet rule): an
  all-in bet or raise that raises the last full bet or raise by at least half a bet counts
  as full (it reopens the betting, and counts toward the cap); one of less may be called,
  or completed to a full one by a player the betting is open to: an opening bet to a full
  bet (``complete``, which is no raise), a raise to a full bet over the last full one.
  Without it (the full-bet rule, as PokerKit plays it) only a full bet or raise counts,
  and a raise goes a full bet over the all-in.
* ``max_raises`` caps the raises after the opening bet (null: no cap); no-limit has none.
  Nobody raises, or completes a bring-in (``complete_needs_a_caller``), when every other
  player is all in: there would be no one to call it.
* A player may fold at any turn, even with nothing to call (000's Example B folds at the
  start of the second round).
* Stud with a bring-in (003): the seat the cards name brings in (less than a full bet)
  or completes to a full bet; until someone completes, the others call the bring-in,
  complete, or fold. The completion is the round's opening bet, not a raise.
"""

from __future__ import annotations

from domain.errors import DomainError
from domain.events import (BetCompleted, BetPlaced, BringInPosted, ChipsBought, Event,
                           PlayerCalled, PlayerChecked, PlayerFolded, PlayerRaised)
from domain.options import MAX_AMOUNT
from domain.poker import structures
from domain.poker.forced import short_call_to
from domain.poker.state import ACTIVE, FOLDED, HandState, SeatState


def waiting_on(state: HandState) -> list[int]:
    """The seats that still have to act in this round, in seat order: a player who can act
    and has not matched the bet, or (while someone else can still act) has not acted since
    the last full bet or raise. None once one player is left in the hand. The bet of a big
    blind or bring-in posted short (``short_forced_bet: full``) is matched only while
    someone else can still act: the last player able to act who has put in at least as much
    as every other player still in has nothing to call."""
    seats = state.seats
    if sum(s.status != FOLDED for s in seats) <= 1:
        return []
    if sum(s.status == ACTIVE for s in seats) > 1:
        return [s.seat for s in seats if s.status == ACTIVE and (
            s.bet < state.current_bet or not s.acted)]
    to_match = min(state.current_bet, max(s.bet for s in seats if s.status != FOLDED))
    return [s.seat for s in seats if s.status == ACTIVE and s.bet < to_match]


def round_complete(state: HandState) -> bool:
    return not waiting_on(state)


def next_to_act(state: HandState, after: int) -> int | None:
    waiting = waiting_on(state)
    return next((s for s in waiting if s > after), waiting[0]) if waiting else None


def legal_actions(state: HandState, seat: SeatState) -> list[dict]:
    """What ``seat`` may do now. A bet or raise allows the totals ``min`` + whole ``step``s up
    to ``max``, and also ``all_in`` where that total is off the steps or below ``min``."""
    options = state.options
    covered = options["all_in"] == "forbidden"
    reach = seat.bet + seat.stack
    to_call = state.current_bet - seat.bet
    sizes = structures.sizes(state, seat)
    if _bring_in_due(state):
        bring = options["bring_in"]
        if bring > reach and covered:  # (a bring-in is at most MAX_AMOUNT: a purchase covers it)
            return [_call_or_buy(state, seat, bring, covered)]
        return [a for a in ({"type": "bring_in", "amount": min(bring, reach)},
                            _completion(sizes, reach, max(bring, state.current_bet), covered))
                if a is not None]
    actions = [{"type": "check"} if to_call <= 0 else _call_or_buy(state, seat, state.current_bet,
                                                                   covered)]
    if _completion_open(state):
        if not options.get("complete_needs_a_caller", False) or _a_caller(state, seat):
            actions.append(_completion(sizes, reach, state.current_bet, covered))
    elif _short_bet_to_complete(state, seat):
        if _a_caller(state, seat):
            actions.append(_completion(sizes, reach, state.current_bet, covered))
    elif state.current_bet == 0:
        actions.append(_amounts("bet", sizes.bet_min, sizes.bet_max, sizes.step, reach, covered))
    elif (_may_raise(state, seat, sizes) and not _capped(state) and reach > state.current_bet
          and _a_caller(state, seat)):
        actions.append(_amounts("raise", sizes.raise_min, sizes.raise_max, sizes.step, reach,
                                covered))
    actions.append({"type": "fold"})
    return [a for a in actions if a is not None]


def action_event(state: HandState, seat: SeatState, kind: str, amount: int | None) -> Event:
    """The fact an action causes, or the DomainError that says why it is refused."""
    legal = {a["type"]: a for a in legal_actions(state, seat)}
    action = legal.get(kind)
    if action is None:
        raise _refusal(state, seat, kind, legal)
    if kind == "fold":
        return PlayerFolded(seat=seat.seat)
    if kind == "check":
        return PlayerChecked(seat=seat.seat)
    if kind == "add_chips":
        if amount is None:
            raise DomainError("amount_required", "add_chips needs an amount (the chips added)")
        if not action["min"] <= amount <= action["max"]:
            raise DomainError("amount_out_of_range", f"add between {action['min']} and "
                              f"{action['max']} chips, not {amount}")
        return ChipsBought(seat=seat.seat, amount=amount)
    if kind in ("call", "bring_in", "complete") and amount not in (None, action["amount"]):
        raise DomainError("amount_out_of_range", f"{kind} is to {action['amount']} here (the "
                          f"total of the round); send that amount or none, not {amount}")
    if kind == "call":
        return PlayerCalled(seat=seat.seat, to=action["amount"], added=action["amount"] - seat.bet)
    if kind == "bring_in":
        return BringInPosted(seat=seat.seat, to=action["amount"],
                             added=action["amount"] - seat.bet, call_to=short_call_to(
                                 state, state.options["bring_in"], action["amount"]))
    if kind == "complete":
        to = action["amount"]
        return BetCompleted(seat=seat.seat, to=to, added=to - seat.bet,
                            full=_full(state, to, structures.sizes(state, seat).bet_min))
    return _aggressive_event(state, seat, kind, amount, action)


def _aggressive_event(state, seat, kind, amount, action) -> Event:
    if amount is None:
        raise DomainError("amount_required", f"{kind} needs an amount (the total bet)")
    on_steps = action["min"] <= amount <= action["max"] and (amount - action["min"]) % action["step"] == 0
    if not on_steps and amount != action.get("all_in"):
        extra = f", or all in to {action['all_in']}" if "all_in" in action else ""
        raise DomainError("amount_out_of_range", f"{kind} to between {action['min']} and "
                          f"{action['max']} in steps of {action['step']}{extra}, not {amount}")
    if amount - seat.bet > seat.stack:
        raise DomainError("insufficient_chips", f"{kind} to {amount} needs {amount - seat.bet} "
                          f"chips; the stack holds {seat.stack}")
    sizes = structures.sizes(state, seat)
    full = _full(state, amount, sizes.bet_min if kind == "bet" else sizes.raise_min)
    cls = BetPlaced if kind == "bet" else PlayerRaised
    return cls(seat=seat.seat, to=amount, added=amount - seat.bet, full=full)


def _full(state: HandState, to: int, least: int) -> bool:
    """Whether a bet, raise or completion to ``to`` counts as full: it reaches ``least``, or
    (``half_bet_rule``) it goes past the last full bet or raise by at least half the way."""
    if to >= least:
        return True
    beyond = to - state.full_to
    return structures.half_bet_rule(state.options) and 2 * beyond >= least - state.full_to


def _short_bet_to_complete(state: HandState, seat: SeatState) -> bool:
    """``half_bet_rule``: an all-in opening bet of less than half a bet stands, and the
    betting is open to ``seat`` (a player who checked before it may only call it)."""
    return (structures.half_bet_rule(state.options) and state.current_bet > 0 and not state.full_bet
            and seat.may_raise)


def _completion(sizes: structures.Sizes, reach: int, above: int, covered: bool) -> dict | None:
    """Completing the bring-in to a full bet, or all in for less (above ``above``)."""
    if sizes.bet_min <= reach:
        return {"type": "complete", "amount": sizes.bet_min}
    if not covered and reach > above:
        return {"type": "complete", "amount": reach, "all_in": True}
    return None


def _call_or_buy(state: HandState, seat: SeatState, to: int, covered: bool) -> dict | None:
    """Calling ``to``: in full, all in for less, or (all bets covered) after adding chips,
    up to what keeps the player's chips in the hand within ``MAX_AMOUNT`` (at least the
    chips to call). A purchase names at most ``MAX_AMOUNT``, as a buy-in does: a call that
    needs more cannot be made (the player may fold)."""
    if to - seat.bet <= seat.stack:
        return {"type": "call", "amount": to}
    if not covered:
        return {"type": "call", "amount": seat.bet + seat.stack, "all_in": True}
    least = to - seat.bet - seat.stack
    if least > MAX_AMOUNT:
        return None
    return {"type": "add_chips", "min": least,
            "max": max(least, MAX_AMOUNT - seat.stack - seat.committed)}


def _amounts(kind: str, low: int, high: int, step: int, reach: int, covered: bool) -> dict | None:
    top = min(high, reach)
    if top >= low:
        action = {"type": kind, "min": low, "max": low + (top - low) // step * step, "step": step}
        if not covered and reach < high and reach > action["max"]:
            action["all_in"] = reach
        return action
    if covered:
        return None
    return {"type": kind, "min": reach, "max": reach, "step": step, "all_in": reach}


def _may_raise(state: HandState, seat: SeatState, sizes: structures.Sizes) -> bool:
    """Whether the betting is open to ``seat``: it has not acted since the last full bet or
    raise, or (``short_all_ins_add_up``) all-ins each short of a full raise have since
    raised the bet it acted on by a full raise together. A hand whose options do not name
    the option was played before it: a full bet or raise alone reopens the betting."""
    if seat.may_raise:
        return True
    full_raise = sizes.raise_min - state.current_bet
    return (state.options.get("short_all_ins_add_up", False)
            and state.current_bet - seat.bet >= full_raise)


def _a_caller(state: HandState, seat: SeatState) -> bool:
    """Whether another player could still call a bet of ``seat``'s (is not all in)."""
    return any(s.can_act for s in state.seats if s.seat != seat.seat)


def _bring_in_due(state: HandState) -> bool:
    return (state.betting_round == 1 and state.options.get("bring_in", 0) > 0
            and state.current_bet == 0)


def _completion_open(state: HandState) -> bool:
    return state.betting_round == 1 and state.options.get("bring_in", 0) > 0 and not state.full_bet


def _capped(state: HandState) -> bool:
    cap = state.options.get("max_raises")
    return (cap is not None and state.options["structure"] in structures.CAPPED
            and state.raises >= cap)


def _refusal(state: HandState, seat: SeatState, kind: str, legal: dict) -> DomainError:
    offered = ", ".join(legal) or "nothing"
    if kind == "raise" and "call" in legal and _capped(state):
        return DomainError("raise_cap_reached",
                           f"{state.options['max_raises']} raises already made in this round")
    if kind == "call" and "add_chips" in legal:
        return DomainError("insufficient_chips", f"calling {state.current_bet} needs "
                           f"{state.current_bet - seat.bet} chips; the stack holds {seat.stack}; "
                           "all bets must be covered: add chips (add_chips) or fold")
    if kind in ("bet", "raise") and not any(k in legal for k in ("bet", "raise", "complete")):
        if state.options["all_in"] == "forbidden" and seat.stack + seat.bet <= state.current_bet:
            return DomainError("insufficient_chips", f"the stack of {seat.stack} cannot cover "
                               f"a {kind}; all bets must be covered")
    return DomainError("illegal_action", f"{kind} is not possible now; legal: {offered}")
