"""Re-verifying a hand by the rules, from its events and its table's events.

The cryptographic checks (chain, commitments, seeds, deck, receipt) are
``domain.fairness``'s; these are the checks of the rules:

* ``completeness``: a hand the table says has ended ends with ``HandEnded``
  (a truncated hand fails), and an ended hand was settled at the table.
* ``table_start``: the table dealt in the players, and put the button and the
  blinds, where its rules put them (re-decided from the table before the hand),
  and the hand began with the seats, stacks, button, options, client seeds and
  seed commitment the table had published for it (an imported hand: with the
  game and number of the table's ``HandImported``).
* ``table_settlement``: the table took back exactly the hand's final stacks.
* ``replay_legality``: every event is what the rules decide for the move it
  records, re-decided from the state before it (this also re-derives the deck
  from the seeds).
* ``chip_conservation``: no chip was made or lost.

During a hand only the first two can run; the others need the hand's end (and
the server seed, revealed then).
"""

from __future__ import annotations

from functools import reduce

from domain import table as table_rules
from domain.errors import MALFORMED
from domain.events import (ChipsBought, Event, HandEnded, HandImported, HandOpened, HandSettled,
                           HandStarted, PotAwarded)
from domain.frozen import replace
from domain.games import game as game_of


def audit_hand(hand_no: int, events: list[Event], table_events: list[Event],
               server_seed: str | None) -> list[dict]:
    """Checks ``{"name", "ok", "detail"}``; those that need the end run once it has come."""
    checks = [("completeness", lambda: _completeness(hand_no, events, table_events)),
              ("table_start", lambda: _table_start(hand_no, events, table_events))]
    if _ended(events) and server_seed:
        checks += [("table_settlement", lambda: _table_settlement(hand_no, events, table_events)),
                   ("replay_legality", lambda: _replay_legality(events, server_seed)),
                   ("chip_conservation", lambda: _chip_conservation(events))]
    return [_check(name, check) for name, check in checks]


def _check(name, check) -> dict:
    try:
        problem = check()
    except MALFORMED as error:
        problem = f"{type(error).__name__}: {error}"
    return {"name": name, "ok": problem is None, "detail": problem or "ok"}


def _ended(events) -> HandEnded | None:
    return next((e for e in events if isinstance(e, HandEnded)), None)


def _settled(hand_no, table_events) -> HandSettled | None:
    return next((e for e in table_events
                 if isinstance(e, HandSettled) and e.hand_no == hand_no), None)


def _completeness(hand_no, events, table_events) -> str | None:
    ended, settled = _ended(events), _settled(hand_no, table_events)
    if settled and not ended:
        return (f"the table settled hand {hand_no} but the hand's events stop at version "
                f"{len(events)} without HandEnded: its end is missing")
    if ended and not settled:
        return "the hand ended but the table never settled it"
    if ended and not isinstance(events[-1], HandEnded):
        return f"events follow HandEnded (the hand has {len(events)} events)"
    return None


def _table_start(hand_no, events, table_events) -> str | None:
    if not events or not isinstance(events[0], HandStarted):
        return "the hand does not begin with HandStarted"
    started = events[0]
    imported = next((e for e in table_events
                     if isinstance(e, HandImported) and e.hand_no == hand_no), None)
    if imported is not None:
        if (started.game, started.hand_no) != (imported.game, hand_no) or not started.source:
            return "HandStarted differs from the table's HandImported"
        return None
    position = next((i for i, e in enumerate(table_events)
                     if isinstance(e, HandOpened) and e.hand_no == hand_no), None)
    if position is None:
        return f"the table's events never open hand {hand_no}"
    before = reduce(table_rules.evolve, table_events[:position], table_rules.initial_state())
    # (``before.next_seed_commitment`` was published with the table or the previous hand.)
    opened = table_rules.evolve(before, table_events[position])
    dealt = [s for s in before.seats if s.seat in opened.dealt_in]
    opening = table_events[position]
    found = started.to_dict()
    options = _options(before, opening, found["options"])
    problem = _opening_problem(before, opening, options)
    if problem:
        return problem
    expected = {
        "hand_no": hand_no, "button": opening.button, "blinds": list(opening.blinds),
        "game": opening.game, "options": options,
        "seed_commitment": before.next_seed_commitment,
        "seats": [{"seat": s.seat, "name": s.name, "stack": s.stack, "player_id": s.player_id}
                  for s in dealt],
        "client_seeds": {str(s.seat): s.client_seed for s in dealt},
    }
    wrong = [name for name, value in expected.items() if found[name] != value]
    if wrong:
        return f"HandStarted differs from what the table published for the hand: {', '.join(wrong)}"
    return None


