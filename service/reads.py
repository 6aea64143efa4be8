"""Reads of the service layer: tables and hands replayed from their streams, and what
each reader receives of them (the hand, its events, its history, receipt and audit).

State is rebuilt by replaying a stream; ``ReplayCache`` replays only what it has not
seen. Each reader gets the openings ``domain.views`` allows them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import reduce
from typing import Any, Callable, Iterator

from domain import fairness, phh
from domain import table as table_rules
from domain.audit import audit_hand
from domain.errors import MALFORMED, DomainError
from domain.events import Event, event_from_dict, holds_dicts
from domain.games import game as game_of
from domain.views import Viewer, as_dealt, sees_everything, view_hand, visible_openings
from service import jsonio
from service.keys import Keys
from service.store import (Envelope, EventStore, UnreadableRecord, VersionConflict, hand_stream,
                           receipt_key, table_stream)


class NotFound(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def shown(asked: str, limit: int = 64) -> str:
    """A name the client gave, as an answer repeats it: its first ``limit`` characters."""
    return asked if len(asked) <= limit else f"{asked[:limit]}..."


@dataclass(frozen=True)
class Loaded:
    state: Any
    version: int
    head_hash: str = fairness.GENESIS_HASH


class ReplayCache:
    """State per stream and version, so a read replays only events it has not seen.

    Bounded (least recently used out); a stream that is missing its cached head, or an
    event before it (it was shortened or rewritten), is replayed anew; nothing is kept for
    an empty stream.

    A read asks ``base`` for what it holds, reads what the stream has after it
    (``EventStore.read_on``, which also tells whether the stream still has that head),
    and gives it to ``advance``; so a caller can read several streams in one round trip."""

    def __init__(self, store: EventStore, to_event: Callable[[Envelope], Event],
                 size: int = 2048):
        self.store, self.to_event, self.size = store, to_event, size
        self._states: OrderedDict[str, Loaded] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, stream: str, initial: Callable[[], Any], evolve) -> Loaded:
        base = self.base(stream)
        ((since, new),) = self.store.read_on([(stream, base.version, base.head_hash)])
        return self.advance(stream, base, since, new, initial, evolve)

    def base(self, stream: str) -> Loaded:
        """What the cache holds of ``stream`` (version 0 when nothing)."""
        with self._lock:
            return self._states.get(stream) or Loaded(None, 0)

    def offer(self, stream: str, loaded: Loaded) -> None:
        """Keep ``loaded`` as what the cache holds of ``stream``, unless it holds a later
        version (a read checks it against the stream as any other)."""
        if self.base(stream).version < loaded.version:
            self._keep(stream, loaded)

    def extend(self, stream: str, base: Loaded, written: list[Envelope], events: list[Event],
               evolve) -> Loaded:
        """``base`` after ``events``, just appended to ``stream`` after it as ``written``,
        kept as a read would keep it: the writer's next read replays nothing. An event is
        evolved as decided (the engine has applied it once already), not read back from
        ``written``, unless it ``holds_dicts``: every other event reads back as it was
        decided (``tests/poker/test_every_variant.py``)."""
        kept = (self.to_event(envelope) if holds_dicts(type(event)) else event
                for event, envelope in zip(events, written))
        state = reduce(evolve, kept, base.state)
        return self._keep(stream, Loaded(state, base.version + len(written),
                                         written[-1].hash if written else base.head_hash))

    def advance(self, stream: str, base: Loaded, since: int, new: list[Envelope],
                initial: Callable[[], Any], evolve) -> Loaded:
        """The state after ``new``, the events of ``stream`` after version ``since``: after
        ``base`` or (``since`` 0) from the start."""
        if since and not new:
            return self._keep(stream, base)  # the stream has nothing after the cached state
        if since == 0:
            base = Loaded(initial(), 0)
        with replaying(stream):
            state = reduce(evolve, (self.to_event(e) for e in new), base.state)
        return self._keep(stream, Loaded(state, base.version + len(new),
                                         new[-1].hash if new else base.head_hash))

    def _keep(self, stream: str, loaded: Loaded) -> Loaded:
        with self._lock:
            if loaded.version:
                self._states[stream] = loaded
                self._states.move_to_end(stream)
            else:
                self._states.pop(stream, None)
            while len(self._states) > self.size:
                self._states.popitem(last=False)
        return loaded


@dataclass(frozen=True)
class Snapshot:
    """A table and, when asked for, one of its hands, read together in one round trip."""

    table_id: str
    table: Loaded
    hand_no: int | None = None
    hand: Loaded | None = None  # None when the table has no such hand
    held: bool = False  # as this process last saw them, not read: perhaps behind

    def the_hand(self) -> Loaded:
        if self.hand is None:
            raise no_hand(self.table_id, self.hand_no)
        return self.hand


def no_hand(table_id: str, hand_no: int | None) -> NotFound:
    return NotFound("hand_not_found", f"table {shown(table_id)} has no hand {hand_no}")


def opened_event(envelope: Envelope) -> Event:
    """The domain event of an envelope, its hidden values put back from the openings."""
    return event_from_dict(envelope.type, fairness.unseal(envelope.data, envelope.openings))


class replaying:
    """Around the replay of ``stream``'s stored events, and the views of the states they
    lead to: one that does not replay (``domain.errors.MALFORMED``) is an
    ``UnreadableRecord``, as one that does not decode (only a direct write to Redis
    leaves either). A class, not a ``contextmanager``: a read passes through one, and
    this costs a quarter as much."""

    def __init__(self, stream: str):
        self.stream = stream

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, _traceback) -> None:
        if kind is not None and issubclass(kind, MALFORMED):
            raise UnreadableRecord(self.stream, "an event does not replay: "
                                   f"{kind.__name__}: {error}") from None


class Reads:
    """The reading half of ``service.room.Cardroom``."""

    def __init__(self, store: EventStore, keys: Keys):
        self.store = store
        self.keys = keys
        self.cache = ReplayCache(store, opened_event)

    def snapshot(self, table_id: str, hand_no: int | None = None) -> Snapshot:
        """The table now and, if ``hand_no`` is given, that hand: one round trip to the store
        for both streams (each read on from where the cache stands)."""
        if "{" in table_id or "}" in table_id:  # never a table id: braces are the key's hash tag
            raise NotFound("table_not_found", f"no table {shown(table_id)}")
        streams = [table_stream(table_id)]
        if hand_no is not None:
            streams.append(hand_stream(table_id, hand_no))
        bases = [self.cache.base(stream) for stream in streams]
        read = self.store.read_on([(s, b.version, b.head_hash) for s, b in zip(streams, bases)])
        return self._advanced(table_id, hand_no, streams, bases, read)

    def held(self, table_id: str, hand_no: int) -> Snapshot | None:
        """The table and the hand as this process last saw them, with no round trip; None
        unless it holds both. A command decided on them writes to both streams (the table's
        with no events, if need be), so that its append, which checks each stream's version
        and head, refuses it if either has moved on, answering what it missed
        (``caught_up``)."""
        if "{" in table_id or "}" in table_id:
            return None
        table = self.cache.base(table_stream(table_id))
        hand = self.cache.base(hand_stream(table_id, hand_no))
        if not (table.version and hand.version):
            return None
        return Snapshot(table_id, table, hand_no, hand, held=True)

    def caught_up(self, now: Snapshot, conflict: VersionConflict) -> Snapshot:
        """``now`` with its streams advanced by what a refused append found after them, with
        no round trip; read afresh if that cannot tell (a stream gone: an archived hand)."""
        streams, bases = [table_stream(now.table_id)], [now.table]
        if now.hand_no is not None:
            if now.hand is None:
                return self.snapshot(now.table_id, now.hand_no)
            streams.append(hand_stream(now.table_id, now.hand_no))
            bases.append(now.hand)
        found = [conflict.found.get(stream) for stream in streams]
        if any(f is None or (f == (0, []) and b.version) for f, b in zip(found, bases)):
            return self.snapshot(now.table_id, now.hand_no)
        return self._advanced(now.table_id, now.hand_no, streams, bases, found)

    def _advanced(self, table_id: str, hand_no: int | None, streams: list[str],
                  bases: list[Loaded], read: list[tuple[int, list[Envelope]]]) -> Snapshot:
        """The snapshot after ``read``, the events of each stream after its base."""
        table = self.cache.advance(streams[0], bases[0], *read[0], table_rules.initial_state,
                                   table_rules.evolve)
        if not table.state.created:
            raise NotFound("table_not_found", f"no table {shown(table_id)}")
        with replaying(streams[0]):  # the table's events number the hands and name games
            if hand_no is None or not 1 <= hand_no <= table.state.hand_no:
                return Snapshot(table_id, table, hand_no)
            game = game_of(table.state.hand_games[hand_no - 1])
        options = table.state.options
        hand = self.cache.advance(streams[1], bases[1], *read[1],
                                  lambda: game.initial_state(options), game.evolve)
        return Snapshot(table_id, table, hand_no, hand)

    def table(self, table_id: str) -> Loaded:
        return self.snapshot(table_id).table

    def hand(self, table_id: str, hand_no: int) -> Loaded:
        return self.snapshot(table_id, hand_no).the_hand()

    def hand_view(self, table_id: str, hand_no: int, viewer: Viewer, at: int | None = None,
                  snapshot: Snapshot | None = None) -> dict:
        """The hand as ``viewer`` may see it now, or just after event ``at``: what they could
        see then, and everything where the reveal now applies to them (the hand has ended).
        ``snapshot``: the table and hand the caller read already."""
        hand = (snapshot or self.snapshot(table_id, hand_no)).the_hand()
        viewer = _reader(viewer, hand.state)
        if at is None:
            return self._seen(table_id, hand_no, hand.version, hand.state, viewer)
        if not 1 <= at <= hand.version:
            raise DomainError("version_out_of_range", f"hand {hand_no} has events 1 to "
                              f"{hand.version}, not {at}")
        state = self._replayed_to(table_id, hand_no, hand.state, at)
        return self._seen(table_id, hand_no, at, state, viewer)

    def _replayed(self, table_id: str, hand_no: int, now: Any):
        """Each stored event of the hand with the state just after it, from the start."""
        stream = hand_stream(table_id, hand_no)
        with replaying(stream):
            game = game_of(now.game)
        state = game.initial_state(self.table(table_id).state.options)
        for envelope in self.store.read(stream):
            with replaying(stream):
                state = game.evolve(state, opened_event(envelope))
            yield envelope, state

    def _seen(self, table_id: str, hand_no: int, version: int, state: Any,
              viewer: Viewer) -> dict:
        """The hand read: the state at ``version`` as ``viewer`` sees it."""
        with replaying(hand_stream(table_id, hand_no)):
            seen = view_hand(state, viewer)
        view = {"table_id": table_id, "version": version, **seen}
        if viewer.revealed:
            view["server_seed"] = self.keys.server_seed(table_id, hand_no)
        return view

    def follow(self, snapshot: Snapshot, viewer: Viewer, after: int | None,
               wait: Callable[[str, int], list[Envelope]]) -> Iterator[tuple[str, int, Any]]:
        """The hand as ``viewer`` follows it live, as ``(kind, version, data)``: without
        ``after``, first ``("snapshot", v, the hand read)``; then, for each event after
        ``after`` (or after the snapshot) as it is appended, ``("event", v, the projected
        event with its "state")``, each seen as the viewer could see it just then; at the
        end ``("end", v, {"version": v})``. ``("idle", v, None)`` each time ``wait(stream,
        v)`` comes back empty. ``after`` is checked now, before anything is yielded.
        ``snapshot``: the table and the hand, as the caller read them."""
        table_id, hand_no, hand = snapshot.table_id, snapshot.hand_no, snapshot.the_hand()
        if after is not None and not 0 <= after <= hand.version:
            raise DomainError("invalid_last_event_id", f"hand {hand_no} has events 1 to "
                              f"{hand.version}; the last event id {after} (Last-Event-ID or "
                              "last_event_id) is none of them")
        stream = hand_stream(table_id, hand_no)
        if after is None or after == hand.version:
            start = hand.state
        else:
            start = self._replayed_to(table_id, hand_no, hand.state, after)

        def followed():
            version, state = hand.version if after is None else after, start
            if after is None:
                yield "snapshot", version, self._seen(table_id, hand_no, version, state,
                                                      _reader(viewer, state))
            pending = [] if after is None else self.store.read(stream, after=after)
            while state.status != "ended":
                if not pending:
                    pending = wait(stream, version)
                    if not pending:
                        yield "idle", version, None
                        continue
                envelope = pending.pop(0)
                with replaying(stream):
                    state = game_of(state.game).evolve(state, opened_event(envelope))
                version = envelope.version
                reader = _reader(as_dealt(viewer, state), state)
                yield "event", version, {**project(envelope, reader, state),
                                         "state": self._seen(table_id, hand_no, version, state,
                                                             reader)}
            yield "end", version, {"version": version}

        return followed()

    def _replayed_to(self, table_id: str, hand_no: int, now: Any, version: int) -> Any:
        """The hand's state just after event ``version`` (before its first at 0)."""
        if version == 0:
            return game_of(now.game).initial_state(self.table(table_id).state.options)
        return next(state for envelope, state in self._replayed(table_id, hand_no, now)
                    if envelope.version == version)

    def hand_events(self, table_id: str, hand_no: int, viewer: Viewer, after: int = 0,
                    snapshot: Snapshot | None = None) -> list[dict]:
        hand = (snapshot or self.snapshot(table_id, hand_no)).the_hand()
        if after >= hand.version:  # the snapshot has just read the stream's end
            return []
        viewer, stream = as_dealt(viewer, hand.state), hand_stream(table_id, hand_no)
        with replaying(stream):
            return [project(e, viewer, hand.state) for e in self.store.read(stream, after=after)]

    def history(self, table_id: str, hand_no: int, viewer: Viewer) -> dict:
        """Everything ``python3 -m domain.fairness verify`` needs, as ``viewer`` may see it,
        and beside each event the hand just after it (as ``hand_view(at=...)`` gives it),
        replayed once from the start."""
        hand = self.hand(table_id, hand_no)
        viewer = _reader(as_dealt(viewer, hand.state), hand.state)
        events = [{**project(envelope, viewer, hand.state),
                   "state": self._seen(table_id, hand_no, envelope.version, state, viewer)}
                  for envelope, state in self._replayed(table_id, hand_no, hand.state)]
        return {"table_id": table_id, "hand_no": hand_no, "status": hand.state.status,
                "version": len(events), "events": events,
                "server_seed": self.keys.server_seed(table_id, hand_no) if viewer.revealed
                else None,
                "receipt": self._stored_receipt(table_id, hand_no),
                "public_key": self.keys.public_key}

    def phh(self, table_id: str, hand_no: int, viewer: Viewer) -> str:
        """The ended hand as a PHH document, its cards as ``viewer`` may see them."""
        hand = self.hand(table_id, hand_no)
        if hand.state.status != "ended":
            raise DomainError("hand_not_ended", f"hand {hand_no} has not ended; it is exported "
                              "once it has")
        viewer = _reader(as_dealt(viewer, hand.state), hand.state)
        events, stream = [], hand_stream(table_id, hand_no)
        receipt = self._stored_receipt(table_id, hand_no)
        with replaying(stream):
            for envelope in self.store.read(stream):
                seen = project(envelope, viewer, hand.state)
                events.append(event_from_dict(envelope.type,
                                              fairness.unseal(envelope.data, seen["openings"])))
            return phh.export(events, {
                "_table_id": table_id, "_hand_no": hand_no,
                "_seed_commitment": events[0].seed_commitment or None,
                "_receipt": receipt and {**receipt, "public_key": self.keys.public_key}})

    def receipt(self, table_id: str, hand_no: int) -> dict:
        if self.hand(table_id, hand_no).state.status != "ended":
            raise DomainError("hand_not_ended", f"hand {hand_no} has not ended; its receipt is "
                              "signed when it does")
        signed = self._stored_receipt(table_id, hand_no)
        if signed is None:
            raise NotFound("receipt_not_found", f"hand {hand_no} ended without a stored receipt; "
                           "its audit fails")
        return {**signed, "public_key": self.keys.public_key}

    def _stored_receipt(self, table_id: str, hand_no: int) -> dict | None:
        """The hand's signed receipt as stored, if any; ``UnreadableRecord`` if it is not one
        (the audit reads it as it is, and its ``receipt`` check says what is wrong)."""
        key = receipt_key(table_id, hand_no)
        signed = self.store.get_json(key)
        if signed is not None and not (
                isinstance(signed, dict) and isinstance(signed.get("receipt"), dict)
                and isinstance(signed.get("signature"), str)):
            raise UnreadableRecord(key, "not a signed receipt")
        return signed

    def audit(self, table_id: str, hand_no: int, snapshot: Snapshot | None = None) -> dict:
        """Every check of a hand, read afresh from the store (never from the cache): its
        events, its table's and its receipt in one round trip. ``snapshot``: the table as
        the caller read it already. A stored record that does not decode fails the audit,
        as ``stored_records``. A hand the table's events do not open is audited if it has
        events (its ``table_start`` fails), else not found."""
        table = (snapshot or self.snapshot(table_id)).table.state
        if hand_no < 1:
            raise no_hand(table_id, hand_no)
        try:
            (envelopes, table_envelopes), (receipt,) = self.store.read_whole(
                [hand_stream(table_id, hand_no), table_stream(table_id)],
                [receipt_key(table_id, hand_no)])
            with replaying(table_stream(table_id)):
                if hand_no > table.hand_no and not envelopes:  # else audited: the table lost it
                    raise no_hand(table_id, hand_no)
        except UnreadableRecord as error:
            playing = table.hand_in_progress and table.hand_no == hand_no  # as the table says
            return {"table_id": table_id, "hand_no": hand_no,
                    "status": "in_progress" if playing else "ended", "valid": False,
                    "checks": [{"name": "stored_records", "ok": False,
                                "detail": f"a stored record does not decode: {error}"}]}
        ended = any(e.type == "HandEnded" for e in envelopes)
        document = {"table_id": table_id, "hand_no": hand_no, "version": len(envelopes),
                    "events": [{**e.to_dict(), "openings": e.openings} for e in envelopes],
                    "server_seed": self.keys.server_seed(table_id, hand_no) if ended else None,
                    "receipt": receipt}
        checks = fairness.verify_history(document, self.keys.public_key,
                                         [canonical_as_stored(e) for e in envelopes],
                                         rules_replayed=True)
        table_events = [e.to_dict() for e in table_envelopes]
        table_problem = fairness.chain_problem(table_events,
                                               [canonical_as_stored(e) for e in table_envelopes])
        checks.append({"name": "table_chain", "ok": table_problem is None,
                       "detail": table_problem or f"{len(table_envelopes)} table events chained"})
        checks.append(_table_signed(receipt, table_events))
        checks += self._rule_checks(hand_no, envelopes, table_envelopes, document["server_seed"])
        audit = {"table_id": table_id, "hand_no": hand_no,
                 "status": "ended" if ended else "in_progress"}
        if not ended:
            checks = [c for c in checks if not c.get("skipped")]
            audit["note"] = ("the hand is in progress: the chain, the commitments and the start "
                             "are checked now; the seed, the deck, the receipt, the settlement "
                             "and the rules once it has ended")
        return {**audit, "valid": all(c["ok"] for c in checks), "checks": checks}

    @staticmethod
    def _rule_checks(hand_no, envelopes, table_envelopes, server_seed) -> list[dict]:
        try:
            events = [opened_event(e) for e in envelopes]
            table_events = [opened_event(e) for e in table_envelopes]
        except MALFORMED as error:
            return [{"name": "replay_legality", "ok": False,
                     "detail": f"the stored events cannot be read: {type(error).__name__}: {error}"}]
        return audit_hand(hand_no, events, table_events, server_seed)


