"""Event store tests, each run on fakeredis (with Lua) and on a real Redis the tests start."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import threading
import time
from datetime import datetime, timezone

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.connection import AbstractConnection

from domain.fairness import CHAINED_FIELDS, GENESIS_HASH, chain_problem, envelope_hash
from service.app import create_app
from service.backend import Backend, connect, in_process_client
from service.config import Config
from service.keys import Keys, new_key_pair
from service.retention import archive_ended_hands
from service.store import (
    DuplicateCommand, EventStore, Idempotency, NewEvent, Script, StreamWrite, UnreadableRecord,
    VersionConflict, hand_stream, idempotency_key, owed_key, receipt_key, table_stream,
)

T = "tbl1"
KEYS = Keys.from_hex(*new_key_pair())


def make_client(backend: str, request) -> redis.Redis:
    if backend == "fake":
        return in_process_client()
    client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    client.flushdb()
    return client


BACKENDS = ["fake", pytest.param("real", marks=pytest.mark.redis)]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def r(backend, request):  # named ``r``: conftest's ``client`` is the Flask test client
    client = make_client(backend, request)
    yield client
    client.flushdb()


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(r, clock) -> EventStore:
    return EventStore(r, KEYS, clock=clock)


def ev(n: int, type_: str = "BetPlaced") -> NewEvent:
    return NewEvent(type_, {"seat": n, "amount": n * 10, "nested": {"cards": ["As", "Kd"], "ok": True}})


def put(store: EventStore, stream: str, expected: int, *events: NewEvent, **kw):
    return store.append([StreamWrite(stream, expected, list(events))], actor="alice", **kw)[stream]


def test_append_read_round_trip(store, clock):
    s = hand_stream(T, 1)
    assert s == "t:{tbl1}:hand:1:events" and table_stream(T) == "t:{tbl1}:events"
    assert store.read(s) == [] and store.version(s) == 0
    written = put(store, s, 0, ev(1), ev(2), command_id="cmd-1")
    got = store.read(s)
    assert got == written
    assert [e.data for e in got] == [ev(1).data, ev(2).data]
    assert isinstance(got[0].data["amount"], int) and got[0].data["nested"]["ok"] is True
    first = got[0]
    assert (first.type, first.actor, first.command_id, first.version) == ("BetPlaced", "alice", "cmd-1", 1)
    assert first.prev_hash == GENESIS_HASH and got[1].prev_hash == first.hash
    assert datetime.fromisoformat(first.occurred_at) == clock.now
    assert first.to_dict()["data"] == ev(1).data and json.dumps(first.to_dict())
    assert list(first.to_dict()) == [*CHAINED_FIELDS, "hash"]
    put(store, s, 2, ev(3))  # no command id
    assert store.read(s)[2].command_id is None
    assert store.read(s, after=2) == store.read(s)[2:]


def test_read_whole_reads_each_stream_and_key_as_read_and_get_json_do(store, r):
    hand, table = hand_stream(T, 1), table_stream(T)
    put(store, hand, 0, ev(1), ev(2), command_id="cmd-1")
    put(store, table, 0, ev(3))
    r.set(receipt_key(T, 1), json.dumps({"signed": True}))
    assert store.read_whole([hand, table], [receipt_key(T, 1), receipt_key(T, 2)]) == (
        [store.read(hand), store.read(table)], [{"signed": True}, None])


def test_read_whole_names_a_key_of_another_type_and_its_connection_answers_the_next_read(
        store, r):
    """A WRONGTYPE reply is an unreadable record, named; every reply of the round trip is
    read first: a reply left unread would answer the next command sent on that connection."""
    hand = hand_stream(T, 1)
    put(store, hand, 0, ev(1))
    r.set(table_stream(T), "not a stream")
    with pytest.raises(UnreadableRecord, match=f"^{table_stream(T)}: WRONGTYPE"):
        store.read_whole([table_stream(T), hand], [receipt_key(T, 1)])
    r.set(receipt_key(T, 1), json.dumps({"signed": True}))
    assert store.read_whole([], [receipt_key(T, 1)]) == ([], [{"signed": True}])


def test_versions_contiguous_and_ids_are_versions(store, r):
    s = hand_stream(T, 7)
    for i in range(5):
        put(store, s, store.version(s), *[ev(j) for j in range(i % 3)])  # includes empty writes
    versions = [e.version for e in store.read(s)]
    assert versions == list(range(1, len(versions) + 1)) and store.version(s) == len(versions) == 4
    assert [i for i, _ in r.xrange(s)] == [f"0-{v}".encode() for v in versions]


def test_hash_chain_verifies_and_detects_edit(store, r):
    s = hand_stream(T, 1)
    put(store, s, 0, ev(1), ev(2), ev(3))
    envs = store.read(s)
    assert chain_problem([e.to_dict() for e in envs]) is None
    assert all(envelope_hash(e.to_dict()) == e.hash for e in envs)
    # rewrite the stream with version 2's amount changed
    raw = r.xrange(s)
    r.delete(s)
    for entry_id, fields in raw:
        if fields[b"version"] == b"2":
            fields[b"data"] = json.dumps({**json.loads(fields[b"data"]), "amount": 999}).encode()
        r.xadd(s, fields, id=entry_id)
    assert chain_problem([e.to_dict() for e in store.read(s)]).startswith("event 2: hash")


def test_hash_chain_detects_edit_with_recomputed_hash(store, r):
    s = hand_stream(T, 1)
    put(store, s, 0, ev(1), ev(2), ev(3))
    forged = store.read(s)[1].to_dict() | {"data": {"seat": 1, "amount": 1}}
    forged["hash"] = envelope_hash(forged)
    raw = r.xrange(s)
    r.delete(s)
    for entry_id, fields in raw:
        if fields[b"version"] == b"2":
            fields[b"data"], fields[b"hash"] = json.dumps(forged["data"]), forged["hash"]
        r.xadd(s, fields, id=entry_id)
    assert chain_problem([e.to_dict() for e in store.read(s)]).startswith("event 3: prev_hash")


def test_hash_chain_detects_deleted_event(store, r):
    s = hand_stream(T, 1)
    put(store, s, 0, ev(1), ev(2), ev(3))
    r.xdel(s, "0-2")
    assert "position 2" in chain_problem([e.to_dict() for e in store.read(s)])


def test_stale_version_conflicts_and_writes_nothing_anywhere(store):
    hand, table = hand_stream(T, 1), table_stream(T)
    put(store, table, 0, ev(1, "TableOpened"))
    before = (store.read(hand), store.read(table))
    with pytest.raises(VersionConflict) as info:  # hand is fresh (0 is right), table is stale
        store.append([StreamWrite(hand, 0, [ev(1)]), StreamWrite(table, 0, [ev(2)])], actor="bob")
    assert (info.value.stream, info.value.expected, info.value.actual) == (table, 0, 1)
    assert (store.read(hand), store.read(table)) == before
    with pytest.raises(VersionConflict):  # ahead of the stream is a conflict too
        put(store, hand, 3, ev(1))
    assert store.version(hand) == 0
    written = store.append([StreamWrite(hand, 0, [ev(1)]), StreamWrite(table, 1, [ev(2)])], actor="bob")
    assert [len(written[hand]), len(written[table])] == [1, 1] and store.version(table) == 2


def test_empty_write_is_a_version_check(store):
    hand, table = hand_stream(T, 1), table_stream(T)
    put(store, table, 0, ev(1))
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(hand, 0, [ev(1)]), StreamWrite(table, 0, [])], actor="bob")
    assert store.version(hand) == 0
    store.append([StreamWrite(hand, 0, [ev(1)]), StreamWrite(table, 1, [])], actor="bob")
    assert (store.version(hand), store.version(table)) == (1, 1)


def test_a_refused_append_answers_what_each_of_its_streams_has_after_it(store):
    """What ``read_on`` answers for the version and head each write was decided on: the
    events after them, or every event when the stream no longer has that head."""
    hand, table = hand_stream(T, 1), table_stream(T)
    put(store, table, 0, ev(1), ev(2))
    held_table = put(store, table, 2, ev(3))[-1]
    held_hand = put(store, hand, 0, ev(4))[-1]
    put(store, table, 3, ev(5), ev(6))
    heads = [(hand, 1, held_hand.hash), (table, 3, held_table.hash)]
    with pytest.raises(VersionConflict) as info:
        store.append([StreamWrite(hand, 1, [ev(7)], held_hand.hash),
                      StreamWrite(table, 3, [], held_table.hash)], actor="bob")
    found = info.value.found
    assert found[hand] == (1, []) and found[table][0] == 3
    assert [e.version for e in found[table][1]] == [4, 5]
    assert found == dict(zip([hand, table], store.read_on(heads)))
    with pytest.raises(VersionConflict) as info:  # a head the stream does not have there
        store.append([StreamWrite(table, 3, [ev(8)], held_hand.hash)], actor="bob")
    assert [(v, [e.version for e in events]) for v, events in info.value.found.values()] == [
        (0, [1, 2, 3, 4, 5])]


def test_streams_of_two_tables_are_refused(store):
    with pytest.raises(ValueError):
        store.append([StreamWrite(hand_stream("a", 1), 0, [ev(1)]),
                      StreamWrite(table_stream("b"), 0, [ev(1)])], actor="x")
    assert store.version(hand_stream("a", 1)) == 0


def test_racing_appends_one_wins(backend, r):
    s = hand_stream(T, 1)
    for round_ in range(30):
        outcomes: list[str] = []
        barrier = threading.Barrier(2)

        def attempt(who: str) -> None:
            store = EventStore(redis.Redis(connection_pool=r.connection_pool))
            barrier.wait()
            try:
                store.append([StreamWrite(s, round_, [NewEvent("BetPlaced", {"who": who})])], actor=who)
                outcomes.append("won")
            except VersionConflict:
                outcomes.append("conflict")
            except Exception as error:  # named by the assertion below, not lost in its thread
                outcomes.append(repr(error))

        threads = [threading.Thread(target=attempt, args=(w,)) for w in ("p1", "p2")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stored = [(e.version, e.actor) for e in EventStore(r).read(s)]  # named if it fails
        assert sorted(outcomes) == ["conflict", "won"], (round_, outcomes, stored)
        assert EventStore(r).version(s) == round_ + 1
    assert chain_problem([e.to_dict() for e in EventStore(r).read(s)]) is None


def test_an_embedded_servers_database_is_made_before_any_thread_connects():
    """fakeredis makes a server's database as its first connection opens, without a lock:
    two threads connecting first at once could each make one, and one's writes be lost
    (two racing appends were once both answered as written). So ours is made at once."""
    backend = Backend.from_config(Config())
    for client in (backend.redis, backend.rq):
        assert 0 in client.connection_pool.connection_kwargs["server"].dbs


def test_idempotent_retry_returns_first_record(store, r):
    s = hand_stream(T, 1)
    idem = Idempotency(T, "seat-3", "key-42", "fingerprint-a")
    first = store.append([StreamWrite(s, 0, [ev(1)])], actor="carol", idempotency=idem,
                         answer={"version": 1, "ok": True})
    record = store.remembered(idem)
    written_by = record.pop("write")  # this copy's own random id
    assert record == {"fingerprint": "fingerprint-a", "answer": {"version": 1, "ok": True}}
    assert len(written_by) == 32
    record["write"] = written_by
    assert 86000 < r.ttl(idempotency_key(T, "seat-3", "key-42")) <= 86400
    put(store, s, 1, ev(2))  # someone else moves the stream on
    for expected in (1, 2):  # stale or current version: the retry appends nothing
        with pytest.raises(DuplicateCommand) as info:
            store.append([StreamWrite(s, expected, [ev(1)])], actor="carol", idempotency=idem,
                         answer={"version": "second"})
        assert info.value.record == record
    assert store.version(s) == 2 and store.read(s)[0] == first[s][0]
    other = Idempotency(T, "seat-4", "key-42", "fingerprint-b")
    assert store.remembered(other) is None  # scope matters
    store.append([StreamWrite(s, 2, [ev(3)])], actor="dave", idempotency=other, answer={"v": 3})
    assert store.remembered(other)["answer"] == {"v": 3}


def test_conflict_does_not_remember_the_command(store):
    s = hand_stream(T, 1)
    idem = Idempotency(T, "seat-1", "k", "f")
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(s, 5, [ev(1)])], actor="a", idempotency=idem, answer={"x": 1})
    assert store.remembered(idem) is None
    store.append([StreamWrite(s, 0, [ev(1)])], actor="a", idempotency=idem, answer={"x": 2})
    assert store.remembered(idem)["answer"] == {"x": 2}


def test_openings_are_stored_encrypted_beside_the_chain_and_read_back(store, r):
    s = hand_stream(T, 1)
    secret = NewEvent("CardsDealt", {"seat": 1, "cards": [{"commitment": "c" * 64}]},
                      {"/cards/0": {"value": "As", "salt": "5a" * 16}})
    (written,) = put(store, s, 0, secret)
    raw = r.xrange(s)[0][1]
    assert b"\"As\"" not in b"".join(raw.values()) and b"openings" in raw  # base64 has no quotes
    (read,) = store.read(s)
    assert read.openings == secret.openings and read == written
    assert "openings" not in read.to_dict()
    assert envelope_hash(read.to_dict()) == read.hash  # the openings are outside the chain
    with pytest.raises(Exception):  # another secret key cannot read them
        EventStore(r, Keys.from_hex(*new_key_pair())).read(s)


def test_other_keys_are_set_in_the_same_atomic_write(store, r):
    s, key = hand_stream(T, 1), receipt_key(T, 1)

    def receipt(by_stream):
        return {key: json.dumps({"head": by_stream[s][-1].hash})}
    with pytest.raises(VersionConflict):  # a failed append sets nothing
        put(store, s, 3, ev(1), also_set=receipt)
    assert r.get(key) is None
    written = put(store, s, 0, ev(1), ev(2), also_set=receipt)
    assert store.get_json(key) == {"head": written[-1].hash}
    with pytest.raises(ValueError):  # only keys of the same table
        put(store, s, 2, ev(3), also_set=lambda _: {receipt_key("other", 1): "x"})


def test_owed_job_markers_are_part_of_the_atomic_write_and_timed_by_redis(store, r):
    s, job = hand_stream(T, 1), "showdown:1"
    with pytest.raises(VersionConflict):  # a failed append owes nothing
        put(store, s, 4, ev(1), owe_job=(T, job))
    assert r.zcard(owed_key(T)) == 0
    put(store, s, 0, ev(1), owe_job=(T, job))
    seconds, micros = r.time()
    assert abs(r.zscore(owed_key(T), job) - (seconds + micros / 1e6)) < 5
    assert store.owed_jobs(T, older_than_seconds=30) == []
    assert store.owed_jobs(T, older_than_seconds=-30) == [job]
    with pytest.raises(VersionConflict):  # a failed append settles nothing
        put(store, s, 0, ev(2), settle_job=(T, job))
    assert store.owed_jobs(T, -30) == [job]
    put(store, s, 1, ev(2), settle_job=(T, job), owe_job=(T, "showdown:2"))
    assert store.owed_jobs(T, -30) == ["showdown:2"] and store.version(s) == 2


batches = st.lists(
    st.lists(st.builds(NewEvent, st.sampled_from(["A", "B"]),
                       st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5)
                                       | st.floats(allow_nan=False, allow_infinity=False)
                                       | st.none()
                                       | st.lists(st.integers(), max_size=2), max_size=3)),
             max_size=4),
    max_size=6)


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=batches, data=st.data())
def test_property_chain_intact_and_read_after_is_suffix(kind, batches, data, request):
    client = make_client(kind, request)
    store = EventStore(client)
    s = hand_stream(T, 1)
    for batch in batches:
        put(store, s, store.version(s), *batch)
    envs = store.read(s)
    assert chain_problem([e.to_dict() for e in envs]) is None
    # the data's stored text is the canonical JSON that was hashed, byte for byte
    assert chain_problem([e.to_dict() for e in envs], [e.data_json for e in envs]) is None
    assert [e.data for e in envs] == [e.data for batch in batches for e in batch]
    k = data.draw(st.integers(0, len(envs) + 2))
    assert store.read(s, after=k) == envs[k:]
    client.flushdb()


def test_envelope_hash_formula():
    fields = dict(type="A", data={"b": 1, "a": "é"}, version=1, event_id="e", occurred_at="2024-05-01T12:00:00+00:00",
                  actor="x", command_id=None, prev_hash=GENESIS_HASH)
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert envelope_hash(fields) == hashlib.sha256((GENESIS_HASH + body).encode()).hexdigest()
    assert envelope_hash(fields | {"hash": "ignored", "openings": {"/x": 1}}) == envelope_hash(fields)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)))  # a lone surrogate is no JSON
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | _TEXT, lambda inner: st.lists(inner) | st.dictionaries(_TEXT, inner),
                     max_leaves=8)


@given(st.fixed_dictionaries({"type": _JSON, "data": _JSON, "version": _JSON, "event_id": _JSON,
                              "occurred_at": _JSON, "actor": _JSON, "command_id": _JSON,
                              "prev_hash": _TEXT}))
def test_envelope_hash_writes_the_body_as_canonical_json_would(fields):
    """The body is written field by field, the data's stored text spliced in: the same
    bytes as the canonical JSON of the whole body, whatever a downloaded field holds."""
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256((fields["prev_hash"] + body).encode()).hexdigest()
    stored = json.dumps(fields["data"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert envelope_hash(fields) == expected == envelope_hash(fields, stored)


def test_script_checks_the_chain_link_not_only_the_length(store, r, monkeypatch):
    """A racer replaces the stream between our read of its last hash and our script."""
    s = hand_stream(T, 1)
    put(store, s, 0, ev(1))
    real_xrange, fired = r.xrange, []

    def racing_xrange(*args, **kwargs):
        result = real_xrange(*args, **kwargs)
        if not fired:
            fired.append(True)
            r.delete(s)
            EventStore(r).append([StreamWrite(s, 0, [ev(9)])], actor="mallory")
        return result

    monkeypatch.setattr(r, "xrange", racing_xrange)
    with pytest.raises(VersionConflict):
        put(store, s, 1, ev(2))
    monkeypatch.undo()
    assert [e.actor for e in store.read(s)] == ["mallory"]


def test_a_writer_chained_to_a_stale_head_hash_gets_a_conflict(store):
    """The head hash a writer gives (its cache's) is checked by the script like a read one."""
    s = hand_stream(T, 1)
    first = put(store, s, 0, ev(1))[0]
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(s, 1, [ev(2)], prev_hash="0" * 64)], actor="bob")
    assert store.version(s) == 1
    written = store.append([StreamWrite(s, 1, [ev(2)], prev_hash=first.hash)], actor="bob")[s]
    assert written[0].prev_hash == first.hash and chain_problem(
        [e.to_dict() for e in store.read(s)]) is None