def _opening_problem(before, opening: HandOpened, options: dict) -> str | None:
    """Whether the table dealt in, and put the button and the blinds, as its rules decide
    from its state ``before`` the hand, for a hand of these ``options``."""
    dealt_in = [s.seat for s in table_rules.players_for_next_hand(before, opening.game or None)]
    if not dealt_in:
        return "the table opened the hand with nobody whose stack covers the ante"
    button, blinds = table_rules.button_and_blinds(before, dealt_in, options)
    decided = {"dealt_in": dealt_in, "button": button, "blinds": list(blinds)}
    recorded = {"dealt_in": list(opening.dealt_in), "button": opening.button,
                "blinds": list(opening.blinds)}
    wrong = [f"{name} {recorded[name]} (the rules give {value})"
             for name, value in decided.items() if recorded[name] != value]
    if wrong:
        return f"the table's HandOpened is not what its rules decide: {'; '.join(wrong)}"
    return None


def _options(before, opening: HandOpened, found: dict) -> dict:
    """The options the table gave the hand: its own, or those its ``HandOpened`` records.
    A dealer's choice of another game opened before they were recorded had them resolved
    by the options its game had then: those added since are missing (the engine reads
    each as the rule before it), and the others are resolved as they are now."""
    if opening.options:
        return opening.options
    if opening.game in ("", before.game):
        return before.options
    now = table_rules.hand_options(before, opening.game)
    return {name: value for name, value in now.items() if name in found}


def _table_settlement(hand_no, events, table_events) -> str | None:
    settled, ended = _settled(hand_no, table_events), _ended(events)
    if settled is None:
        return f"the table's events never settle hand {hand_no}"
    if settled.stacks != ended.stacks:
        return (f"the table's HandSettled holds stacks {settled.stacks}, the hand ended with "
                f"{ended.stacks}")
    return None


def _replay_legality(events, server_seed) -> str | None:
    """Re-decide every move from the state before it; the outcome must be the stored events."""
    started = events[0]
    game = game_of(started.game)
    state = game.initial_state(started.options)
    position = 0
    while position < len(events):
        command = _command_at(game, events, position, server_seed)
        if command is None:
            return f"event {position + 1} ({events[position].type}) records no move"
        decided = _decided(game, state, command, events, position)
        if decided is None:
            return _first_difference(game.decide(state, command), events, position)
        state = reduce(game.evolve, decided, state)
        position += len(decided)
    return None


def _decided(game, state, command, events, position) -> list[Event] | None:
    """What the rules decide for ``command``, if the events from ``position`` begin with it:
    by the hand's options, or by an earlier rule (``game.earlier_rules``) of an option they
    lack."""
    decided = game.decide(state, command)
    if list(events[position:position + len(decided)]) == decided:
        return decided
    for rule in game.earlier_rules:
        if not any(name in state.options for name in rule):
            decided = game.decide(replace(state, options={**state.options, **rule}), command)
            if list(events[position:position + len(decided)]) == decided:
                return decided
    return None


def _first_difference(decided, events, position) -> str:
    """Where the stored events from ``position`` first part from what the rules decide."""
    stored = events[position:position + len(decided)]
    at = next((i for i, (found, due) in enumerate(zip(stored, decided)) if found != due),
              len(stored))
    if position + at >= len(events):
        return f"the events end where the rules decide {decided[at].type}"
    return (f"event {position + at + 1} ({events[position + at].type}) is not what the rules "
            "decide")


def _command_at(game, events, position, server_seed):
    """The command behind the events from ``position``: the first of them that records a
    move (a reshuffle, say, comes before the draw that needed it)."""
    for event in events[position:]:
        command = game.replay_command(event, server_seed)
        if command is not None:
            return command
    return None


def _chip_conservation(events) -> str | None:
    started, ended = events[0], _ended(events)
    before = sum(s["stack"] for s in started.seats)
    bought = sum(e.amount for e in events if isinstance(e, ChipsBought))
    after = sum(ended.stacks.values())
    if before + bought != after:
        return f"stacks held {before} before the hand, {bought} were added, and {after} after"
    if sum(ended.net.values()) != 0:
        return "the net changes do not sum to zero"
    awarded = sum(e.amount for e in events if isinstance(e, PotAwarded))
    paid = sum(sum(e.shares.values()) for e in events if isinstance(e, PotAwarded))
    if awarded != paid:
        return f"pots of {awarded} paid out {paid}"
    return None