def _table_signed(signed: Any, table_events: list[dict]) -> dict:
    """``table_signed``: skipped without a receipt that names the table's event (none yet,
    one signed before receipts did, or one that does not parse: the ``receipt`` check
    fails those)."""
    receipt = signed.get("receipt") if isinstance(signed, dict) else None
    if not isinstance(receipt, dict) or "table_head_hash" not in receipt:
        return {"name": "table_signed", "ok": True, "skipped": True,
                "detail": "no receipt that names the table's events (none yet, or one signed "
                          "before receipts did)"}
    problem = fairness.table_signed_problem(receipt, table_events)
    return {"name": "table_signed", "ok": problem is None, "detail": problem or (
        f"the receipt signs the table's events up to event {receipt['table_version']}")}


def _reader(viewer: Viewer, now: Any) -> Viewer:
    """The viewer, marked ``revealed`` where the reveal applies to them now: then they see
    everything also at the hand's earlier events."""
    revealed = sees_everything(viewer, now)
    return viewer if revealed == viewer.revealed else replace(viewer, revealed=revealed)


def canonical_as_stored(envelope: Envelope) -> str | None:
    """The envelope's data as stored where that is exactly ``canonical_json`` of its data,
    else None: a chain hashed over it (``fairness.envelope_hash``) gets the verifier's
    verdict without the data being encoded again (told as ``jsonio.canonical`` tells it)."""
    text = envelope.data_json
    if text is None or jsonio.canonical_by_orjson(envelope.data) != text.encode():
        return None
    return text


def project(envelope: Envelope, viewer: Viewer, state: Any, event: Event | None = None,
            ) -> dict:
    """A stored event as ``viewer`` receives it: the chained fields (commitments in place of
    hidden values) and the openings they may see. ``event``: its domain event, if known."""
    visible = visible_openings(event or opened_event(envelope), viewer, state)
    try:
        openings = {p: envelope.openings[p] for p in visible}
    except KeyError as missing:  # only a direct write to the store removes one
        raise UnreadableRecord(f"event {envelope.version}", f"no opening {missing}") from None
    return {**envelope.to_dict(), "openings": openings}
