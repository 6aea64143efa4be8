"""Event store: hash-chained event envelopes in Redis Streams.

Key layout (every key of a table carries the hash tag ``{<table_id>}``, so one Lua
script may touch all of them, also on Redis Cluster):

    t:{<table_id>}:events               table stream
    t:{<table_id>}:hand:<n>:events      one stream per hand
    t:{<table_id>}:hand:<n>:receipt     the signed receipt of an ended hand
    t:{<table_id>}:hand:<n>:archive     an ended hand's stream, compacted (``service.retention``):
                                        every entry as stored, as JSON, zlib-compressed;
                                        it replaces the stream (never both)
    t:{<table_id>}:idem:<sha256>        remembered command (TTL 24 h): its request's
                                        fingerprint and a small answer (never a secret);
                                        sha256 hex of ``scope + "\\0" + key``
    t:{<table_id>}:owed                 sorted set: job name -> Redis TIME it became owed
                                        (or was last re-enqueued by the sweeper)
    cardroom:owed-tables                sorted set: table id -> Redis TIME; the tables that
                                        may owe a job (global: never written by the script)
    cardroom:ended-hands                sorted set: ``<table_id>:<hand_no>`` -> Redis TIME; the
                                        hands that ended and are not archived yet (global)

A stream entry has the explicit ID ``0-<version>`` and flat fields ``type``, ``data``
(canonical JSON), ``version``, ``event_id``, ``occurred_at``, ``actor``,
``command_id`` (absent when None), ``prev_hash`` and ``hash`` (the chain of
``domain.fairness``), plus ``openings`` outside the chain: the values behind the
event's commitments, encrypted with the service's secret key (``service.keys``).

Round trips: a reader gives the version and head hash it holds of each stream
(``ReplayCache``) and ``EventStore.read_on`` returns, in ONE script call for a table's
streams, what came after (or everything, if the stream no longer has that head). A writer
gives the head hash it decided on (``StreamWrite.prev_hash``), so that ``append`` needs
no read of its own: a command is one read and one script. A refused append answers, for
each of its streams, what ``read_on`` would (``VersionConflict.found``), so a writer that
decided on the state it held, without reading, and was refused decides again on that
answer, with no read: a move is one script when its process holds the hand as it stands,
two when it does not (``service.room.Cardroom.act``).

``EventStore.append`` builds the envelopes in Python, then runs ONE Lua script
(``_APPEND_LUA``; each stream's new entries go as one JSON argument) which, atomically:
(1) returns the remembered command if the idempotency key exists; (2) checks, for every
stream, that its length and last generated ID equal the expected version and that its
last entry's hash equals the ``prev_hash`` the new envelopes were chained to, else
reports a conflict (with what the streams have after those heads) having written
nothing; (3) XADDs every envelope; (4) stores the idempotency record and any
other keys given (a receipt); (5) clears / sets the owed-job marker.  Nothing is
written before all checks pass.

The owed marker is the truth; ``cardroom:owed-tables`` is only an index that lets the
sweeper (``service.jobs.enqueue_owed_jobs``) find the tables that may owe a job
without walking every table. On one Redis the append script writes it with the marker,
atomically. On a Redis Cluster it lives outside any table's hash slot, so the script
cannot write it: ``append`` writes it just before the script runs (a crash after the
script still leaves the table indexed) and again just after it succeeded (an entry
the sweeper removed meanwhile is back). See ``EventStore.forget_owed_tables`` for why
the sweeper never loses an entry that an append in flight still needs.
``cardroom:ended-hands`` is written by the script of a write that ends a hand
(``append(..., ends_hand=n)``, when the store was made with ``index_ended``); on a
cluster only after it: a crash in between leaves that hand a stream, which loses nothing.

An archived hand reads as its stream did: ``read_on`` falls back on the archive in the
same script call when the stream is gone, ``read`` in a second round trip when its
``XRANGE`` finds nothing (``_unpacked``), ``read_whole`` from the same pipeline. An append to
it is refused as a conflict: the script sees no stream (length 0) where the writer
expected its last version.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import time
import weakref
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Protocol

import redis
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError, ResponseError

from domain.fairness import GENESIS_HASH, envelope_hash
from domain.frozen import made
from service import jsonio, metrics

log = logging.getLogger(__name__)

OWED_TABLES_KEY = "cardroom:owed-tables"
ENDED_HANDS_KEY = "cardroom:ended-hands"
IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
_TAG = re.compile(r"^t:\{([^{}]+)\}:")
_HAND_STREAM = re.compile(r"^(t:\{[^{}]+\}:hand:\d+):events$")


def _tag(table_id: str) -> str:
    table_id = str(table_id)
    if not table_id or "{" in table_id or "}" in table_id:
        raise ValueError(f"invalid table id: {table_id!r}")
    return f"t:{{{table_id}}}"


def table_stream(table_id: str) -> str:
    return f"{_tag(table_id)}:events"


def hand_stream(table_id: str, hand_no: int) -> str:
    return f"{_tag(table_id)}:hand:{int(hand_no)}:events"


def receipt_key(table_id: str, hand_no: int) -> str:
    return f"{_tag(table_id)}:hand:{int(hand_no)}:receipt"


def archive_key(table_id: str, hand_no: int) -> str:
    return f"{_tag(table_id)}:hand:{int(hand_no)}:archive"


def archive_of(stream: str) -> str | None:
    """The archive key of a hand's stream; None for a table's stream (never archived)."""
    match = _HAND_STREAM.match(stream)
    return f"{match.group(1)}:archive" if match else None


def idempotency_key(table_id: str, scope: str, key: str) -> str:
    digest = hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()
    return f"{_tag(table_id)}:idem:{digest}"


def owed_key(table_id: str) -> str:
    return f"{_tag(table_id)}:owed"


def table_of(key: str) -> str:
    """The table id in a key's hash tag."""
    match = _TAG.match(key)
    if not match:
        raise ValueError(f"not a table key: {key!r}")
    return match.group(1)


