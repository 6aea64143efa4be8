"""Event store: hash-chained event envelopes in Redis Streams.

Key layout (every key of a table carries the hash tag ``{<table_id>}``, so one Lua
script may touch all of them, also on Redis Cluster):

    t:{<table_id>}:events               table stream
    t:{<table_id>}:hand:<n>:events      one stream per hand
    t:{<table_id>}:idem:<sha256>        remembered response of a command (TTL 24 h);
                                        sha256 hex of ``scope + "\\0" + key``
    t:{<table_id>}:owed                 sorted set: job name -> epoch seconds it became owed
    cardroom:tables                     set of table ids (global, outside any table)

A stream entry has the explicit ID ``0-<version>`` and flat fields ``type``, ``data``
(canonical JSON), ``version``, ``event_id``, ``occurred_at``, ``actor``,
``command_id`` (absent when None), ``prev_hash`` and ``hash``, where
``hash = sha256(prev_hash + canonical_json(all other fields))``.

``EventStore.append`` builds the envelopes in Python, then runs ONE Lua script
(``_APPEND_LUA``) which, atomically: (1) returns the remembered response if the
idempotency key exists; (2) checks, for every stream, that its length and last
generated ID equal the expected version and that its last entry's hash equals the
``prev_hash`` the new envelopes were chained to, else reports a conflict having
written nothing; (3) XADDs every envelope; (4) stores the idempotency response;
(5) clears / sets the owed-job marker.  Nothing is written before all checks pass.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable
from uuid import uuid4

GENESIS_HASH = "0" * 64
TABLES_KEY = "cardroom:tables"
IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
_TAG = re.compile(r"^t:\{([^{}]+)\}:")


def _tag(table_id: str) -> str:
    table_id = str(table_id)
    if not table_id or "{" in table_id or "}" in table_id:
        raise ValueError(f"invalid table id: {table_id!r}")
    return f"t:{{{table_id}}}"


def table_stream(table_id: str) -> str:
    return f"{_tag(table_id)}:events"


def hand_stream(table_id: str, hand_no: int) -> str:
    return f"{_tag(table_id)}:hand:{int(hand_no)}:events"


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


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def envelope_hash(fields: dict) -> str:
    """sha256(prev_hash + canonical JSON of every envelope field but ``hash``)."""
    body = {k: v for k, v in fields.items() if k != "hash"}
    return hashlib.sha256((body["prev_hash"] + canonical_json(body)).encode()).hexdigest()


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

    def to_dict(self) -> dict:
        return asdict(self)

    def with_data(self, data: dict) -> "Envelope":
        return replace(self, data=data)


@dataclass(frozen=True)
class NewEvent:
    type: str
    data: dict


@dataclass(frozen=True)
class StreamWrite:
    stream: str
    expected_version: int
    events: list[NewEvent]


class VersionConflict(Exception):
    def __init__(self, stream: str, expected: int, actual: int):
        super().__init__(f"{stream}: expected version {expected}, actual {actual}")
        self.stream, self.expected, self.actual = stream, expected, actual


class DuplicateCommand(Exception):
    def __init__(self, response: dict):
        super().__init__("command already applied")
        self.response = response


def verify_chain(envelopes: Iterable[Envelope]) -> list[str]:
    """Problems in a stream's chain; empty when versions are 1..n, links and hashes hold."""
    problems: list[str] = []
    prev = GENESIS_HASH
    for position, env in enumerate(envelopes, start=1):
        if env.version != position:
            problems.append(f"version {env.version} at position {position}")
        if env.prev_hash != prev:
            problems.append(f"version {env.version}: prev_hash does not match the previous hash")
        if envelope_hash(env.to_dict()) != env.hash:
            problems.append(f"version {env.version}: hash does not match its content")
        prev = env.hash
    return problems


# KEYS: idempotency key, owed zset, stream_1 .. stream_n
# ARGV: use_idem, response, ttl, owe_job, settle_job, now, genesis, then per stream:
#       expected_version, prev_hash, n_events, then per event: n_fields, f1, v1, ...
_APPEND_LUA = """
if ARGV[1] == '1' then
  local seen = redis.call('GET', KEYS[1])
  if seen then return {'duplicate', seen} end
end
local writes, pos = {}, 8
for i = 3, #KEYS do
  local key, expected, prev = KEYS[i], tonumber(ARGV[pos]), ARGV[pos + 1]
  local n_events = tonumber(ARGV[pos + 2])
  pos = pos + 3
  local length, last_id, last_hash = 0, '0-0', ARGV[7]
  if redis.call('EXISTS', key) == 1 then
    local info = redis.call('XINFO', 'STREAM', key)
    for j = 1, #info, 2 do
      if info[j] == 'length' then length = info[j + 1] end
      if info[j] == 'last-generated-id' then last_id = info[j + 1] end
    end
    local top = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)[1]
    if top then
      last_hash = ''
      for j = 1, #top[2], 2 do if top[2][j] == 'hash' then last_hash = top[2][j + 1] end end
    end
  end
  if length ~= expected or last_id ~= '0-' .. expected or last_hash ~= prev then
    return {'conflict', key, length}
  end
  writes[#writes + 1] = {key, expected, pos, n_events}
  for _ = 1, n_events do pos = pos + 1 + 2 * tonumber(ARGV[pos]) end
end
for _, w in ipairs(writes) do
  local p = w[3]
  for e = 1, w[4] do
    local n = tonumber(ARGV[p])
    redis.call('XADD', w[1], '0-' .. (w[2] + e), unpack(ARGV, p + 1, p + 2 * n))
    p = p + 1 + 2 * n
  end
end
if ARGV[1] == '1' then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[2], ARGV[5]) end
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[2], ARGV[6], ARGV[4]) end
return {'ok'}
"""


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _envelope(fields: dict) -> Envelope:
    f = {_s(k): _s(v) for k, v in fields.items()}
    return Envelope(type=f["type"], data=json.loads(f["data"]), version=int(f["version"]),
                    event_id=f["event_id"], occurred_at=f["occurred_at"], actor=f["actor"],
                    command_id=f.get("command_id"), prev_hash=f["prev_hash"], hash=f["hash"])