def test_values_beyond_ascii_survive_the_append_script(store):
    s = hand_stream(T, 1)
    data = {"name": "Zoë ♠ 丁", "quote": "a \"b\" \\ c\n", "nul": "x\u0000y", "emoji": "🂡"}
    written = put(store, s, 0, NewEvent("SeatTaken", data))
    assert store.read(s) == written and written[0].data == data
    assert chain_problem([e.to_dict() for e in store.read(s)]) is None


def test_read_on_gives_what_follows_a_head_or_everything_when_the_head_is_gone(store, r):
    hand, table = hand_stream(T, 1), table_stream(T)
    put(store, hand, 0, ev(1), ev(2))
    put(store, table, 0, ev(3))
    head = store.read(hand)[1]
    put(store, hand, 2, ev(4))
    (since, after), (table_since, table_all) = store.read_on(
        [(hand, 2, head.hash), (table, 0, GENESIS_HASH)])
    assert (since, [e.version for e in after]) == (2, [3])
    assert (table_since, [e.version for e in table_all]) == (0, [1])
    third = after[0]
    assert store.read_on([(hand, 3, third.hash)]) == [(3, [])]  # nothing new
    ((since, everything),) = store.read_on([(hand, 2, "f" * 64)])  # not our head: rewritten
    assert (since, [e.version for e in everything]) == (0, [1, 2, 3])
    r.xdel(hand, "0-3")  # shortened under the reader
    ((since, everything),) = store.read_on([(hand, 3, third.hash)])
    assert (since, [e.version for e in everything]) == (0, [1, 2])
    other = hand_stream(T, 2)
    put(store, other, 0, ev(1), ev(2), ev(3))
    second = store.read(other)[1]
    r.xdel(other, "0-2")  # the held event gone, one after it still there
    ((since, everything),) = store.read_on([(other, 2, second.hash)])
    assert (since, [e.version for e in everything]) == (0, [1, 3])
    r.xdel(other, "0-1")  # one before the held event gone
    ((since, everything),) = store.read_on([(other, 3, everything[-1].hash)])
    assert (since, [e.version for e in everything]) == (0, [3])