class Cipher(Protocol):
    def encrypt(self, openings: dict, context: str) -> str: ...
    def decrypt(self, blob: str, context: str) -> dict: ...


@dataclass(frozen=True)
class Envelope:
    type: str
    data: dict
    version: int
    event_id: str
    occurred_at: str
    actor: str
    command_id: str | None
    prev_hash: str
    hash: str
    openings: dict = field(default_factory=dict)  # pointer -> {"value", "salt"}; not chained
    data_json: str | None = field(default=None, compare=False, repr=False)  # data as stored

    @classmethod
    def read_back(cls, **fields: Any) -> Envelope:
        """An envelope of every field, made without ``__init__``: a frozen dataclass's
        ``__init__`` sets the fields one by one through ``object.__setattr__``, a quarter of
        the cost of reading an event back (``append`` makes its new envelopes so too)."""
        return made(cls, fields)

    def to_dict(self) -> dict:
        """The chained fields and the hash: what a reader may verify."""
        return {"type": self.type, "data": self.data, "version": self.version,
                "event_id": self.event_id, "occurred_at": self.occurred_at, "actor": self.actor,
                "command_id": self.command_id, "prev_hash": self.prev_hash, "hash": self.hash}


@dataclass(frozen=True)
class NewEvent:
    type: str
    data: dict  # plain JSON, sealed: hidden values already replaced by commitments
    openings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StreamWrite:
    stream: str
    expected_version: int
    events: list[NewEvent]
    prev_hash: str | None = None  # the hash at expected_version, if known (else read first)


@dataclass(frozen=True)
class Idempotency:
    """A client's Idempotency-Key within a scope, bound to its request's fingerprint."""

    table_id: str
    scope: str
    key: str
    fingerprint: str


class VersionConflict(Exception):
    """An append refused because ``stream`` is not at the version it was decided on.
    ``found``: for every stream of the append, ``(version, the events after it)`` as
    ``EventStore.read_on`` answers for the version and head the writer decided on."""

    def __init__(self, stream: str, expected: int, actual: int,
                 found: dict[str, tuple[int, list[Envelope]]] | None = None):
        super().__init__(f"{stream}: expected version {expected}, actual {actual}")
        self.stream, self.expected, self.actual = stream, expected, actual
        self.found = found or {}


class UnreadableRecord(Exception):
    """A stored event or value that does not decode: something other than this service
    wrote it. ``key``: where it is stored."""

    def __init__(self, key: str, reason: str):
        super().__init__(f"{key}: {reason}")


class DuplicateCommand(Exception):
    """The idempotency key was used before; ``record`` is ``{"fingerprint", "answer"}``."""

    def __init__(self, record: dict):
        super().__init__("command already applied")
        self.record = record


# One stream's events after the version and head hash a reader holds: {version, entries
# after it}, or {0, every entry} when the stream no longer has that event there or has lost
# one before it (it was shortened or rewritten). Used by _READ_ON_LUA and by _APPEND_LUA's
# answer to a writer whose head the stream has moved past.
_READ_ON_FUNCTION = """
local function read_on(key, version, wanted)
  local entries
  if version > 0 then  -- the held event and what follows it, in one XRANGE
    entries = redis.call('XRANGE', key, '0-' .. version, '+')
    local head, hash = entries[1], nil
    if head and head[1] == '0-' .. version then
      for j = 1, #head[2], 2 do if head[2][j] == 'hash' then hash = head[2][j + 1] end end
    end
    -- held, and nothing before it gone: XLEN counts the held event and those before it
    if hash == wanted and redis.call('XLEN', key) == version + #entries - 1 then
      table.remove(entries, 1)
    else
      version, entries = 0, nil
    end
  end
  return {version, entries or redis.call('XRANGE', key, '-', '+')}
end
"""

# KEYS: idempotency key, owed zset, stream_1 .. stream_n, extra_1 .. extra_m, then (on one
#       server, not a cluster) the owed-tables and ended-hands indexes
# ARGV: use_idem, record, ttl, owe_job, settle_job, genesis, n, the number of index keys
#       (0 or 2), the table to index as owing (or ''), the hand to index as ended (or ''),
#       then per stream: expected_version, prev_hash, events (JSON: a list of [f1, v1, f2,
#       v2, ...] per event, few large arguments being cheaper to send than many small
#       ones); then the m extra values; last, the Redis TIME after which the script writes
#       nothing but answers {'late', seconds, microseconds} ('' for none); written, it
#       answers {'ok', seconds, microseconds}.  A conflict's answer carries, for every
#       stream written, what read_on finds after the version and hash the writer decided on.
_APPEND_LUA = _READ_ON_FUNCTION + """
if ARGV[1] == '1' then
  local seen = redis.call('GET', KEYS[1])
  if seen then return {'duplicate', seen} end
end
local n_streams, n_indexes = tonumber(ARGV[7]), tonumber(ARGV[8])
local writes, pos = {}, 11
for i = 3, 2 + n_streams do
  local key, expected, prev = KEYS[i], tonumber(ARGV[pos]), ARGV[pos + 1]
  local events = cjson.decode(ARGV[pos + 2])
  pos = pos + 3
  local length, last_id, last_hash = 0, '0-0', ARGV[6]
  local info = redis.pcall('XINFO', 'STREAM', key)  -- one call: no EXISTS, no XREVRANGE
  if info.err and not string.find(tostring(info.err), 'no such key') then return info end
  for j = 1, (info.err and 0 or #info), 2 do
    local name, value = info[j], info[j + 1]
    if name == 'length' then length = value end
    if name == 'last-generated-id' then last_id = value end
    if name == 'last-entry' and value then
      last_hash = ''
      for k = 1, #value[2], 2 do if value[2][k] == 'hash' then last_hash = value[2][k + 1] end end
    end
  end
  if length ~= expected or last_id ~= '0-' .. expected or last_hash ~= prev then
    local found = {}
    for j = 3, 2 + n_streams do
      found[#found + 1] = read_on(KEYS[j], tonumber(ARGV[3 * j + 2]), ARGV[3 * j + 3])
    end
    return {'conflict', key, length, found}
  end
  writes[#writes + 1] = {key, expected, events}
end
local time = redis.call('TIME')
local now = time[1] + time[2] / 1000000
if ARGV[#ARGV] ~= '' and now > tonumber(ARGV[#ARGV]) then return {'late', time[1], time[2]} end
for _, w in ipairs(writes) do
  for e, fields in ipairs(w[3]) do
    redis.call('XADD', w[1], '0-' .. (w[2] + e), unpack(fields))
  end
end
for i = 3 + n_streams, #KEYS - n_indexes do
  redis.call('SET', KEYS[i], ARGV[pos])
  pos = pos + 1
end
if ARGV[1] == '1' then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[2], ARGV[5]) end
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[2], now, ARGV[4]) end
if ARGV[9] ~= '' then redis.call('ZADD', KEYS[#KEYS - 1], now, ARGV[9]) end
if ARGV[10] ~= '' then redis.call('ZADD', KEYS[#KEYS], now, ARGV[10]) end
return {'ok', time[1], time[2]}
"""