def _stream_fields(env: Envelope) -> list[str]:
    pairs = [(name, canonical_json(value) if name == "data" else str(value))
             for name, value in env.to_dict().items() if value is not None]  # only command_id may be None
    return [str(len(pairs)), *(item for pair in pairs for item in pair)]


class EventStore:
    def __init__(self, redis: Any, *, clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
                 new_id: Callable[[], str] = lambda: uuid4().hex):
        self.redis, self.clock, self.new_id = redis, clock, new_id
        self._append_script = redis.register_script(_APPEND_LUA)

    def read(self, stream: str, after: int = 0) -> list[Envelope]:
        return [_envelope(fields) for _, fields in self.redis.xrange(stream, f"0-{after + 1}", "+")]

    def version(self, stream: str) -> int:
        return int(self.redis.xlen(stream))

    def last_hash(self, stream: str) -> str:
        top = self.redis.xrevrange(stream, "+", "-", count=1)
        return _envelope(top[0][1]).hash if top else GENESIS_HASH

    def _hash_at(self, stream: str, version: int) -> str:
        if version == 0:
            return GENESIS_HASH
        entry = self.redis.xrange(stream, f"0-{version}", f"0-{version}")
        return _envelope(entry[0][1]).hash if entry else ""  # "" never matches: the script reports it

    def append(self, writes: list[StreamWrite], *, actor: str, command_id: str | None = None,
               idempotency: tuple[str, str, str] | None = None,
               response: Callable[[dict[str, list[Envelope]]], dict] | None = None,
               owe_job: tuple[str, str] | None = None,
               settle_job: tuple[str, str] | None = None) -> dict[str, list[Envelope]]:
        tables = {table_of(w.stream) for w in writes}
        tables |= {str(t[0]) for t in (idempotency, owe_job, settle_job) if t is not None}
        if len(tables) > 1:
            raise ValueError(f"one append must stay within one table, got {sorted(tables)}")
        if len({w.stream for w in writes}) != len(writes):
            raise ValueError("a stream appears twice in one append")
        if not tables:
            return {}
        table = tables.pop()

        now = self.clock().astimezone(timezone.utc)
        by_stream: dict[str, list[Envelope]] = {}
        stream_args: list[str] = []
        for w in writes:
            prev = self._hash_at(w.stream, w.expected_version)
            stream_args += [str(w.expected_version), prev, str(len(w.events))]
            envelopes = by_stream[w.stream] = []
            for offset, event in enumerate(w.events, start=1):
                fields = dict(type=event.type, data=json.loads(canonical_json(event.data)),
                              version=w.expected_version + offset, event_id=self.new_id(),
                              occurred_at=now.isoformat(), actor=actor, command_id=command_id,
                              prev_hash=prev)
                env = Envelope(**fields, hash=envelope_hash(fields))
                envelopes.append(env)
                stream_args += _stream_fields(env)
                prev = env.hash
        response = response or (lambda envs: {s: [e.to_dict() for e in es] for s, es in envs.items()})
        answer = response(by_stream) if idempotency else {}

        idem = idempotency_key(*idempotency) if idempotency else f"{_tag(table)}:idem:-"
        keys = [idem, owed_key(table), *(w.stream for w in writes)]
        args = ["1" if idempotency else "0", canonical_json(answer), str(IDEMPOTENCY_TTL_SECONDS),
                owe_job[1] if owe_job else "", settle_job[1] if settle_job else "",
                repr(now.timestamp()), GENESIS_HASH, *stream_args]
        result = self._append_script(keys=keys, args=args)
        status = _s(result[0])
        if status == "duplicate":
            raise DuplicateCommand(json.loads(_s(result[1])))
        if status == "conflict":
            stream = _s(result[1])
            expected = next(w.expected_version for w in writes if w.stream == stream)
            raise VersionConflict(stream, expected, int(result[2]))
        return by_stream

    def remembered_response(self, table_id: str, scope: str, key: str) -> dict | None:
        raw = self.redis.get(idempotency_key(table_id, scope, key))
        return None if raw is None else json.loads(_s(raw))

    def owed_jobs(self, table_id: str, older_than_seconds: float) -> list[str]:
        """Job names owed for at least ``older_than_seconds``, oldest first."""
        cutoff = self.clock().timestamp() - older_than_seconds
        return [_s(name) for name in self.redis.zrangebyscore(owed_key(table_id), "-inf", cutoff)]

    def register_table(self, table_id: str) -> None:
        self.redis.sadd(TABLES_KEY, str(table_id))

    def table_ids(self) -> list[str]:
        return sorted(_s(t) for t in self.redis.smembers(TABLES_KEY))
