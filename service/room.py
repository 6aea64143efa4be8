"""The service layer: each client command, from loading state to the one atomic append.

Routes call one method here; every game rule stays in ``domain``. State is
rebuilt by replaying a stream (``ReplayCache`` replays only what it has not
seen). Every write is one ``EventStore.append``: a hand's last events, the
table's ``HandSettled`` and the hand's signed receipt land together or not at all.

Hidden values are sealed on the way in (``domain.fairness.seal``: commitments in
the chained data, openings beside it) and each reader gets the openings
``domain.views`` allows them. Seeds and tokens are derived from the secret key
(``service.keys``), so neither is ever stored.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import reduce
from typing import Any, Callable

from domain import fairness
from domain import table as table_rules
from domain.audit import audit_hand
from domain.commands import (Act, AddChips, CreateTable, LeaveTable, OpenHand, SeatPlayer,
                             SetClientSeed, SettleHand, Showdown, StartHand)
from domain.errors import DomainError
from domain.events import Event, HandEnded, event_from_dict
from domain.games import GAMES
from domain.games import game as game_of
from domain.views import Viewer, as_dealt, hidden_values, sees_everything, view_hand, visible_openings
from service.keys import Keys
from service.store import (DuplicateCommand, Envelope, EventStore, Idempotency, NewEvent,
                           StreamWrite, VersionConflict, hand_stream, receipt_key, table_stream)

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


@dataclass(frozen=True)
class ClientKey:
    """An Idempotency-Key and the fingerprint of the request it came with."""

    key: str
    fingerprint: str


@dataclass(frozen=True)
class Loaded:
    state: Any
    version: int
    head_hash: str = fairness.GENESIS_HASH


class ReplayCache:
    """State per stream and version, so a read replays only events it has not seen.

    Bounded (least recently used out); a stream that is missing its cached head (it
    was shortened or rewritten) is replayed anew; nothing is kept for an empty stream."""

    def __init__(self, store: EventStore, to_event: Callable[[Envelope], Event],
                 size: int = 2048):
        self.store, self.to_event, self.size = store, to_event, size
        self._states: OrderedDict[str, Loaded] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, stream: str, initial: Callable[[], Any], evolve) -> Loaded:
        with self._lock:
            cached = self._states.get(stream)
        new = []
        if cached is not None:
            new = self.store.read(stream, after=cached.version - 1)
            if new and new[0].version == cached.version and new[0].hash == cached.head_hash:
                new = new[1:]
            else:
                cached = None
        if cached is None:
            cached, new = Loaded(initial(), 0), self.store.read(stream)
        state = reduce(evolve, (self.to_event(e) for e in new), cached.state)
        loaded = Loaded(state, cached.version + len(new), new[-1].hash if new else cached.head_hash)
        with self._lock:
            if loaded.version:
                self._states[stream] = loaded
                self._states.move_to_end(stream)
            else:
                self._states.pop(stream, None)
            while len(self._states) > self.size:
                self._states.popitem(last=False)
        return loaded


def opened_event(envelope: Envelope) -> Event:
    """The domain event of an envelope, its hidden values put back from the openings."""
    return event_from_dict(envelope.type, fairness.unseal(envelope.data, envelope.openings))


def sealed(events: list[Event], game_id: str | None = None) -> list[NewEvent]:
    """The events with the values a game hides (none at a table) sealed."""
    new = []
    for event in events:
        hidden = hidden_values(game_id, event) if game_id else {}
        data, openings = fairness.seal(event.to_dict(), hidden,
                                       lambda: secrets.token_hex(fairness.SALT_BYTES))
        new.append(NewEvent(event.type, data, openings))
    return new


class Cardroom:
    def __init__(self, store: EventStore, keys: Keys,
                 enqueue_showdown: Callable[[str, int], None] | None):
        self.store = store
        self.keys = keys
        self.cache = ReplayCache(store, opened_event)
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
        game = game_of(table.hand_games[hand_no - 1])
        return self.cache.load(hand_stream(table_id, hand_no),
                               lambda: game.initial_state(table.options), game.evolve)

    def hand_view(self, table_id: str, hand_no: int, viewer: Viewer, at: int | None = None,
                  ) -> dict:
        """The hand as ``viewer`` may see it now, or just after event ``at``: what they could
        see then, and everything where the reveal now applies to them (the hand has ended)."""
        hand = self.hand(table_id, hand_no)
        viewer = replace(viewer, revealed=sees_everything(viewer, hand.state))
        state, version = hand.state, hand.version
        if at is not None:
            if not 1 <= at <= hand.version:
                raise DomainError("version_out_of_range", f"hand {hand_no} has events 1 to "
                                  f"{hand.version}, not {at}")
            game = game_of(hand.state.game)
            table = self.table(table_id).state
            events = self.store.read(hand_stream(table_id, hand_no))[:at]
            state = reduce(game.evolve, map(opened_event, events),
                           game.initial_state(table.options))
            version = at
        return self._seen(table_id, hand_no, version, state, viewer)

    def _seen(self, table_id: str, hand_no: int, version: int, state: Any,
              viewer: Viewer) -> dict:
        """The hand read: the state at ``version`` as ``viewer`` sees it."""
        view = {"table_id": table_id, "version": version, **view_hand(state, viewer)}
        if viewer.revealed:
            view["server_seed"] = self.keys.server_seed(table_id, hand_no)
        return view

    def hand_events(self, table_id: str, hand_no: int, viewer: Viewer, after: int = 0,
                    ) -> list[dict]:
        state = self.hand(table_id, hand_no).state
        viewer = as_dealt(viewer, state)
        return [project(e, viewer, state)
                for e in self.store.read(hand_stream(table_id, hand_no), after=after)]

    def history(self, table_id: str, hand_no: int, viewer: Viewer) -> dict:
        """Everything ``python3 -m domain.fairness verify`` needs, as ``viewer`` may see it,
        and beside each event the hand just after it (as ``hand_view(at=...)`` gives it),
        replayed once from the start."""
        hand = self.hand(table_id, hand_no)
        viewer = as_dealt(viewer, hand.state)
        viewer = replace(viewer, revealed=sees_everything(viewer, hand.state))
        game = game_of(hand.state.game)
        state = game.initial_state(self.table(table_id).state.options)
        events = []
        for envelope in self.store.read(hand_stream(table_id, hand_no)):
            state = game.evolve(state, opened_event(envelope))
            events.append({**project(envelope, viewer, hand.state),
                           "state": self._seen(table_id, hand_no, envelope.version, state,
                                               viewer)})
        return {"table_id": table_id, "hand_no": hand_no, "status": hand.state.status,
                "version": len(events), "events": events,
                "server_seed": self.keys.server_seed(table_id, hand_no) if viewer.revealed
                else None,
                "receipt": self.store.get_json(receipt_key(table_id, hand_no)),
                "public_key": self.keys.public_key}

    def receipt(self, table_id: str, hand_no: int) -> dict:
        if self.hand(table_id, hand_no).state.status != "ended":
            raise DomainError("hand_not_ended", f"hand {hand_no} has not ended; its receipt is "
                              "signed when it does")
        signed = self.store.get_json(receipt_key(table_id, hand_no))
        if signed is None:
            raise NotFound("receipt_not_found", f"hand {hand_no} ended without a stored receipt; "
                           "its audit fails")
        return {**signed, "public_key": self.keys.public_key}

    def audit(self, table_id: str, hand_no: int) -> dict:
        """Every check of a hand, read afresh from the store (never from the cache)."""
        self.hand(table_id, hand_no)
        envelopes = self.store.read(hand_stream(table_id, hand_no))
        table_envelopes = self.store.read(table_stream(table_id))
        ended = any(e.type == "HandEnded" for e in envelopes)
        document = {"table_id": table_id, "hand_no": hand_no, "version": len(envelopes),
                    "events": [{**e.to_dict(), "openings": e.openings} for e in envelopes],
                    "server_seed": self.keys.server_seed(table_id, hand_no) if ended else None,
                    "receipt": self.store.get_json(receipt_key(table_id, hand_no))}
        checks = fairness.verify_history(document, self.keys.public_key)
        table_problem = fairness.chain_problem([e.to_dict() for e in table_envelopes])
        checks.append({"name": "table_chain", "ok": table_problem is None,
                       "detail": table_problem or f"{len(table_envelopes)} table events chained"})
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
        except (KeyError, TypeError, ValueError) as error:
            return [{"name": "replay_legality", "ok": False,
                     "detail": f"the stored events cannot be read: {type(error).__name__}: {error}"}]
        return audit_hand(hand_no, events, table_events, server_seed)

    # --- table commands ----------------------------------------------------

    def create_table(self, game: str, options: dict, max_seats: int | None) -> dict:
        table_id = uuid.uuid4().hex[:16]
        admin, auditor = self.keys.token("admin", table_id), self.keys.token("auditor", table_id)
        seats = max_seats if max_seats is not None else (
            GAMES[game].max_players if game in GAMES else 0)
        events = table_rules.decide(table_rules.initial_state(), CreateTable(
            game=game, options=options, max_seats=seats,
            admin_token_hash=hash_token(admin), auditor_token_hash=hash_token(auditor),
            next_seed_commitment=self.keys.seed_commitment(table_id, 1)))
        self.store.append([StreamWrite(table_stream(table_id), 0, sealed(events))],
                          actor="anonymous")
        return {"table_id": table_id, "admin_token": admin, "auditor_token": auditor,
                "game": game, "max_seats": seats, "options": events[0].options,
                "next_seed_commitment": events[0].next_seed_commitment}

    def seat_player(self, table_id: str, name: str, buy_in: int, client_seed: str,
                    client_key: ClientKey | None) -> dict:
        player_id = uuid.uuid4().hex[:16]

        def answer(remembered: dict) -> dict:
            return {**remembered, "client_seed": client_seed,
                    "token": self.keys.token("player", table_id, remembered["player_id"])}
        command = SeatPlayer(player_id=player_id, name=name, buy_in=buy_in,
                             token_hash=hash_token(self.keys.token("player", table_id, player_id)),
                             client_seed=client_seed)
        return self._table_command(table_id, command, "anonymous", client_key, "join",
                                   lambda events: {"seat": events[0].seat, "player_id": player_id},
                                   answer)

    def set_client_seed(self, table_id: str, seat: int, client_seed: str) -> dict:
        def remember(events) -> dict:
            return {"seat": seat, "client_seed": client_seed,
                    "applies_from_hand": self.table(table_id).state.hand_no + 1}
        return self._table_command(table_id, SetClientSeed(seat=seat, client_seed=client_seed),
                                   f"seat:{seat}", None, None, remember)

    def add_chips(self, table_id: str, seat: int, amount: int, client_key: ClientKey | None,
                  ) -> dict:
        def remember(events) -> dict:
            return {"seat": seat, "stack": self.table(table_id).state.seat(seat).stack + amount}
        return self._table_command(table_id, AddChips(seat=seat, amount=amount), f"seat:{seat}",
                                   client_key, f"chips:{seat}", remember)

    def leave(self, table_id: str, seat: int, actor: str) -> dict:
        return self._table_command(table_id, LeaveTable(seat=seat), actor, None, None,
                                   lambda events: {"seat": seat,
                                                   "cashed_out": events[0].cashed_out})

    def _table_command(self, table_id, command, actor, client_key, scope, remember,
                       answer=lambda remembered: remembered) -> dict:
        idem = _idempotency(table_id, scope, client_key)

        def attempt():
            loaded = self.table(table_id)
            events = table_rules.decide(loaded.state, command)
            remembered = remember(events)
            self.store.append(
                [StreamWrite(table_stream(table_id), loaded.version, sealed(events))],
                actor=actor, command_id=client_key and client_key.key, idempotency=idem,
                answer=remembered)
            return answer(remembered)
        return self._once(idem, attempt, answer)

    # --- hand commands -----------------------------------------------------

    def start_hand(self, table_id: str, game_id: str | None, client_key: ClientKey | None,
                   ) -> dict:
        """Open the next hand, of the table's game or (dealer's choice) of ``game_id``."""
        idem = _idempotency(table_id, "start_hand", client_key)

        def attempt():
            table = self.table(table_id)
            following = table.state.hand_no + 2  # the hand after the one this opens
            (opened,) = table_rules.decide(table.state, OpenHand(
                next_seed_commitment=self.keys.seed_commitment(table_id, following),
                game=game_id))
            dealt = [s for s in table.state.seats if s.seat in opened.dealt_in]
            game = game_of(opened.game)
            new_hand = game.initial_state(table_rules.hand_options(table.state, opened.game))
            hand_events = game.decide(new_hand, StartHand(
                hand_no=opened.hand_no, button=opened.button,
                seats=tuple({"seat": s.seat, "name": s.name, "stack": s.stack,
                             "player_id": s.player_id} for s in dealt),
                server_seed=self.keys.server_seed(table_id, opened.hand_no),
                client_seeds={str(s.seat): s.client_seed for s in dealt}))
            body = {"hand_no": opened.hand_no, "version": len(hand_events)}
            owed = game.job_owed(reduce(game.evolve, hand_events, new_hand))  # nobody can act
            job = (table_id, f"{SHOWDOWN_JOB}:{opened.hand_no}")
            self.store.append(
                [StreamWrite(table_stream(table_id), table.version, sealed([opened])),
                 StreamWrite(hand_stream(table_id, opened.hand_no), 0,
                             sealed(hand_events, opened.game))],
                actor="admin", command_id=client_key and client_key.key, idempotency=idem,
                answer=body, owe_job=job if owed else None)
            if owed:
                self._enqueue(table_id, opened.hand_no)
            return body
        return self._once(idem, attempt, lambda remembered: remembered)

    def act(self, table_id: str, hand_no: int, viewer: Viewer, command: Act,
            expected_version: int | None, client_key: ClientKey | None) -> dict:
        """Apply one player's move; 201 body ``{"version", "events"}`` as the player sees it."""
        idem = _idempotency(table_id, f"hand:{hand_no}:seat:{command.seat}", client_key)
        stream = hand_stream(table_id, hand_no)

        def attempt():
            hand = self.hand(table_id, hand_no)
            if expected_version is not None and expected_version != hand.version:
                raise StaleVersion(hand.version)
            events = game_of(hand.state.game).decide(hand.state, command)
            try:
                written = self._append_hand(
                    table_id, hand_no, hand, events, actor=f"seat:{command.seat}",
                    command_id=client_key and client_key.key, idempotency=idem,
                    answer={"after": hand.version, "version": hand.version + len(events)})
            except VersionConflict as conflict:
                if expected_version is not None and conflict.stream == stream:
                    raise StaleVersion(conflict.actual) from None
                raise
            state = reduce(game_of(hand.state.game).evolve, events, hand.state)
            return {"version": hand.version + len(events),
                    "events": [project(e, viewer, state) for e in written[stream]]}

        def answer(remembered: dict) -> dict:
            return {"version": remembered["version"],
                    "events": self.hand_events(table_id, hand_no, viewer, remembered["after"])[
                        :remembered["version"] - remembered["after"]]}
        return self._once(idem, attempt, answer)

    def _once(self, idem: Idempotency | None, attempt: Callable[[], dict],
              answer: Callable[[dict], dict]) -> dict:
        """Run ``attempt`` until it writes, trying again when a stream it read moved on.

        With an Idempotency-Key the command takes effect once: a retry of the same
        request gets the first answer, even when it raced the first copy and lost (the
        copy's write made this one stale or illegal); the same key with another
        request is refused."""
        def replayed(record: dict | None) -> dict | None:
            if record is None:
                return None
            if record["fingerprint"] != idem.fingerprint:
                raise DomainError("idempotency_key_reused", "this Idempotency-Key was used "
                                  "for another request; use a fresh key for each request")
            return answer(record["answer"])
        for _ in range(RETRIES):
            if idem and (done := replayed(self.store.remembered(idem))):
                return done
            try:
                return attempt()
            except DuplicateCommand as duplicate:
                return replayed(duplicate.record)
            except VersionConflict:
                continue
            except (DomainError, StaleVersion):
                if idem and (done := replayed(self.store.remembered(idem))):
                    return done
                raise
        raise DomainError("busy", "the table changed too often while this command was tried")

    def settle_showdown(self, table_id: str, hand_no: int) -> bool:
        """The showdown job: settle a pending hand once; False if there was nothing to do."""
        for _ in range(RETRIES):
            hand = self.hand(table_id, hand_no)
            game = game_of(hand.state.game)
            if not game.job_owed(hand.state):
                return False
            events = game.decide(hand.state, Showdown())
            try:
                self._append_hand(table_id, hand_no, hand, events, actor="worker",
                                  command_id=f"showdown:{hand_no}")
                return True
            except VersionConflict:
                continue
        return False

    def _append_hand(self, table_id, hand_no, hand: Loaded, events, **append_args):
        """Append a hand's events; when they end the hand, with the table's ``HandSettled``
        and the signed receipt; when they lead to the showdown, with the job owed (and
        when they settle it, paid)."""
        stream = hand_stream(table_id, hand_no)
        game = game_of(hand.state.game)
        writes = [StreamWrite(stream, hand.version, sealed(events, game.id))]
        ended = next((e for e in events if isinstance(e, HandEnded)), None)
        owed = game.job_owed(reduce(game.evolve, events, hand.state))
        job = (table_id, f"{SHOWDOWN_JOB}:{hand_no}")
        if ended is not None:
            table = self.table(table_id)
            settled = table_rules.decide(table.state, SettleHand(hand_no=hand_no,
                                                                 stacks=ended.stacks))
            writes.append(StreamWrite(table_stream(table_id), table.version, sealed(settled)))
        written = self.store.append(
            writes, owe_job=job if owed else None, settle_job=job if ended is not None else None,
            also_set=ended and self._receipt(table_id, hand_no, stream, ended), **append_args)
        if owed:
            self._enqueue(table_id, hand_no)
        return written

    def _enqueue(self, table_id: str, hand_no: int) -> None:
        if self.enqueue_showdown is None:
            return
        try:
            self.enqueue_showdown(table_id, hand_no)
        except Exception:  # the owed marker is written: the sweeper enqueues it later
            log.exception("enqueueing the showdown of %s/%s failed", table_id, hand_no)

    def _receipt(self, table_id: str, hand_no: int, stream: str, ended: HandEnded):
        """For ``also_set``: the hand's receipt, signed over its last event, beside it."""
        def signed(by_stream: dict[str, list[Envelope]]) -> dict[str, str]:
            head = by_stream[stream][-1]
            receipt = {"table_id": table_id, "hand_no": hand_no, "version": head.version,
                       "head_hash": head.hash, "stacks": dict(ended.stacks)}
            return {receipt_key(table_id, hand_no): fairness.canonical_json(
                {"receipt": receipt, "signature": self.keys.sign(receipt)})}
        return signed


def _idempotency(table_id: str, scope: str | None, client_key: ClientKey | None,
                 ) -> Idempotency | None:
    if client_key is None or scope is None:
        return None
    return Idempotency(table_id, scope, client_key.key, client_key.fingerprint)


def project(envelope: Envelope, viewer: Viewer, state: Any) -> dict:
    """A stored event as ``viewer`` receives it: the chained fields (commitments in place of
    hidden values) and the openings they may see."""
    visible = visible_openings(opened_event(envelope), viewer, state)
    return {**envelope.to_dict(), "openings": {p: envelope.openings[p] for p in visible}}