# KEYS: streams (of one table), then the archive keys of some of them; ARGV: per stream,
# the version a reader holds, the hash of its last event, and where its archive is in
# KEYS (0: it has none); then "time" to be answered Redis's TIME after them.  Per stream:
# read_on's answer, or {-1, the archive} when the stream is gone and its archive is there.
_READ_ON_LUA = _READ_ON_FUNCTION + """
local out = {}
for i = 1, #ARGV / 3 do
  local key = KEYS[i]
  out[i] = read_on(key, tonumber(ARGV[3 * i - 2]), ARGV[3 * i - 1])
  local archive = tonumber(ARGV[3 * i])
  if out[i][1] == 0 and #out[i][2] == 0 and archive > 0 and redis.call('EXISTS', key) == 0 then
    local blob = redis.call('GET', KEYS[archive])
    if blob then out[i] = {-1, blob} end
  end
end
if #ARGV % 3 == 1 then out[#out + 1] = redis.call('TIME') end
return out
"""

# KEYS: a hand's stream, its archive; ARGV: the stream's length and head hash as the
# archiver read it, and the archive.  Replaces the stream by the archive if the stream
# still has that length and head; else writes nothing.
_ARCHIVE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 'gone' end
  return 'missing'
end
local top, hash = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1], nil
if top then
  for j = 1, #top[2], 2 do if top[2][j] == 'hash' then hash = top[2][j + 1] end end
end
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) or hash ~= ARGV[2] then
  return 'changed'
end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('DEL', KEYS[1])
return 'archived'
"""


# One key each (a global index, or one table's owed set): safe on Redis Cluster.
# KEYS: an index (owed tables, ended hands); ARGV: member.  Scores it with Redis TIME.
_INDEX_LUA = """
local now = redis.call('TIME')
redis.call('ZADD', KEYS[1], now[1] + now[2] / 1000000, ARGV[1])
return 1
"""

# KEYS: an index; ARGV: cutoff, limit, score.  Takes up to ``limit`` members scored at most
# ``cutoff``, oldest first, and scores them ``score`` (later), so that racing sweepers each
# take a member once; the members taken.
_CLAIM_INDEXED_LUA = """
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, member in ipairs(members) do redis.call('ZADD', KEYS[1], ARGV[3], member) end
return members
"""

# KEYS: an index; ARGV: cutoff, members.  Removes each member's entry only if it is
# still at most ``cutoff`` (an append that re-indexed it since keeps it); how many it
# removed.  (One call, not a pipeline: Redis Cluster pipelines refuse EVALSHA.)
_FORGET_INDEXED_LUA = """
local removed, cutoff = 0, tonumber(ARGV[1])
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) <= cutoff then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return removed
"""

# KEYS: a table's owed set; ARGV: job name, cutoff.  If the job is still owed and its
# marker is at most ``cutoff``, re-scores it with Redis TIME and returns 1 (claimed).
_CLAIM_OWED_JOB_LUA = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
local now = redis.call('TIME')
redis.call('ZADD', KEYS[1], 'XX', now[1] + now[2] / 1000000, ARGV[1])
return 1
"""