@pytest.mark.redis
def test_threads_calling_scripts_at_once_each_get_their_own_answers(redis_url):
    """On a plain Redis a script goes out on a connection of the calling thread's own: one
    connection shared by threads without a lock would mix up their replies."""
    echo = Script(connect(redis_url), "return ARGV[1]")
    wrong = []

    def calls(n: int) -> None:
        for i in range(300):
            if (answer := echo([], [f"{n}:{i}"])) != f"{n}:{i}".encode():
                wrong.append(answer)
    threads = [threading.Thread(target=calls, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


class LostAnswers:
    """Redis runs each command, but the answer of the first append that was written is lost
    on the way back (the connection breaks, or the reply comes after the read timeout), so
    the client's retry sends it again."""

    def __init__(self, monkeypatch, error: type[redis.RedisError], meanwhile=lambda: None):
        self.lost = []
        read = AbstractConnection.read_response

        def losing(connection, *args, **kwargs):
            answer = read(connection, *args, **kwargs)
            if isinstance(answer, list) and answer[:1] == [b"ok"] and not self.lost:
                self.lost.append(answer)
                meanwhile()
                raise error("the answer was lost")
            return answer
        monkeypatch.setattr(AbstractConnection, "read_response", losing)


LOSSES = [redis.ConnectionError, redis.TimeoutError]


@pytest.mark.redis
@pytest.mark.parametrize("error", LOSSES)
def test_an_append_whose_answer_was_lost_is_sent_again_and_done_once(redis_url, monkeypatch,
                                                                      error):
    client = connect(redis_url)
    client.flushdb()
    store = EventStore(client)
    head = put(store, table_stream(T), 0, ev(1))[-1]
    lost = LostAnswers(monkeypatch, error)
    written = store.append([StreamWrite(table_stream(T), 1, [ev(2), ev(3)], head.hash)],
                           actor="alice")[table_stream(T)]
    assert [answer[0] for answer in lost.lost] == [b"ok"]  # the first copy was written
    stored = store.read(table_stream(T))
    assert [e.version for e in stored] == [1, 2, 3] and stored[1:] == written


@pytest.mark.redis
@pytest.mark.parametrize("error", LOSSES)
@pytest.mark.parametrize("key", [{}, {"Idempotency-Key": "j-1"}])
def test_a_join_whose_answer_was_lost_seats_the_player_once(real_backend, monkeypatch, error,
                                                            key):
    """The retry finds the seat its first copy took, or with a key the copy's own record:
    a first answer, not a replay (the client sent it once)."""
    client = create_app(backend=real_backend).test_client()
    table = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    admin = {"Authorization": f"Bearer {table['admin_token']}"}
    players = f"/v1/tables/{table['table_id']}/players"
    client.post(players, json={"name": "ann", "buy_in": 500})
    LostAnswers(monkeypatch, error)
    joined = client.post(players, json={"name": "bob", "buy_in": 500}, headers=key)
    monkeypatch.undo()
    assert joined.status_code == 201, joined.json
    assert "Idempotent-Replayed" not in joined.headers
    seats = client.get(f"/v1/tables/{table['table_id']}", headers=admin).json["seats"]
    assert [s["name"] for s in seats] == ["ann", "bob"]


@pytest.mark.redis
def test_a_move_that_ended_its_hand_and_whose_answer_was_lost_while_the_hand_was_archived(
        redis_url, monkeypatch):
    """Without a key: the copy sent again finds the hand's stream gone, and its archive
    holds the move (CARDROOM_ARCHIVE_AFTER below the read timeout)."""
    backend = Backend.from_config(Config(redis_url=redis_url, archive_after=0.0))
    backend.redis.flushdb()
    client = create_app(backend=backend).test_client()
    table_id, path, tokens = _a_hand_of_two(client, "texas-holdem")
    seat = client.get(path, headers=tokens[1]).json["awaiting"][0]
    sweeper = EventStore(connect(redis_url))
    LostAnswers(monkeypatch, redis.TimeoutError,
                meanwhile=lambda: archive_ended_hands(sweeper, 0.0))
    folded = client.post(f"{path}/actions", json={"type": "fold"}, headers=tokens[seat])
    monkeypatch.undo()
    assert folded.status_code == 201, folded.json
    assert [e["type"] for e in folded.json["events"]][0] == "PlayerFolded"
    assert not backend.redis.exists(hand_stream(table_id, 1))  # archived


def _a_hand_of_two(client, game: str) -> tuple[str, str, dict[int, dict]]:
    """A table of ann and bob whose first hand has started: its id, the hand's path and
    the players' headers by seat."""
    table = client.post("/v1/tables", json={"game": game}).json
    players = f"/v1/tables/{table['table_id']}/players"
    tokens = {}
    for name in ("ann", "bob"):
        joined = client.post(players, json={"name": name, "buy_in": 500}).json
        tokens[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
    client.post(f"/v1/tables/{table['table_id']}/hands",
                headers={"Authorization": f"Bearer {table['admin_token']}"})
    return table["table_id"], f"/v1/tables/{table['table_id']}/hands/1", tokens


@pytest.mark.redis
@pytest.mark.parametrize("key", [{}, {"Idempotency-Key": "last-call"}])
def test_the_move_to_the_showdown_whose_answer_was_lost_enqueues_its_job(real_backend,
                                                                          monkeypatch, key):
    client = create_app(backend=real_backend).test_client()
    _, path, tokens = _a_hand_of_two(client, "five-card-draw")
    moves = [{"type": "check"}] * 2 + [{"type": "draw", "cards": []}] * 2 + [{"type": "check"}]
    for move in moves:  # all but the last check
        seat = client.get(path, headers=tokens[1]).json["awaiting"][0]
        assert client.post(f"{path}/actions", json=move, headers=tokens[seat]).status_code == 201
    seat = client.get(path, headers=tokens[1]).json["awaiting"][0]
    LostAnswers(monkeypatch, redis.ConnectionError)
    last = client.post(f"{path}/actions", json={"type": "check"}, headers={**tokens[seat], **key})
    monkeypatch.undo()
    assert last.status_code == 201 and "Idempotent-Replayed" not in last.headers, last.json
    assert client.get(path, headers=tokens[1]).json["status"] == "showdown_pending"
    assert real_backend.queue.count == 1  # not left to the sweeper


@pytest.mark.redis
@pytest.mark.parametrize("retries", [0, 1])
def test_a_script_call_is_sent_again_when_its_connection_was_closed(redis_url, retries):
    """A thread's connection that Redis closed while it lay idle (a restart, a failover,
    its idle timeout) is replaced, as the pool replaces one before lending it, without
    using up the client's retries (none here, or one): the caller never sees it. Before
    the first call the script is not loaded: it is, once."""
    client = connect(redis_url, retries=retries)
    client.flushdb()
    client.script_flush()
    store = EventStore(client)
    put(store, table_stream(T), 0, ev(1))
    admin = redis.Redis.from_url(redis_url)
    for _ in range(2):
        assert admin.client_kill_filter(_type="normal", skipme=True) >= 1
        ((version, events),) = store.read_on([(table_stream(T), 0, GENESIS_HASH)])
        assert (version, [e.version for e in events]) == (0, [1])


def test_openings_decrypt_as_written_now_and_as_written_before():
    """Openings are encrypted as compact JSON; those stored before, with the spaces of
    Python's ``json.dumps``, still decrypt to the same value."""
    openings = {"/cards/0": {"value": "As", "salt": "ab" * 16}}
    assert KEYS.decrypt(KEYS.encrypt(openings, "ctx"), "ctx") == openings
    nonce = os.urandom(12)
    before = KEYS._cipher.encrypt(nonce, json.dumps(openings).encode(), b"ctx")
    assert b" " in json.dumps(openings).encode()
    assert KEYS.decrypt(base64.b64encode(nonce + before).decode(), "ctx") == openings


def own_server(tmp_path):
    from tests.processes import RedisServer, redis_binary
    return RedisServer(redis_binary(), tmp_path).start()


@pytest.mark.redis
@pytest.mark.parametrize("hang, written, first", [
    (2.5, False, None), (0.2, True, None), (2.5, False, "read_on"), (2.5, False, "read_whole")])
def test_an_append_that_redis_would_run_after_its_deadline_writes_nothing(tmp_path, hang,
                                                                         written, first):
    """A Redis that hangs (stopped here) past the client's read timeout and its retry (1 s
    each here) runs, as it wakes, the appends waiting on its sockets, after the client was
    answered that the store is unavailable: so the script writes only within half the read
    timeout of its sending. A shorter stall is waited out and written. So too the ``first``
    append of a process that has only read (its connection made): a hand read
    (``read_on``) answers Redis's clock beside the events; after another read, the append
    asks it first."""
    server = own_server(tmp_path)
    try:
        store = EventStore(connect(server.url, timeout=1.0))
        assert store.write_deadline == 0.5
        head = put(store, table_stream(T), 0, ev(1))[-1]
        if first == "read_on":
            store = EventStore(connect(server.url, timeout=1.0))
            assert store.read_on([(table_stream(T), 1, head.hash)]) == [(1, [])]
            assert store._redis_ahead is not None
        elif first == "read_whole":
            store = EventStore(connect(server.url, timeout=1.0))
            store.read_whole([table_stream(T)], [])
        move = [StreamWrite(table_stream(T), 1, [ev(2)], head.hash)]  # the head held
        os.kill(server.proc.pid, signal.SIGSTOP)
        threading.Timer(hang, os.kill, (server.proc.pid, signal.SIGCONT)).start()
        if written:
            store.append(move, actor="alice")
        else:
            with pytest.raises(redis.TimeoutError):
                store.append(move, actor="alice")
        time.sleep(max(0.0, hang - 2.0) + 0.5)  # past the hang: what waited has run
        assert store.version(table_stream(T)) == (2 if written else 1)
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
        server.stop()


@pytest.mark.redis
def test_a_wrong_idea_of_the_redis_clock_is_corrected_and_the_append_written(redis_url):
    client = connect(redis_url)
    client.flushdb()
    store = EventStore(client)
    put(store, table_stream(T), 0, ev(1))
    store._redis_ahead -= 60  # as if Redis's clock had been set back a minute
    put(store, table_stream(T), 1, ev(2))
    assert store.version(table_stream(T)) == 2 and abs(
        store._redis_ahead + time.monotonic() - store.redis_time()) < 1
