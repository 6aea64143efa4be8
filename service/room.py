"""The service layer: each client command, from loading state to the one atomic append
(the reads are ``service.reads``').

Routes call one method here; every game rule stays in ``domain``. Every write is one
``EventStore.append``: a hand's last events, the table's ``HandSettled`` and the
hand's signed receipt land together or not at all.

Hidden values are sealed on the way in (``domain.fairness.seal``: commitments in the
chained data, openings beside it). Seeds and tokens are derived from the secret key
(``service.keys``), so neither is ever stored.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import uuid
from dataclasses import dataclass
from functools import reduce
from typing import Callable

from domain import fairness, phh
from domain import table as table_rules
from domain.commands import (Act, AddChips, CreateTable, ImportHand, LeaveTable, OpenHand,
                             SeatPlayer, SetClientSeed, SettleHand, Showdown, StartHand)
from domain.errors import DomainError
from domain.events import Event, HandEnded
from domain.games import game as game_of
from domain.views import Viewer, as_dealt, hidden_values
from service import jsonio, metrics
from service.backend import store_unavailable
from service.keys import Keys
from service.reads import Loaded, Reads, Snapshot, project
from service.store import (DuplicateCommand, Envelope, EventStore, Idempotency, NewEvent,
                           StreamWrite, VersionConflict, hand_stream, receipt_key, table_stream)

log = logging.getLogger(__name__)

SHOWDOWN_JOB = "showdown"
RETRIES = 8  # attempts when a write races with another on a stream the client did not pin


class StaleVersion(Exception):
    def __init__(self, current: int):
        super().__init__(f"the hand is at version {current}")
        self.current = current


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class NotSeated(Exception):
    """The caller's token was recognised on a table read or held earlier, but the table a
    command is decided on seats another player there (answered 403, before anything the
    key remembers)."""


class Replayed(dict):
    """A command's first answer, given again to a retry with the same Idempotency-Key (the
    routes mark it with a header)."""


@dataclass(frozen=True)
class ClientKey:
    """An Idempotency-Key and the fingerprint of the request it came with."""

    key: str
    fingerprint: str


def sealed(events: list[Event], game_id: str | None = None) -> list[NewEvent]:
    """The events with the values a game hides (none at a table) sealed."""
    new = []
    for event in events:
        hidden = hidden_values(game_id, event) if game_id else {}
        if not hidden:  # most events: nothing to seal, and to_dict is plain JSON already
            new.append(NewEvent(event.type, event.to_dict()))
            continue
        data, openings = fairness.seal(event.to_dict(), hidden,
                                       lambda: secrets.token_hex(fairness.SALT_BYTES))
        new.append(NewEvent(event.type, data, openings))
    return new


class Cardroom(Reads):
    """Every client command and the showdown job; the reads are ``Reads``'."""

    def __init__(self, store: EventStore, keys: Keys,
                 enqueue_showdown: Callable[[str, int], None] | None):
        super().__init__(store, keys)
        self.enqueue_showdown = enqueue_showdown

    # --- table commands ----------------------------------------------------

    def create_table(self, game: str, options: dict, max_seats: int | None,
                     client_key: ClientKey | None = None) -> dict:
        """With an Idempotency-Key, the table's id is derived from the key, so that a retry
        finds the table its first copy made and is answered its tokens again."""
        table_id = self._new_table_id(client_key)
        admin, auditor = self.keys.token("admin", table_id), self.keys.token("auditor", table_id)
        idem = _idempotency(table_id, "create", client_key)

        def answer(remembered: dict) -> dict:
            return {"table_id": table_id, "admin_token": admin, "auditor_token": auditor,
                    **remembered}

        def attempt():
            events = table_rules.decide(table_rules.initial_state(), CreateTable(
                game=game, options=options, max_seats=max_seats,
                admin_token_hash=hash_token(admin), auditor_token_hash=hash_token(auditor),
                next_seed_commitment=self.keys.seed_commitment(table_id, 1)))
            remembered = _as_remembered({
                "game": game, "max_seats": events[0].max_seats, "options": events[0].options,
                "next_seed_commitment": events[0].next_seed_commitment})
            try:
                written = self.store.append(
                    [StreamWrite(table_stream(table_id), 0, sealed(events))], actor="anonymous",
                    command_id=self._command_id(client_key), idempotency=idem,
                    answer=remembered)
            except VersionConflict:  # the key's table, made by a copy whose record expired
                raise _made_by_an_expired_key(table_id) from None
            self.cache.extend(table_stream(table_id), Loaded(table_rules.initial_state(), 0),
                              written[table_stream(table_id)], events, table_rules.evolve)
            return answer(remembered)
        return self._once(idem, attempt, answer)

    def _command_id(self, client_key: ClientKey | None) -> str | None:
        return self.keys.command_id(client_key.key) if client_key else None

    def _new_table_id(self, client_key: ClientKey | None) -> str:
        """A new table's id: derived from the Idempotency-Key if there is one, so that a
        retry of the creation (or import) finds the table its first copy made."""
        return self.keys.table_id(client_key.key) if client_key else uuid.uuid4().hex[:16]

    def seat_player(self, table_id: str, name: str, buy_in: int, client_seed: str,
                    client_key: ClientKey | None, table: Loaded | None = None) -> dict:
        """``table``: the table as the caller just read it (first try only)."""
        player_id = uuid.uuid4().hex[:16]
        token = self.keys.token("player", table_id, player_id)

        def answer(remembered: dict) -> dict:
            seated = remembered["player_id"]  # another on a retry: the key's first player
            return {**remembered, "client_seed": client_seed, "token": token if seated == player_id
                    else self.keys.token("player", table_id, seated)}
        command = SeatPlayer(player_id=player_id, name=name, buy_in=buy_in,
                             token_hash=hash_token(token), client_seed=client_seed)
        return self._table_command(table_id, command, "anonymous", client_key, "join",
                                   lambda events, _: {"seat": events[0].seat,
                                                      "player_id": player_id},
                                   answer, table)

    def set_client_seed(self, table_id: str, seat: int, client_seed: str,
                        seated: Viewer | None = None) -> dict:
        """``seated``: the player choosing, who must still hold the seat when it is decided."""
        def remember(events, decided_on) -> dict:
            return {"seat": seat, "client_seed": client_seed,
                    "applies_from_hand": decided_on.hand_no + 1}
        return self._table_command(table_id, SetClientSeed(seat=seat, client_seed=client_seed),
                                   f"seat:{seat}", None, None, remember, seated=seated)

    def add_chips(self, table_id: str, viewer: Viewer, amount: int, client_key: ClientKey | None,
                  table: Loaded | None = None) -> dict:
        """``viewer``: the player buying, who must still hold the seat when it is decided.
        ``table``: the table as the caller just read it (first try only)."""
        seat = viewer.seat

        def remember(events, decided_on) -> dict:
            return {"seat": seat, "stack": decided_on.seat(seat).stack + amount}
        return self._table_command(table_id, AddChips(seat=seat, amount=amount), f"seat:{seat}",
                                   client_key, f"chips:{viewer.player_id}", remember,
                                   table=table, seated=viewer)

    def leave(self, table_id: str, seat: int, actor: str,
              client_key: ClientKey | None = None, seated: Viewer | None = None,
              player_id: str | None = None) -> dict:
        """With an Idempotency-Key, a retry is answered the first leave again: it does not
        free the seat once more, from whoever has taken it since (the admin's token would,
        unless it names the ``player_id`` to remove). ``seated``: the player leaving (not the
        admin), who must still hold the seat when it is decided."""
        return self._table_command(table_id, LeaveTable(seat=seat, player_id=player_id),
                                   actor, client_key, "leave",
                                   lambda events, _: {"seat": seat,
                                                      "cashed_out": events[0].cashed_out},
                                   seated=seated)

    def _table_command(self, table_id, command, actor, client_key, scope, remember,
                       answer=lambda remembered: remembered, table: Loaded | None = None,
                       seated: Viewer | None = None) -> dict:
        """``remember(events, table state they were decided on)``: the answer a retry with
        the same key gets. ``seated``: the player the command is for, whom the table must
        still seat."""
        idem = _idempotency(table_id, scope, client_key)

        def attempt():
            nonlocal table
            loaded, table = table or self.table(table_id), None
            if seated is not None:
                _still_seated(loaded.state, seated)
            events = table_rules.decide(loaded.state, command)
            remembered = _as_remembered(remember(events, loaded.state))
            stream = table_stream(table_id)
            written = self.store.append(
                [StreamWrite(stream, loaded.version, sealed(events), loaded.head_hash)],
                actor=actor, command_id=self._command_id(client_key), idempotency=idem,
                answer=remembered)
            self.cache.extend(stream, loaded, written[stream], events, table_rules.evolve)
            return answer(remembered)
        return self._once(idem, attempt, answer)

    # --- hand commands -----------------------------------------------------

    def start_hand(self, table_id: str, game_id: str | None, client_key: ClientKey | None,
                   table: Loaded | None = None) -> dict:
        """Open the next hand, of the table's game or (dealer's choice) of ``game_id``.
        ``table``: the table as the caller just read it (first try only)."""
        idem = _idempotency(table_id, "start_hand", client_key)

        def attempt():
            nonlocal table
            loaded, table = table or self.table(table_id), None
            following = loaded.state.hand_no + 2  # the hand after the one this opens
            (opened,) = table_rules.decide(loaded.state, OpenHand(
                next_seed_commitment=self.keys.seed_commitment(table_id, following),
                game=game_id))
            dealt = [s for s in loaded.state.seats if s.seat in opened.dealt_in]
            game = game_of(opened.game)
            new_hand = game.initial_state(table_rules.hand_options(loaded.state, opened.game))
            hand_events = game.decide(new_hand, StartHand(
                hand_no=opened.hand_no, button=opened.button, blinds=opened.blinds,
                seats=tuple({"seat": s.seat, "name": s.name, "stack": s.stack,
                             "player_id": s.player_id} for s in dealt),
                server_seed=self.keys.server_seed(table_id, opened.hand_no),
                client_seeds={str(s.seat): s.client_seed for s in dealt}))
            body = {"hand_no": opened.hand_no, "version": len(hand_events)}
            owed = game.job_owed(reduce(game.evolve, hand_events, new_hand))  # nobody can act
            job = (table_id, f"{SHOWDOWN_JOB}:{opened.hand_no}")
            streams = table_stream(table_id), hand_stream(table_id, opened.hand_no)
            written = self.store.append(
                [StreamWrite(streams[0], loaded.version, sealed([opened]), loaded.head_hash),
                 StreamWrite(streams[1], 0, sealed(hand_events, opened.game),
                             fairness.GENESIS_HASH)],
                actor="admin", command_id=self._command_id(client_key), idempotency=idem,
                answer=body, owe_job=job if owed else None)
            self.cache.extend(streams[0], loaded, written[streams[0]], [opened],
                              table_rules.evolve)
            self.cache.extend(streams[1], Loaded(new_hand, 0), written[streams[1]], hand_events,
                              game.evolve)
            if owed:
                self._enqueue(table_id, opened.hand_no)
            return body
        return self._once(idem, attempt, lambda remembered: remembered)

    def act(self, table_id: str, hand_no: int, viewer: Viewer, command: Act,
            expected_version: int | None, client_key: ClientKey | None,
            snapshot: Snapshot | None = None) -> dict:
        """Apply one player's move; 201 body ``{"version", "events"}`` as the player sees it.
        ``snapshot``: the table and hand as the caller just read them, or as this process
        holds them (``Reads.held``), for the first try. A move refused on a held snapshot
        is decided again on a read; one whose append finds either stream moved on, on what
        the append answered (``Reads.caught_up``). So a move makes one round trip when this
        process holds the hand as it stands, and two when it does not.

        ``viewer`` was recognised on the first snapshot only: whichever table a move is
        decided on, and the table a retry with the same key is answered at, must still
        seat that player there (a held table may be older than the hand held beside it)."""
        idem = _idempotency(table_id, f"hand:{hand_no}:player:{viewer.player_id}", client_key)
        stream = hand_stream(table_id, hand_no)

        def attempt():
            nonlocal snapshot
            now, snapshot = snapshot or self.snapshot(table_id, hand_no), None
            if now.held and expected_version not in (None, now.the_hand().version):
                now = self.snapshot(table_id, hand_no)  # the process or the client is behind
            try:
                return decided(now)
            except (DomainError, NotSeated):
                if not now.held:
                    raise
                return decided(self.snapshot(table_id, hand_no))  # perhaps only behind

        def decided(now: Snapshot) -> dict:
            nonlocal snapshot
            _still_seated(now.table.state, viewer)
            hand = now.the_hand()
            if expected_version is not None and expected_version != hand.version:
                metrics.VERSION_CONFLICTS.inc()
                raise StaleVersion(hand.version)
            events = game_of(hand.state.game).decide(hand.state, command)
            try:
                written = self._append_hand(
                    table_id, hand_no, now, events, actor=f"seat:{command.seat}",
                    command_id=self._command_id(client_key), idempotency=idem,
                    answer={"after": hand.version, "version": hand.version + len(events)})
            except VersionConflict as conflict:
                snapshot = self.caught_up(now, conflict)
                if expected_version is not None and conflict.stream == stream:
                    raise StaleVersion(snapshot.the_hand().version) from None
                raise
            state = reduce(game_of(hand.state.game).evolve, events, hand.state)
            return {"version": hand.version + len(events),
                    "events": [project(envelope, viewer, state, event)
                               for envelope, event in zip(written[stream], events)]}

        def answer(remembered: dict) -> dict:
            """The first answer again: the move's events as the player saw them just then
            (the hand may have revealed more since). The player may have left since."""
            now = self.snapshot(table_id, hand_no)
            after, version, hand = remembered["after"], remembered["version"], now.the_hand()
            if as_dealt(viewer, hand.state).seat is None:  # not the player who was dealt in
                _still_seated(now.table.state, viewer)
            state = (hand.state if version == hand.version else
                     self._replayed_to(table_id, hand_no, hand.state, version))
            return {"version": version,
                    "events": [project(envelope, viewer, state) for envelope
                               in self.store.read(stream, after=after)[:version - after]]}
        return self._once(idem, attempt, answer)

    def import_phh(self, text: str, table_id: str | None, client_key: ClientKey | None,
                   ) -> dict:
        """Replay a PHH document and store it as the next hand of an import table (a new
        one when ``table_id`` is None): table and hand events, settlement and receipt in one
        write, or nothing when the document is refused."""
        if table_id is None:
            return self._import_at_new_table(text, client_key)
        idem = _idempotency(table_id, "import", client_key)

        def attempt():
            table = self.table(table_id)
            imported = phh.import_hand(text, table.state.hand_no + 1)
            return self._store_import(table_id, table, imported, [], idem, client_key)
        return self._once(idem, attempt, lambda remembered: remembered)

    def _import_at_new_table(self, text: str, client_key: ClientKey | None) -> dict:
        """As ``create_table``: with an Idempotency-Key, the table's id is derived from the
        key (the same key creates one table, whichever route it is sent to), so that a
        retry finds the import its first copy made and is answered it again."""
        imported = phh.import_hand(text, 1)
        table_id = self._new_table_id(client_key)
        admin, auditor = self.keys.token("admin", table_id), self.keys.token("auditor", table_id)
        idem = _idempotency(table_id, "create", client_key)

        def answer(remembered: dict) -> dict:
            return {**remembered, "admin_token": admin, "auditor_token": auditor}

        def attempt():
            created = table_rules.decide(table_rules.initial_state(), CreateTable(
                game=imported.game, options=imported.options,
                max_seats=None, admin_token_hash=hash_token(admin),
                auditor_token_hash=hash_token(auditor),
                next_seed_commitment=self.keys.seed_commitment(table_id, 1), imports=True))
            table = Loaded(reduce(table_rules.evolve, created, table_rules.initial_state()), 0)
            try:
                body = self._store_import(table_id, table, imported, created, idem, client_key)
            except VersionConflict:  # the key's table, made by a copy whose record expired
                raise _made_by_an_expired_key(table_id) from None
            return answer(body)
        return self._once(idem, attempt, answer)

    def _store_import(self, table_id, table: Loaded, imported, created, idem, client_key,
                      ) -> dict:
        state = table.state
        opened = table_rules.decide(state, ImportHand(
            game=imported.game, dealt_in=tuple(s["seat"] for s in imported.seats)))
        hand_no = opened[0].hand_no
        state = reduce(table_rules.evolve, opened, state)
        ended = imported.events[-1]
        settled = table_rules.decide(state, SettleHand(hand_no=hand_no, stacks=ended.stacks))
        stream = hand_stream(table_id, hand_no)
        body = {"table_id": table_id, "hand_no": hand_no, "game": imported.game,
                "version": len(imported.events), "stacks": ended.stacks}
        self.store.append(
            [StreamWrite(table_stream(table_id), table.version, sealed(created + opened + settled),
                         table.head_hash),
             StreamWrite(stream, 0, sealed(imported.events, imported.game), fairness.GENESIS_HASH)],
            actor="import", command_id=self._command_id(client_key), idempotency=idem,
            answer=body, also_set=self._receipt(table_id, hand_no, stream, ended),
            ends_hand=hand_no)
        return _as_remembered(body)

    def _once(self, idem: Idempotency | None, attempt: Callable[[], dict],
              answer: Callable[[dict], dict]) -> dict:
        """Run ``attempt`` until it writes, trying again when a stream it read moved on.

        With an Idempotency-Key the command takes effect once: a retry of the same
        request gets the first answer, even when it raced the first copy and lost (the
        copy's write made this one stale or illegal); the same key with another
        request is refused. The append script is what checks the key, so a command
        costs no read of its own; the record is read only when the command failed."""
        def replayed(record: dict | None) -> dict | None:
            if record is None:
                return None
            if record["fingerprint"] != idem.fingerprint:
                raise DomainError("idempotency_key_reused", "this Idempotency-Key was used "
                                  "for another request; use a fresh key for each request")
            metrics.IDEMPOTENT_REPLAYS.inc()
            return Replayed(answer(record["answer"]))
        for _ in range(RETRIES):
            try:
                return attempt()  # the script answers a key it has seen with its record
            except DuplicateCommand as duplicate:
                return replayed(duplicate.record)
            except VersionConflict:
                continue
            except (DomainError, StaleVersion):
                if idem and (done := replayed(self.store.remembered(idem))):
                    return done
                raise
            except NotSeated:  # perhaps a copy with this key has just freed the seat
                record = idem and self.store.remembered(idem)
                if record and record["fingerprint"] == idem.fingerprint:
                    return replayed(record)
                raise
        raise DomainError("busy", "the table changed too often while this command was tried")

    def settle_showdown(self, table_id: str, hand_no: int) -> bool:
        """The showdown job: settle a pending hand once; False if there was nothing to do."""
        for _ in range(RETRIES):
            now = self.snapshot(table_id, hand_no)
            hand = now.the_hand()
            game = game_of(hand.state.game)
            if not game.job_owed(hand.state):
                return False
            events = game.decide(hand.state, Showdown())
            try:
                self._append_hand(table_id, hand_no, now, events, actor="worker",
                                  command_id=f"showdown:{hand_no}")
                return True
            except VersionConflict:
                continue
        return False

    def _append_hand(self, table_id, hand_no, now: Snapshot, events, **append_args):
        """Append a hand's events; when they end the hand, with the table's ``HandSettled``
        and the signed receipt (and indexed for ``service.retention``); when they lead to
        the showdown, with the job owed (and when they settle it, paid). ``now``: the table
        and hand the events were decided on; both streams are in the append, the table's
        with no events but a settlement, so that it is refused if either has moved on."""
        stream = hand_stream(table_id, hand_no)
        hand, table = now.the_hand(), now.table
        game = game_of(hand.state.game)
        ended = next((e for e in events if isinstance(e, HandEnded)), None)
        owed = game.job_owed(reduce(game.evolve, events, hand.state))
        job = (table_id, f"{SHOWDOWN_JOB}:{hand_no}")
        settled = [] if ended is None else table_rules.decide(
            table.state, SettleHand(hand_no=hand_no, stacks=ended.stacks))
        writes = [StreamWrite(stream, hand.version, sealed(events, game.id), hand.head_hash),
                  StreamWrite(table_stream(table_id), table.version, sealed(settled),
                              table.head_hash)]
        written = self.store.append(
            writes, owe_job=job if owed else None, settle_job=job if ended is not None else None,
            also_set=ended and self._receipt(table_id, hand_no, stream, ended),
            ends_hand=hand_no if ended is not None else None, **append_args)
        self.cache.extend(stream, hand, written[stream], events, game.evolve)
        if ended is not None:
            self.cache.extend(table_stream(table_id), now.table,
                              written[table_stream(table_id)], settled, table_rules.evolve)
        if owed:
            self._enqueue(table_id, hand_no)
        return written

    def _enqueue(self, table_id: str, hand_no: int) -> None:
        if self.enqueue_showdown is None:
            return
        try:
            self.enqueue_showdown(table_id, hand_no)
        except Exception as error:  # the owed marker is written: the sweeper enqueues it later
            if not store_unavailable(error):
                log.exception("enqueueing the showdown of %s/%s failed", table_id, hand_no)
                return
            log.warning("enqueueing the showdown of %s/%s failed: the job queue's Redis is "
                        "unavailable (%s); a worker's sweeper enqueues it once it answers",
                        table_id, hand_no, error)

    def _receipt(self, table_id: str, hand_no: int, stream: str, ended: HandEnded):
        """For ``also_set``: the hand's receipt, signed over its last event and over the
        table's (its ``HandSettled``), beside it."""
        def signed(by_stream: dict[str, list[Envelope]]) -> dict[str, str]:
            head, table_head = by_stream[stream][-1], by_stream[table_stream(table_id)][-1]
            receipt = {"table_id": table_id, "hand_no": hand_no, "version": head.version,
                       "head_hash": head.hash, "stacks": dict(ended.stacks),
                       "table_version": table_head.version, "table_head_hash": table_head.hash}
            return {receipt_key(table_id, hand_no): jsonio.canonical(
                {"receipt": receipt, "signature": self.keys.sign(receipt)})}
        return signed


def seats(table: table_rules.TableState, viewer: Viewer) -> bool:
    """Whether ``table`` seats ``viewer`` (a player) where they sat."""
    seat = table.seat(viewer.seat)
    return seat is not None and seat.player_id == viewer.player_id


def _still_seated(table: table_rules.TableState, viewer: Viewer) -> None:
    if not seats(table, viewer):
        raise NotSeated("this token gives no access to this table")


def _as_remembered(answer: dict) -> dict:
    """An answer as its idempotency record gives it back to a retry (stored as JSON), so
    that the first copy is answered the same bytes."""
    return jsonio.loads(jsonio.canonical(answer))


def _made_by_an_expired_key(table_id: str) -> DomainError:
    """The table a key's creation would make exists, but the key's record has expired."""
    return DomainError("table_exists", f"table {table_id} exists already: this "
                       "Idempotency-Key made it more than a day ago")


def _idempotency(table_id: str, scope: str | None, client_key: ClientKey | None,
                 ) -> Idempotency | None:
    if client_key is None or scope is None:
        return None
    return Idempotency(table_id, scope, client_key.key, client_key.fingerprint)
