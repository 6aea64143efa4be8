"""The service layer: each client command, from loading state to the one atomic append.

Routes call one method here; every game rule stays in ``domain``. State is
rebuilt by replaying a stream (``ReplayCache`` replays only what it has not
seen). Every write is one ``EventStore.append``: a hand's last events and the
table's ``HandSettled`` land together or not at all.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from functools import reduce
from typing import Any, Callable

from domain import table as table_rules
from domain.audit import audit_hand
from domain.commands import (Act, AddChips, CreateTable, LeaveTable, OpenHand, SeatPlayer,
                             SettleHand, Showdown, StartHand)
from domain.errors import DomainError
from domain.events import Event, HandEnded, StreetStarted, event_from_dict
from domain.poker import engine
from domain.poker.state import HandState
from domain.poker.variants import VARIANTS
from domain.table import TableState
from domain.views import Viewer, as_dealt, view_event
from service.store import (DuplicateCommand, Envelope, EventStore, NewEvent, StreamWrite,
                           VersionConflict, hand_stream, table_stream, verify_chain)

log = logging.getLogger(__name__)

SHOWDOWN_JOB = "showdown"
RETRIES = 8  # attempts when a write races with another on a stream the client did not pin


class NotFound(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class StaleVersion(Exception):
    def __init__(self, current: int):
        super().__init__(f"the hand is at version {current}")
        self.current = current


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Loaded:
    state: Any
    version: int


class ReplayCache:
    """State per stream and version, so a read replays only events it has not seen."""

    def __init__(self, store: EventStore, size: int = 2048):
        self.store, self.size = store, size
        self._states: OrderedDict[str, Loaded] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, stream: str, initial: Callable[[], Any], evolve) -> Loaded:
        with self._lock:
            cached = self._states.get(stream)
        if cached is None:
            cached = Loaded(initial(), 0)
        new = self.store.read(stream, after=cached.version)
        state = reduce(evolve, (to_event(e) for e in new), cached.state)
        loaded = Loaded(state, cached.version + len(new))
        with self._lock:
            self._states[stream] = loaded
            self._states.move_to_end(stream)
            while len(self._states) > self.size:
                self._states.popitem(last=False)
        return loaded


def to_event(envelope: Envelope) -> Event:
    return event_from_dict(envelope.type, envelope.data)


def new_events(events: list[Event]) -> list[NewEvent]:
    return [NewEvent(e.type, e.to_dict()) for e in events]


class Cardroom:
    def __init__(self, store: EventStore, enqueue_showdown: Callable[[str, int], None] | None):
        self.store = store
        self.cache = ReplayCache(store)
        self.enqueue_showdown = enqueue_showdown

    # --- reads -------------------------------------------------------------

    def table(self, table_id: str) -> Loaded:
        if "{" in table_id or "}" in table_id:  # never a table id: braces are the key's hash tag
            raise NotFound("table_not_found", f"no table {table_id}")
        loaded = self.cache.load(table_stream(table_id), table_rules.initial_state,
                                 table_rules.evolve)
        if not loaded.state.created:
            raise NotFound("table_not_found", f"no table {table_id}")
        return loaded

    def hand(self, table_id: str, hand_no: int) -> Loaded:
        table = self.table(table_id).state
        if not 1 <= hand_no <= table.hand_no:
            raise NotFound("hand_not_found", f"table {table_id} has no hand {hand_no}")
        return self.cache.load(hand_stream(table_id, hand_no), lambda: _new_hand(table),
                               engine.evolve)

    def hand_events(self, table_id: str, hand_no: int, viewer: Viewer, after: int = 0,
                    ) -> list[dict]:
        state = self.hand(table_id, hand_no).state
        envelopes = self.store.read(hand_stream(table_id, hand_no), after=after)
        viewer = as_dealt(viewer, state)
        return [project(e, viewer, state.status == "ended") for e in envelopes]

    def audit(self, table_id: str, hand_no: int) -> list[dict]:
        """The checks of a hand: its hash chain, then the domain's re-verification."""
        self.hand(table_id, hand_no)
        envelopes = self.store.read(hand_stream(table_id, hand_no))
        chain_problems = verify_chain(envelopes)
        return [{"name": "hash_chain", "ok": not chain_problems,
                 "detail": "; ".join(chain_problems) or f"{len(envelopes)} events chained"},
                *audit_hand([to_event(e) for e in envelopes])]

    # --- table commands ----------------------------------------------------

    def create_table(self, game: str, options: dict, max_seats: int | None) -> dict:
        table_id = uuid.uuid4().hex[:16]
        admin, auditor = new_token(), new_token()
        seats = max_seats if max_seats is not None else (
            VARIANTS[game].max_players if game in VARIANTS else 0)
        events = table_rules.decide(table_rules.initial_state(), CreateTable(
            game=game, options=options, max_seats=seats,
            admin_token_hash=hash_token(admin), auditor_token_hash=hash_token(auditor)))
        self.store.register_table(table_id)
        self.store.append([StreamWrite(table_stream(table_id), 0, new_events(events))],
                          actor="anonymous")
        return {"table_id": table_id, "admin_token": admin, "auditor_token": auditor,
                "game": game, "max_seats": seats, "options": events[0].options}

    def seat_player(self, table_id: str, name: str, buy_in: int, idempotency_key: str | None,
                    ) -> dict:
        token, player_id = new_token(), uuid.uuid4().hex[:16]
        command = SeatPlayer(player_id=player_id, name=name, buy_in=buy_in,
                             token_hash=hash_token(token))

        def answer(events):
            return {"seat": events[0].seat, "player_id": player_id, "token": token}
        return self._table_command(table_id, command, "anonymous", answer,
                                   ("join", idempotency_key))

    def add_chips(self, table_id: str, seat: int, amount: int, idempotency_key: str | None,
                  ) -> dict:
        def answer(events):
            return {"seat": seat, "stack": self.table(table_id).state.seat(seat).stack + amount}
        return self._table_command(table_id, AddChips(seat=seat, amount=amount), f"seat:{seat}",
                                   answer, (f"chips:{seat}", idempotency_key))

    def leave(self, table_id: str, seat: int, actor: str) -> dict:
        return self._table_command(table_id, LeaveTable(seat=seat), actor,
                                   lambda events: {"seat": seat,
                                                   "cashed_out": events[0].cashed_out})

    def _table_command(self, table_id, command, actor, answer, idempotency=None) -> dict:
        scope, key = idempotency or (None, None)

        def attempt():
            loaded = self.table(table_id)
            events = table_rules.decide(loaded.state, command)
            body = answer(events)
            self.store.append(
                [StreamWrite(table_stream(table_id), loaded.version, new_events(events))],
                actor=actor, command_id=key, idempotency=(table_id, scope, key) if key else None,
                response=lambda _: body)
            return body
        return self._once(table_id, scope, key, attempt)

    # --- hand commands -----------------------------------------------------

    def start_hand(self, table_id: str, idempotency_key: str | None) -> dict:
        scope = "start_hand"

        def attempt():
            table = self.table(table_id)
            (opened,) = table_rules.decide(table.state, OpenHand())
            after = table_rules.evolve(table.state, opened)
            seats = tuple({"seat": s.seat, "name": s.name, "stack": s.stack,
                           "player_id": s.player_id}
                          for s in table.state.seats if s.seat in after.dealt_in)
            hand_events = engine.decide(_new_hand(table.state), StartHand(
                hand_no=opened.hand_no, button=opened.button, seats=seats,
                seed=secrets.token_hex(32)))
            body = {"hand_no": opened.hand_no, "version": len(hand_events)}
            self.store.append(
                [StreamWrite(table_stream(table_id), table.version, new_events([opened])),
                 StreamWrite(hand_stream(table_id, opened.hand_no), 0, new_events(hand_events))],
                actor="admin", command_id=idempotency_key,
                idempotency=(table_id, scope, idempotency_key) if idempotency_key else None,
                response=lambda _: body)
            return body
        return self._once(table_id, scope, idempotency_key, attempt)

    def act(self, table_id: str, hand_no: int, command: Act, expected_version: int | None,
            idempotency_key: str | None) -> dict:
        """Apply one player's move; 201 body ``{"version", "events"}`` as the player sees it."""
        scope = f"hand:{hand_no}:seat:{command.seat}"
        stream = hand_stream(table_id, hand_no)

        def attempt():
            hand = self.hand(table_id, hand_no)
            if expected_version is not None and expected_version != hand.version:
                raise StaleVersion(hand.version)
            events = engine.decide(hand.state, command)
            viewer = Viewer("player", command.seat)
            try:
                written = self._append_hand(
                    table_id, hand_no, hand.version, events, actor=f"seat:{command.seat}",
                    command_id=idempotency_key,
                    idempotency=(table_id, scope, idempotency_key) if idempotency_key else None,
                    response=lambda by_stream: _action_answer(by_stream[stream], viewer, events))
            except VersionConflict as conflict:
                if expected_version is not None and conflict.stream == stream:
                    raise StaleVersion(conflict.actual) from None
                raise
            return _action_answer(written[stream], viewer, events)
        return self._once(table_id, scope, idempotency_key, attempt)

    def _once(self, table_id: str, scope: str, key: str | None, attempt: Callable[[], dict],
              ) -> dict:
        """Run ``attempt`` until it writes, trying again when a stream it read moved on.

        With an Idempotency-Key the command takes effect once: a retry gets the first
        answer, even when it raced the first copy and lost (the copy's write made this
        one stale or illegal)."""
        def remembered():
            return key and self.store.remembered_response(table_id, scope, key)
        for _ in range(RETRIES):
            if answer := remembered():
                return answer
            try:
                return attempt()
            except DuplicateCommand as duplicate:
                return duplicate.response
            except VersionConflict:
                continue
            except (DomainError, StaleVersion):
                if answer := remembered():
                    return answer
                raise
        raise DomainError("busy", "the table changed too often while this command was tried")

    def settle_showdown(self, table_id: str, hand_no: int) -> bool:
        """The showdown job: settle a pending hand once; False if there was nothing to do."""
        for _ in range(RETRIES):
            hand = self.hand(table_id, hand_no)
            if hand.state.status != "showdown_pending":
                return False
            events = engine.decide(hand.state, Showdown())
            try:
                self._append_hand(table_id, hand_no, hand.version, events, actor="worker",
                                  command_id=f"showdown:{hand_no}")
                return True
            except VersionConflict:
                continue
        return False

    def _append_hand(self, table_id, hand_no, version, events, **append_args):
        """Append a hand's events, with the table's ``HandSettled`` when they end the hand and
        the showdown job owed (or paid) when they lead to (or are) the showdown."""
        writes = [StreamWrite(hand_stream(table_id, hand_no), version, new_events(events))]
        ended = next((e for e in events if isinstance(e, HandEnded)), None)
        owed = any(isinstance(e, StreetStarted) and e.kind == "showdown" for e in events)
        job = (table_id, f"{SHOWDOWN_JOB}:{hand_no}")
        if ended is not None:
            table = self.table(table_id)
            settled = table_rules.decide(table.state, SettleHand(hand_no=hand_no,
                                                                 stacks=ended.stacks))
            writes.append(StreamWrite(table_stream(table_id), table.version,
                                      new_events(settled)))
        written = self.store.append(writes, owe_job=job if owed else None,
                                    settle_job=job if ended is not None else None, **append_args)
        if owed and self.enqueue_showdown is not None:
            try:
                self.enqueue_showdown(table_id, hand_no)
            except Exception:  # the owed marker is written: the sweeper enqueues it later
                log.exception("enqueueing the showdown of %s/%s failed", table_id, hand_no)
        return written


def _new_hand(table: TableState) -> HandState:
    return engine.initial_state({"game": table.game, "options": table.options})


def project(envelope: Envelope, viewer: Viewer, ended: bool) -> dict:
    return envelope.with_data(view_event(to_event(envelope), viewer, ended)).to_dict()


def _action_answer(envelopes: list[Envelope], viewer: Viewer, events: list[Event]) -> dict:
    ended = any(isinstance(e, HandEnded) for e in events)
    return {"version": envelopes[-1].version if envelopes else None,
            "events": [project(e, viewer, ended) for e in envelopes]}
