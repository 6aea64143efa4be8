"""Forced bets before the deal: antes and blinds (the stud bring-in is a player's action,
see ``betting``).

* Antes (000, 001, 003): every player dealt in, from the dealer's left. They go to the
  pot and are not part of anyone's bet (004).
* Blinds (003, 004): the small blind left of the button, the big blind left of the small
  blind; heads-up, the button posts the small blind (common cardroom practice, where the
  books are silent). Under the dead button the table places them (``HandStarted.blinds``,
  see ``domain.table``): a small blind whose seat is not dealt in is not posted. Blinds
  are live: they count as the seat's bet in the first round, and the big blind is the
  round's opening bet.

A player whose stack cannot cover a forced bet posts what it has (with ``all_in:
forbidden`` the table deals in only players who cover the ante). The others then call
the whole big blind (``short_forced_bet: full``, as cardrooms play it: the books are
silent), or what it posted (``posted``, PHH's and PokerKit's rule); the same holds for a
stud bring-in (``betting``).

An imported hand posts exactly the document's forced bets, seat by seat
(``HandState.source["forced"]``): antes of any size (a big blind or button ante),
and blinds in order from the small blind, those after the big blind being straddles.
The first round then opens left of the largest blind (PHH's and PokerKit's rule).
"""

from __future__ import annotations

from domain.events import AntePosted, BlindPosted, Event
from domain.poker.state import HandState


def forced_bets(state: HandState, forced: tuple[str, ...]) -> list[Event]:
    if "forced" in state.source:
        return _as_written(state, state.source["forced"])
    events: list[Event] = []
    ante = state.options.get("ante", 0)
    if "ante" in forced and ante:
        events += [AntePosted(seat=s.seat, amount=min(ante, s.stack))
                   for s in state.from_left_of_button()]
    if "blinds" in forced:
        stacks = {s.seat: s.stack - (min(ante, s.stack) if "ante" in forced else 0)
                  for s in state.seats}
        for seat, blind in zip(blind_seats(state), ("small", "big")):
            if seat is None:
                continue  # a dead small blind
            nominal = state.options[f"{blind}_blind"]
            amount = min(nominal, stacks[seat])
            call_to = short_call_to(state, nominal, amount) if blind == "big" else None
            if amount or call_to:  # a big blind whose ante took its stack still stands
                events.append(BlindPosted(seat=seat, amount=amount, blind=blind,
                                          call_to=call_to))
    return events


def short_call_to(state: HandState, nominal: int, posted: int) -> int | None:
    """The bet the others must call after a forced bet of ``nominal`` posted as ``posted``,
    where it is not what was posted: the whole forced bet, posted short at a table that
    plays it in full. A hand whose options do not name ``short_forced_bet`` was played
    before it: ``posted``."""
    full = state.options.get("short_forced_bet", "posted") == "full"
    return nominal if full and posted < nominal else None


def blind_seats(state: HandState) -> tuple[int | None, int]:
    """The small and the big blind's seats (whether or not their stacks can post them); no
    small blind's seat where the dead button left it dead."""
    if state.blinds:
        small, big = state.blinds
        return (small if any(s.seat == small for s in state.seats) else None), big
    order = state.from_left_of_button()
    small, big = (order[-1], order[0]) if len(order) == 2 else (order[0], order[1])
    return small.seat, big.seat


def _as_written(state: HandState, forced: dict) -> list[Event]:
    antes, blinds = forced.get("antes", {}), forced.get("blinds", {})
    stacks = {s.seat: s.stack for s in state.seats}
    events: list[Event] = []
    for seat in [s.seat for s in state.from_left_of_button()]:
        if amount := min(antes.get(str(seat), 0), stacks[seat]):
            events.append(AntePosted(seat=seat, amount=amount))
            stacks[seat] -= amount
    for position, seat in enumerate(_blind_order(state)):
        written = blinds.get(str(seat), 0)
        amount = min(written, stacks[seat])
        blind = ("small", "big", "straddle")[min(position, 2)]
        call_to = short_call_to(state, written, amount) if blind == "big" else None
        if amount or call_to:
            events.append(BlindPosted(seat=seat, amount=amount, blind=blind, call_to=call_to))
    return events


def _blind_order(state: HandState) -> list[int]:
    small, big = blind_seats(state)
    return [*(seat for seat in (small, big) if seat is not None),
            *(s.seat for s in state.from_left_of_button() if s.seat not in (small, big))]


def largest_blind(state: HandState) -> int:
    """The seat the first round opens after: the largest blind or straddle, the last in
    order of those tied (the big blind, unless a table's small blind is the larger)."""
    blinds = state.source.get("forced", {}).get("blinds")
    if not blinds:
        small, big = blind_seats(state)
        blinds = {str(small): state.options.get("small_blind") or 0,
                  str(big): state.options.get("big_blind") or 0}
    order = _blind_order(state)
    return max(order, key=lambda seat: (blinds.get(str(seat), 0), order.index(seat)))