class Script:
    """A Lua script, called by its SHA1 (redis-py's ``Script`` checks its arguments on every
    call, at a cost near a tenth of the call's) through ``_sender``; loaded on first use, and
    again when the server lost it (a restart, a failover)."""

    def __init__(self, redis: Any, text: str):
        self.redis, self.text, self.send = redis, text, _sender(redis)
        self.sha = hashlib.sha1(text.encode()).hexdigest()

    def __call__(self, keys: list[str], args: list) -> Any:
        try:
            return self.send("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.redis.script_load(self.text)
            return self.send("EVALSHA", self.sha, len(keys), *keys, *args)


_SENDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _sender(client: Any) -> Callable[..., Any]:
    """How the scripts send a command on ``client``: on a plain Redis, on a connection of the
    calling thread's own (``_ThreadsConnections``); else (a cluster, the embedded fakeredis)
    through its ``execute_command``."""
    if type(client) is not redis.Redis:
        return lambda *command: client.execute_command(*command)
    return _threads_connections(client)


def _threads_connections(client: redis.Redis) -> _ThreadsConnections:
    if client not in _SENDERS:
        _SENDERS[client] = _ThreadsConnections(client.connection_pool)
    return _SENDERS[client]


def _several_sender(client: Any) -> Callable[[list[tuple]], list]:
    """How ``read_whole`` sends several commands in one round trip: on a plain Redis as
    ``_ThreadsConnections.several`` (replies as Redis gave them), else in a pipeline; an
    error reply stands in its place, as a ``ResponseError``."""
    if type(client) is redis.Redis:
        return _threads_connections(client).several

    def piped(commands: list[tuple]) -> list:
        pipe = client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return pipe.execute(raise_on_error=False)
    return piped


class _ThreadsConnections:
    """Sends a command on a connection of the calling thread's own, made with the settings of
    ``pool`` (its timeouts, its retry) but kept out of it: redis-py's borrowing and returning
    of a pooled connection and its bookkeeping of every command cost about as much CPU as
    the round trip's own work (BENCHMARKS.md), on the two calls of every action and the one
    of every read. A connection that fails is closed, and the command sent again as the
    pool's retry says, on a new one; also after a read timeout, whose command may have run
    (an append sent again recognises its own events). A connection that Redis closed while
    it lay idle (a restart, its idle timeout, a kill) is replaced without using up that
    retry, as the pool replaces one before lending it. Commands are packed by the pool's
    packer (``service.backend.connect``'s: by hiredis at once)."""

    def __init__(self, pool: Any):
        self.pool, self.local = pool, threading.local()

    def __call__(self, *command: Any) -> Any:
        connection = self._connection()
        packed = connection.pack_command(*command)

        def send() -> Any:
            connection.send_packed_command(packed)
            return connection.read_response()
        return self._sent(connection, send)

    def several(self, commands: list[tuple]) -> list:
        """The replies to ``commands``, sent together (one round trip), as Redis gave them:
        no response callbacks (an ``XRANGE`` entry's fields a flat list, as a script's). An
        error reply stands in its place as a ``ResponseError``, and every reply is read."""
        connection = self._connection()

        def send() -> list:
            connection.send_packed_command(connection.pack_commands(commands))
            replies = []
            for _ in commands:
                try:
                    replies.append(connection.read_response())
                except ResponseError as refused:  # its reply read: read on to the last
                    replies.append(refused)
            return replies
        return self._sent(connection, send)

    def _connection(self) -> Any:
        connection = getattr(self.local, "connection", None)
        if connection is None or connection.pid != os.getpid():  # none yet, or forked
            connection = self.local.connection = self.pool.connection_class(
                **self.pool.connection_kwargs)
        return connection

    def _sent(self, connection: Any, send: Callable[[], Any]) -> Any:
        try:
            if connection.is_connected:  # since its last command: it may have been closed
                try:
                    return send()
                except redis.ConnectionError:
                    connection.disconnect()
                except redis.TimeoutError:  # Redis may be slow, not gone: the retry, once
                    connection.disconnect()
                    if connection.retry.get_retries() < 1:
                        raise
                    return send()
            return connection.retry.call_with_retry(send, lambda error: connection.disconnect())
        except ResponseError:  # Redis answered: the connection is fine
            raise
        except BaseException:  # anything else may leave a reply unread
            connection.disconnect()
            raise


def _write_deadline(client: Any) -> float | None:
    """Half the client's socket timeout: an append that Redis runs in time is answered
    before the client gives up on it. None for a client without one, which waits for ever."""
    settings = getattr(client, "connection_pool", None) or getattr(client, "nodes_manager", None)
    timeout = getattr(settings, "connection_kwargs", {}).get("socket_timeout")
    return timeout / 2 if timeout else None


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _new_id() -> str:
    """An event's or a write's id: 128 random bits in hex (a uuid4's hex costs several
    times more to make, for 6 bits fewer)."""
    return os.urandom(16).hex()


class EventStore:
    def __init__(self, redis: Any, cipher: Cipher | None = None, *,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
                 new_id: Callable[[], str] = _new_id, index_ended: bool = False):
        self.redis, self.cipher, self.clock, self.new_id = redis, cipher, clock, new_id
        self.index_ended = index_ended  # index ended hands for the archiver (retention on)
        # On one server the append script writes the global indexes itself; a cluster's
        # script may touch only its table's slot, so they are written beside it.
        self.one_server = not isinstance(redis, RedisCluster)
        self._append_script = Script(redis, _APPEND_LUA)
        self._read_on_script = Script(redis, _READ_ON_LUA)
        self._send_several = _several_sender(redis)
        self._archive_script = Script(redis, _ARCHIVE_LUA)
        self._index_owed_script = Script(redis, _INDEX_LUA)
        self._index_ended_script = Script(redis, _INDEX_LUA)
        self._forget_indexed_script = Script(redis, _FORGET_INDEXED_LUA)
        self._claim_indexed_script = Script(redis, _CLAIM_INDEXED_LUA)
        self._claim_owed_job_script = Script(redis, _CLAIM_OWED_JOB_LUA)
        self.write_deadline = _write_deadline(redis)
        self._redis_ahead: float | None = None  # Redis TIME less this process's monotonic

    def read(self, stream: str, after: int = 0) -> list[Envelope]:
        """The events after version ``after``. One ``XRANGE`` from the event at ``after``
        itself (left out), so that an empty answer means the stream has no such event: only
        then is an archived hand's archive read, in a second round trip (a plain command
        costs less than a script, and far less on the embedded fakeredis)."""
        entries = self.redis.xrange(stream, f"0-{max(after, 1)}", "+")
        if entries:
            return [self._envelope(stream, fields) for entry_id, fields in entries
                    if _version_of(entry_id) > after]
        archive = archive_of(stream)
        blob = archive and self.redis.get(archive)
        return [self._envelope(stream, fields)
                for _, fields in _after(_unpacked(blob, archive), after)] if blob else []

    def read_whole(self, streams: list[str], keys: list[str],
                   ) -> tuple[list[list[Envelope]], list[dict | None]]:
        """Every event of each of ``streams`` (as ``read`` gives them) and the JSON value of
        each of ``keys`` (as ``get_json``), all in one round trip: a pipeline of plain
        commands (on a plain Redis, on the calling thread's own connection). A hand's archive
        is asked for with its stream, and used only when the stream has no events, as
        ``read`` does. A key holding another type than asked (WRONGTYPE) is unreadable."""
        archives = [archive_of(stream) for stream in streams]
        commands = []
        for stream, archive in zip(streams, archives):
            commands.append(("XRANGE", stream, "-", "+"))
            if archive is not None:
                commands.append(("GET", archive))
        commands += [("GET", key) for key in keys]
        replies = self._send_several(commands)
        for (_, key, *_), reply in zip(commands, replies):
            if isinstance(reply, ResponseError):
                if str(reply).startswith("WRONGTYPE"):  # not written by this service
                    raise UnreadableRecord(key, str(reply))
                raise reply
        replies = iter(replies)
        events = []
        for stream, archive in zip(streams, archives):
            entries = next(replies)
            blob = next(replies) if archive is not None else None
            if not entries and blob:
                entries = _unpacked(blob, archive)
            events.append([self._envelope(stream, fields) for _, fields in entries])
        return events, [_stored_json(key, raw) for key, raw in zip(keys, replies)]

    def read_on(self, heads: list[tuple[str, int, str]]) -> list[tuple[int, list[Envelope]]]:
        """For each ``(stream, version, head_hash)`` a reader holds (streams of one table):
        ``(version, the events after it)``, or ``(0, every event)`` when the stream no
        longer has that head or has lost an event before it (it was shortened or
        rewritten). One round trip; an archived hand reads the same from its archive (its
        head checked here rather than in Lua)."""
        keys, args = [stream for stream, _, _ in heads], []
        for stream, version, head_hash in heads:
            archive = archive_of(stream)
            if archive is not None:
                keys.append(archive)
            args += [str(version), head_hash, str(len(keys)) if archive else "0"]
        clock = self.write_deadline is not None and self._redis_ahead is None
        replies = self._read_on_script(keys=keys, args=[*args, "time"] if clock else args)
        if clock:  # for the deadline of this process's first append (``_run_in_time``)
            seconds, micros = replies.pop()
            self._redis_ahead = int(seconds) + int(micros) / 1e6 - time.monotonic()
        return [self._read_on(head, int(version), entries)
                for head, (version, entries) in zip(heads, replies)]

    def _read_on(self, head: tuple[str, int, str], version: int, entries: list,
                 ) -> tuple[int, list[Envelope]]:
        """One stream's reply to ``_READ_ON_LUA`` (version -1: the archive) as envelopes."""
        stream, held, head_hash = head
        if version < 0:
            entries = _unpacked(entries, archive_of(stream))
            version = held if held and _hash_in(entries, held) == head_hash else 0
            entries = _after(entries, version)
        return version, [self._envelope(stream, fields) for _, fields in entries]

    def version(self, stream: str) -> int:
        return int(self.redis.xlen(stream))

    def wait(self, stream: str, after: int, timeout: float) -> list[Envelope]:
        """The envelopes after version ``after``, waiting up to ``timeout`` seconds for one to
        be appended (a blocking ``XREAD``: Redis wakes the caller, nothing polls); [] if none.
        A hand may end and be archived while its follower is not waiting: its stream is gone,
        and an ``XREAD`` of a gone key waits out its timeout, so an empty wait is followed by
        a ``read`` (the stream's events after ``after``, or its archive's)."""
        reply = self.redis.xread({stream: f"0-{after}"}, block=max(1, round(timeout * 1000)))
        if not reply:
            return self.read(stream, after)
        entries = reply[0][1]
        return [self._envelope(stream, fields) for _, fields in entries]

    def _hash_at(self, stream: str, version: int) -> str:
        if version == 0:
            return GENESIS_HASH
        entry = self.redis.xrange(stream, f"0-{version}", f"0-{version}")
        if not entry:
            return ""  # never matches: the script reports a conflict
        return next(_s(v) for k, v in entry[0][1].items() if _s(k) == "hash")

    def append(self, writes: list[StreamWrite], *, actor: str, command_id: str | None = None,
               idempotency: Idempotency | None = None, answer: dict | None = None,
               owe_job: tuple[str, str] | None = None,
               settle_job: tuple[str, str] | None = None,
               also_set: Callable[[dict[str, list[Envelope]]], dict[str, str]] | None = None,
               ends_hand: int | None = None) -> dict[str, list[Envelope]]:
        """Append atomically, once: when the script's answer is lost and the connection's
        retry sends it again, the copy finds this append's own envelopes in place (their
        event ids are random), or its own idempotency record, and it is answered as
        written. ``answer`` is what a retry with the same key gets back;
        ``also_set`` gives, from the new envelopes, other keys of the table to set with them;
        ``ends_hand``: the number of the table's hand these events end (with ``index_ended``,
        indexed in ``cardroom:ended-hands`` for ``service.retention`` once the script wrote)."""
        tables = {table_of(w.stream) for w in writes}
        tables |= {str(t[0]) for t in (owe_job, settle_job) if t is not None}
        if idempotency is not None:
            tables.add(idempotency.table_id)
        if len(tables) > 1:
            raise ValueError(f"one append must stay within one table, got {sorted(tables)}")
        if len({w.stream for w in writes}) != len(writes):
            raise ValueError("a stream appears twice in one append")
        if not tables:
            return {}
        table = tables.pop()

        now = self.clock().astimezone(timezone.utc).isoformat()
        by_stream: dict[str, list[Envelope]] = {}
        stream_args: list[str] = []
        heads = []  # (stream, version, hash) each write was decided on
        for w in writes:
            prev = w.prev_hash if w.prev_hash is not None else self._hash_at(
                w.stream, w.expected_version)
            heads.append((w.stream, w.expected_version, prev))
            stream_args += [str(w.expected_version), prev]
            stream_fields = []
            envelopes = by_stream[w.stream] = []
            for offset, event in enumerate(w.events, start=1):
                data = jsonio.canonical(event.data)
                fields = dict(type=event.type, data=jsonio.loads(data),  # keys in stored order
                              version=w.expected_version + offset, event_id=self.new_id(),
                              occurred_at=now, actor=actor, command_id=command_id,
                              prev_hash=prev)
                fields["hash"] = prev = envelope_hash(fields, data)
                stream_fields.append(self._stream_fields(w.stream, fields, data, event.openings))
                envelopes.append(Envelope.read_back(**fields, openings=event.openings,
                                                    data_json=data))
            stream_args.append(jsonio.dumps(stream_fields))

        extra = also_set(by_stream) if also_set else {}
        if any(table_of(key) != table for key in extra):
            raise ValueError("one append must stay within one table")
        # "write": this copy's own id, by which a copy sent again knows the record for its own
        record = ({"fingerprint": idempotency.fingerprint, "answer": answer,
                   "write": self.new_id()} if idempotency else {})
        idem = (idempotency_key(idempotency.table_id, idempotency.scope, idempotency.key)
                if idempotency else f"{_tag(table)}:idem:-")
        owing = table if owe_job else ""
        ended = f"{table}:{ends_hand}" if ends_hand is not None and self.index_ended else ""
        indexes = [OWED_TABLES_KEY, ENDED_HANDS_KEY] if self.one_server else []
        keys = [idem, owed_key(table), *(w.stream for w in writes), *extra, *indexes]
        args = ["1" if idempotency else "0", jsonio.canonical(record), str(IDEMPOTENCY_TTL_SECONDS),
                owe_job[1] if owe_job else "", settle_job[1] if settle_job else "",
                GENESIS_HASH, str(len(writes)), str(len(indexes)),
                *((owing, ended) if indexes else ("", "")), *stream_args, *extra.values()]
        if owing and not indexes:
            self.index_owed_table(table)  # before: a crash after the script stays indexed
        result = self._run_in_time(keys, args)
        status = _s(result[0])
        if status == "duplicate" and _s(result[1]) != args[1]:
            raise DuplicateCommand(jsonio.loads(result[1]))
        if status == "conflict":
            found = {head[0]: self._read_on(head, int(version), entries)
                     for head, (version, entries) in zip(heads, result[3])}
            if not self._landed(by_stream, found):
                metrics.VERSION_CONFLICTS.inc()
                stream = _s(result[1])
                expected = next(w.expected_version for w in writes if w.stream == stream)
                raise VersionConflict(stream, expected, int(result[2]), found)
        if owing and not indexes:  # back, if the sweeper removed it meanwhile
            self._indexed_after(lambda: self.index_owed_table(table),
                                f"table {table} owes a job but was not indexed again for the "
                                "sweeper")
        if ended and not indexes:  # only after: a crash leaves the hand a stream, no loss
            self._indexed_after(lambda: self.index_ended_hand(table, ends_hand),
                                f"hand {table}/{ends_hand} ended but was not indexed for the "
                                "archiver; it stays a stream")
        metrics.APPENDS.inc()
        return by_stream

    def _run_in_time(self, keys: list[str], args: list[str]) -> Any:
        """The append script's answer. With a ``write_deadline``, Redis runs it within that
        many seconds of its sending or writes nothing: a Redis that hung would otherwise run
        it once it woke, after the client had been answered that the store is unavailable,
        and a move retried after that 503 would be made twice. A script that finds itself
        late at once (this process's idea of Redis's clock was wrong) is sent again. That
        idea comes from the answers, and before the first from a read's (``read_on``), else
        from Redis's ``TIME``, asked then."""
        if self.write_deadline is not None and self._redis_ahead is None:
            self._redis_ahead = self.redis_time() - time.monotonic()  # raises if Redis hangs
        for _ in range(2):
            sent = time.monotonic()
            deadline = ("" if self.write_deadline is None
                        else repr(sent + self._redis_ahead + self.write_deadline))
            result = self._append_script(keys=keys, args=[*args, deadline])
            status = _s(result[0])
            if status in ("ok", "late"):
                self._redis_ahead = int(result[1]) + int(result[2]) / 1e6 - time.monotonic()
            if status != "late":
                return result
            if time.monotonic() - sent > self.write_deadline / 2:
                break
        raise redis.TimeoutError("Redis ran the append after its deadline: nothing was written")

    def _landed(self, by_stream: dict[str, list[Envelope]],
                found: dict[str, tuple[int, list[Envelope]]]) -> bool:
        """Whether a refused append's streams hold its own envelopes already: a copy of it
        was written, whose answer was lost. A stream found gone may have been archived since
        (its hand ended by that copy): then its archive tells."""
        for stream, envelopes in by_stream.items():
            if envelopes:
                version, entries = found.get(stream, (0, []))
                if not (version or entries) and envelopes[0].version > 1:  # gone
                    entries = self.read(stream)
                stored = {e.version: e.event_id for e in entries}
                return all(stored.get(e.version) == e.event_id for e in envelopes)
        return False

    def remembered(self, idempotency: Idempotency) -> dict | None:
        """The record ``{"fingerprint", "answer"}`` of a command sent with this key before."""
        raw = self.redis.get(idempotency_key(idempotency.table_id, idempotency.scope,
                                             idempotency.key))
        return None if raw is None else jsonio.loads(raw)

    def get_json(self, key: str) -> dict | None:
        raw = self.redis.get(key)
        return None if raw is None else jsonio.loads(raw)

    def owed_jobs(self, table_id: str, older_than_seconds: float) -> list[str]:
        """Job names owed for at least ``older_than_seconds``, oldest first."""
        seconds, micros = self.redis.time()
        cutoff = seconds + micros / 1e6 - older_than_seconds
        return [_s(name) for name in self.redis.zrangebyscore(owed_key(table_id), "-inf", cutoff)]

    def redis_time(self) -> float:
        """The Redis server's clock, in seconds (every owed-job time is on this clock)."""
        seconds, micros = self.redis.time()
        return seconds + micros / 1e6

    def index_owed_table(self, table_id: str) -> None:
        """Put the table in ``cardroom:owed-tables`` at the current Redis TIME."""
        _tag(table_id)  # a valid table id
        self._index_owed_script(keys=[OWED_TABLES_KEY], args=[str(table_id)])

    def owed_tables(self, cutoff: float, limit: int) -> list[str]:
        """Up to ``limit`` indexed tables whose entry is at most ``cutoff``, oldest first."""
        return [_s(t) for t in self.redis.zrangebyscore(OWED_TABLES_KEY, "-inf", repr(cutoff),
                                                        start=0, num=limit)]

    def owed_markers(self, table_ids: list[str]) -> dict[str, list[tuple[str, float]]]:
        """Every owed job of each table with its score (one round trip)."""
        pipe = self.redis.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.zrange(owed_key(table_id), 0, -1, withscores=True)
        return {table_id: [(_s(name), float(score)) for name, score in markers]
                for table_id, markers in zip(table_ids, pipe.execute())}

    def forget_owed_tables(self, table_ids: list[str], cutoff: float) -> int:
        """Remove each table's index entry if it is still at most ``cutoff``; the caller has
        just seen these tables owe nothing. How many were removed (one round trip).

        Why no owed marker is left unindexed: on one Redis, the script that writes the
        marker scores the table's entry with Redis TIME in the same step, so a removal
        decided on an owed set read before it finds a score past ``cutoff`` and keeps it.
        On a Redis Cluster an append that owes a job indexes the table
        (score = Redis TIME) BEFORE its script writes the marker, and again AFTER. The
        sweeper reads the owed set, then removes the entry only if its score is still
        at most ``cutoff`` (= Redis TIME minus the grace, ``owed_job_after``), in one
        script on the index key. So an append whose first index write came after the
        cutoff keeps its entry: the removal sees the newer score and does nothing. An
        append whose first write is older than the grace (its script still in flight
        that long) may lose that entry, but its second write, after the script, puts
        it back. Only a process that stalls for longer than the grace between its
        first index write and its script AND then dies between the script and its
        second index write leaves a marker unindexed. A crash between the first write
        and the script leaves an entry for a table that owes nothing, which this removes.
        """
        if not table_ids:
            return 0
        return int(self._forget_indexed_script(
            keys=[OWED_TABLES_KEY], args=[repr(cutoff), *map(str, table_ids)]))

    def index_ended_hand(self, table_id: str, hand_no: int) -> None:
        """Put ``<table_id>:<hand_no>`` in ``cardroom:ended-hands`` at the current Redis TIME."""
        self._index_ended_script(keys=[ENDED_HANDS_KEY], args=[f"{table_id}:{int(hand_no)}"])

    @staticmethod
    def _indexed_after(index: Callable[[], None], otherwise: str) -> None:
        """``index`` just after a cluster's append script: its failure is logged as
        ``otherwise``, not raised, since the write has landed (an index has a slot of its
        own, perhaps on another master, down while the table's answers)."""
        try:
            index()
        except redis.RedisError as error:
            log.warning("%s (%s)", otherwise, error)

    def claim_ended_hands(self, cutoff: float, limit: int, until: float,
                          ) -> list[tuple[str, int]]:
        """Up to ``limit`` indexed hands whose entry is at most ``cutoff``, oldest first, as
        ``(table_id, hand_no)``, their entries moved to ``until`` in the same script: another
        sweeper takes them again only once ``until`` is past its cutoff."""
        members = self._claim_indexed_script(keys=[ENDED_HANDS_KEY],
                                             args=[repr(cutoff), str(limit), repr(until)])
        return [(table_id, int(hand_no))
                for table_id, _, hand_no in (_s(m).rpartition(":") for m in members)]

    def release_ended_hands(self, hands: list[tuple[str, int]], cutoff: float) -> None:
        """Give claimed entries back at ``cutoff``: the next sweep tries them again."""
        if hands:
            self.redis.zadd(ENDED_HANDS_KEY, {f"{t}:{n}": cutoff for t, n in hands}, xx=True)

    def forget_ended_hands(self, hands: list[tuple[str, int]], cutoff: float) -> int:
        """Remove each hand's index entry if it is still at most ``cutoff`` (a write that
        ended the hand since, and indexed it anew, keeps it); how many (one round trip)."""
        if not hands:
            return 0
        return int(self._forget_indexed_script(
            keys=[ENDED_HANDS_KEY],
            args=[repr(cutoff), *(f"{table_id}:{hand_no}" for table_id, hand_no in hands)]))

    def archive_hand(self, table_id: str, hand_no: int) -> str:
        """Replace an ended hand's stream by its archive: ``archived``; ``gone`` if it is
        archived already; ``not_ended`` if its last event is not ``HandEnded`` (or it has
        no stream nor archive); ``changed`` if the stream moved on between the read and the
        script (then nothing was written). Two round trips: the read, and one script that
        swaps the keys only if the stream still has the length and head hash read."""
        stream, archive = hand_stream(table_id, hand_no), archive_key(table_id, hand_no)
        entries = self.redis.xrange(stream)
        if not entries or _pairs_of(entries[-1]).get("type") != "HandEnded":
            return "gone" if not entries and self.redis.exists(archive) else "not_ended"
        head_hash = _pairs_of(entries[-1])["hash"]
        outcome = _s(self._archive_script(keys=[stream, archive],
                                          args=[len(entries), head_hash, _packed(entries)]))
        return "not_ended" if outcome == "missing" else outcome

    def keep_owed_table(self, table_id: str, due: float) -> None:
        """Move the table's index entry forward to ``due`` (never back): the sweeper looks
        at it again once ``due`` is older than ``owed_job_after``."""
        self.redis.zadd(OWED_TABLES_KEY, {str(table_id): due}, gt=True)

    def claim_owed_job(self, table_id: str, job: str, cutoff: float) -> bool:
        """True if ``job`` is still owed with a marker at most ``cutoff``; then its marker is
        re-scored with Redis TIME, so of racing sweepers one claims it, and it is not due
        again before ``owed_job_after`` has passed once more."""
        return bool(self._claim_owed_job_script(keys=[owed_key(table_id)],
                                                args=[job, repr(cutoff)]))


    def _stream_fields(self, stream: str, chained: dict, data: str, openings: dict,
                       ) -> list[str]:
        """The entry's fields, flat: ``chained``, the chained fields and the hash in their
        order (``Envelope.to_dict``), ``data`` being its data as canonical JSON, and the
        openings encrypted."""
        flat = []
        for name, value in chained.items():
            if value is not None:  # command_id
                flat += (name, data if name == "data" else str(value))
        if openings:
            if self.cipher is None:
                raise ValueError("this store has no cipher for the openings of hidden values")
            context = _context(stream, chained["version"])
            flat += ("openings", self.cipher.encrypt(openings, context))
        return flat

    def _envelope(self, stream: str, raw: dict | list) -> Envelope:
        """``raw``: the fields, as ``XRANGE`` gives them or flat (a script's, an archive's)."""
        try:
            f = _fields(raw)
            version = int(f["version"])
            if str(version) != f["version"]:  # as the store writes it: int() takes "+1" too
                raise ValueError(f"version {f['version']!r} is not written as a version is")
            openings = (self.cipher.decrypt(f["openings"], _context(stream, version))
                        if "openings" in f and self.cipher is not None else {})
            return Envelope.read_back(
                type=f["type"], data=jsonio.loads(f["data"]), version=version,
                event_id=f["event_id"], occurred_at=f["occurred_at"], actor=f["actor"],
                command_id=f.get("command_id"), prev_hash=f["prev_hash"], hash=f["hash"],
                openings=openings, data_json=f["data"])
        except (KeyError, ValueError, AttributeError, TypeError) as error:
            raise UnreadableRecord(stream, f"{type(error).__name__}: {error}") from None


def _fields(raw: dict | list) -> dict[str, str]:
    """A stream entry's fields, decoded: as ``XRANGE`` gives them (a dict of bytes), a
    script (a flat list of bytes) or an archive (a flat list of str)."""
    if type(raw) is dict:  # XRANGE's: decoded pair by pair, not flattened first
        try:
            return {_decode(name): _decode(value) for name, value in raw.items()}
        except TypeError:  # not all bytes: judged below as any other
            pass
    if type(raw) is not list:
        raw = [item for pair in raw.items() for item in pair]
    if raw and type(raw[0]) is bytes:
        items = iter(map(_decode, raw))  # a TypeError at any item that is not bytes
    elif all(type(item) is str for item in raw):
        items = iter(raw)
    else:
        raise TypeError("a stored field is neither bytes nor a string")
    fields = dict(zip(items, items))
    if 2 * len(fields) != len(raw):
        raise ValueError("a stored field is named twice, or has no value")
    return fields


_decode = bytes.decode


def _pairs_of(entry: tuple) -> dict[str, str]:
    """An ``XRANGE`` entry's fields, decoded."""
    return {_s(k): _s(v) for k, v in entry[1].items()}


def _pairs(flat: list) -> dict:
    """A stream entry's fields as a script returns them (a flat list), as a dict."""
    items = iter(flat)
    return dict(zip(items, items))


def _packed(entries: list) -> bytes:
    """A stream's entries (``XRANGE``'s reply) as an archive: ``[[id, [field, value, ...]],
    ...]`` in JSON, every field as stored and in its order, zlib-compressed."""
    flat = [[_s(entry_id), [_s(item) for pair in fields.items() for item in pair]]
            for entry_id, fields in entries]
    return zlib.compress(json.dumps(flat, ensure_ascii=False, separators=(",", ":")).encode(), 9)


def _unpacked(blob: bytes, archive: str) -> list:
    """An archive's entries, shaped as a script returns a stream's: ``[id, flat fields]``
    (entries not ``0-1`` to ``0-n`` in order, each with a list of fields, are unreadable)."""
    try:
        entries = [(str(entry_id), fields) for entry_id, fields in jsonio.loads(
            zlib.decompress(blob))]
        for position, (entry_id, fields) in enumerate(entries, start=1):
            if entry_id != f"0-{position}" or type(fields) is not list:  # as XRANGE gave them
                raise ValueError(f"entry {position} of the archive is not the stream's")
        return entries
    except (zlib.error, ValueError, TypeError) as error:
        raise UnreadableRecord(archive, f"{type(error).__name__}: {error}") from None


def _stored_json(key: str, raw: bytes | None) -> Any:
    try:
        return None if raw is None else jsonio.loads(raw)
    except ValueError as error:
        raise UnreadableRecord(key, f"{type(error).__name__}: {error}") from None


def _version_of(entry_id: bytes | str) -> int:
    return int(_s(entry_id).split("-")[1])


def _after(entries: list, version: int) -> list:
    return [entry for entry in entries if _version_of(entry[0]) > version]


def _hash_in(entries: list, version: int) -> str | None:
    return next((_pairs(fields).get("hash") for entry_id, fields in entries
                 if _version_of(entry_id) == version), None)


def _context(stream: str, version: int) -> str:
    return f"{stream}#{version}"
