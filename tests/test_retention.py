"""Retention (``CARDROOM_ARCHIVE_AFTER``): ended hands compacted into one archive key each,
every read of them the same as before, on embedded fakeredis.

The archiver is called with the setting it would get (0: every ended hand is old enough;
an hour: none is), so nothing here sleeps or depends on timing."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
import redis

from service import metrics
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.retention import archive_ended_hands
from service.store import (ENDED_HANDS_KEY, EventStore, NewEvent, StreamWrite, VersionConflict,
                           archive_key, hand_stream)
from tests.test_api import act, hand_url, play_to_showdown, start_hand
from tests.test_sweeper import recorded

DOCUMENT = (Path(__file__).parent / "data" / "phh" / "dwan-ivey-2009.phh").read_text()
HOUR = 3600.0


@pytest.fixture
def fake_backend(request, monkeypatch):
    """An embedded backend with the setting on (an hour: nothing is old enough unless a
    test archives with a cutoff of its own; a test may give another, None for off); its
    jobs read the setting from the environment, as a worker does."""
    after = getattr(request, "param", HOUR)
    if after is None:
        monkeypatch.delenv("CARDROOM_ARCHIVE_AFTER", raising=False)
    else:
        monkeypatch.setenv("CARDROOM_ARCHIVE_AFTER", str(after))
    backend = Backend.from_config(Config(archive_after=after))
    yield backend
    backend.stop_worker_thread()


@pytest.fixture
def store(fake_backend):
    return EventStore(fake_backend.redis)


def played(client, fake_backend, table) -> list[int]:
    """Hand 1 settled by its showdown job, hand 2 decided by folds: both ended."""
    first = start_hand(client, table)
    play_to_showdown(client, table, first)
    assert fake_backend.run_jobs()
    second = start_hand(client, table)
    act(client, table, second, 3, type="bet", amount=25)
    act(client, table, second, 1, type="fold")
    act(client, table, second, 2, type="fold")
    return [first, second]


def every_read(client, table, hand_no) -> dict:
    """Every read of the hand, for every viewer: (viewer, path) -> (status, body bytes); a
    refusal (a player's audit) by its code, as its body names its request."""
    viewers = {f"seat {seat}": headers for seat, headers in table["players"].items()}
    viewers.update(admin=table["admin"], auditor=table["auditor"])
    paths = ["", "?at=1", "?at=4", "/events", "/events?after=3", "/events/stream",
             "/events/stream?last_event_id=3", "/history", "/history?format=phh", "/receipt",
             "/audit"]
    reads = {}
    for viewer, headers in viewers.items():
        for path in paths:
            response = client.get(hand_url(table, hand_no, path), headers=headers)
            body = (response.json["code"] if response.mimetype == "application/problem+json"
                    else response.get_data())
            response.close()  # gives an event stream's slot back
            reads[viewer, path] = (response.status_code, body)
    return reads


def fresh_client(fake_backend):
    """An app of its own (a cold replay cache) on the same Redis."""
    backend = Backend(Config(), fake_backend.redis, embedded=True)
    return create_app(backend=backend).test_client()


def test_every_read_of_an_archived_hand_is_unchanged_warm_and_cold(client, fake_backend,
                                                                   table, store):
    hands = played(client, fake_backend, table)
    before = {hand_no: every_read(client, table, hand_no) for hand_no in hands}
    assert before[hands[0]]["auditor", "/audit"][0] == 200
    assert json.loads(before[hands[0]]["auditor", "/audit"][1])["valid"]
    counted = metrics.job_metrics().hands_archived._value.get()
    assert archive_ended_hands(store, 0.0) == 2
    assert metrics.job_metrics().hands_archived._value.get() == counted + 2
    redis = fake_backend.redis
    for hand_no in hands:
        assert not redis.exists(hand_stream(table["id"], hand_no))
        assert redis.exists(archive_key(table["id"], hand_no))
        assert redis.exists(f"t:{{{table['id']}}}:hand:{hand_no}:receipt")
        assert every_read(client, table, hand_no) == before[hand_no]  # warm cache
        assert every_read(fresh_client(fake_backend), table, hand_no) == before[hand_no]
    assert redis.zcard(ENDED_HANDS_KEY) == 0


def test_a_cached_reader_reads_on_from_the_archive_without_replaying(client, fake_backend,
                                                                     table, store):
    (hand_no, _) = played(client, fake_backend, table)
    stream = hand_stream(table["id"], hand_no)
    cache = client.application.extensions["cardroom"].cache
    client.get(hand_url(table, hand_no), headers=table["admin"])
    held = cache.base(stream)
    archive_ended_hands(store, 0.0)
    assert store.read_on([(stream, held.version, held.head_hash)]) == [(held.version, [])]
    everything = store.read_on([(stream, 0, "")])[0]
    assert everything[0] == 0 and len(everything[1]) == held.version
    assert everything[1][-1].hash == held.head_hash
    assert store.read_on([(stream, held.version, "another head")])[0] == everything
    assert [e.version for e in store.read(stream, after=held.version - 2)] == [
        held.version - 1, held.version]
    client.get(hand_url(table, hand_no), headers=table["admin"])
    assert cache.base(stream).state is held.state  # not replayed: the state held goes on


def test_a_live_stream_that_fell_behind_the_archiver_still_ends(fake_backend, table, store):
    """A follower not waiting on the stream when its hand ended and was archived (a slow
    client, a short setting) reads the rest from the archive: a blocking XREAD of a deleted
    stream would wait for good, sending heartbeats and never the end."""
    backend = Backend(Config(sse_heartbeat=0.05, archive_after=HOUR), fake_backend.redis,
                      embedded=True)
    client = create_app(backend=backend).test_client()
    hand_no = start_hand(client, table)
    response = client.get(hand_url(table, hand_no, "/events/stream"), buffered=False,
                          headers=table["players"][1])
    chunks = iter(response.response)
    assert b"snapshot" in next(chunks) + next(chunks)  # ": open", then the snapshot
    play_to_showdown(client, table, hand_no)
    assert backend.run_jobs()
    assert archive_ended_hands(store, 0.0) == 1
    rest = [chunk.decode() for chunk, _ in zip(chunks, range(100))]
    response.close()
    assert rest[-1].startswith(f"id: {store.read(hand_stream(table['id'], hand_no))[-1].version}"
                               "\nevent: end\n"), rest[-3:]


def test_an_imported_hand_is_indexed_and_archived_like_a_played_one(client, fake_backend, store):
    imported = client.post("/v1/imports/phh", json={"phh": DOCUMENT}).json
    table = {"id": imported["table_id"], "players": {},
             "admin": {"Authorization": f"Bearer {imported['admin_token']}"},
             "auditor": {"Authorization": f"Bearer {imported['auditor_token']}"}}
    before = every_read(client, table, imported["hand_no"])
    assert archive_ended_hands(store, 0.0) == 1
    assert not fake_backend.redis.exists(hand_stream(table["id"], imported["hand_no"]))
    assert every_read(fresh_client(fake_backend), table, imported["hand_no"]) == before


def test_hands_in_progress_or_ended_lately_are_not_archived(client, fake_backend, table, store):
    ended, _ = played(client, fake_backend, table)
    going = start_hand(client, table)
    redis = fake_backend.redis
    assert redis.zscore(ENDED_HANDS_KEY, f"{table['id']}:{going}") is None
    assert archive_ended_hands(store, HOUR) == 0
    assert archive_ended_hands(store, None) == 0  # the setting off
    assert redis.exists(hand_stream(table["id"], ended))
    assert redis.zscore(ENDED_HANDS_KEY, f"{table['id']}:{ended}") is not None
    store.index_ended_hand(table["id"], going)  # as a write that failed after indexing it
    assert archive_ended_hands(store, 0.0) == 2
    assert redis.exists(hand_stream(table["id"], going))
    assert not redis.exists(archive_key(table["id"], going))
    assert redis.zcard(ENDED_HANDS_KEY) == 0  # its entry dropped: the end indexes it anew
    act(client, table, going, 1, type="bet", amount=25)
    act(client, table, going, 2, type="fold")
    act(client, table, going, 3, type="fold")
    assert redis.zscore(ENDED_HANDS_KEY, f"{table['id']}:{going}") is not None


def test_archiving_twice_or_racing_archives_once(client, fake_backend, table, store):
    first, second = played(client, fake_backend, table)
    other = EventStore(fake_backend.redis)
    real_script = store._archive_script

    def raced(keys, args):  # the other archiver wins between this one's read and script
        assert other.archive_hand(table["id"], first) == "archived"
        return real_script(keys=keys, args=args)
    store._archive_script = raced
    assert store.archive_hand(table["id"], first) == "gone"
    store._archive_script = real_script
    assert archive_ended_hands(store, 0.0) == 1  # the second; the first's entry dropped
    assert archive_ended_hands(other, 0.0) == 0
    assert store.archive_hand(table["id"], second) == "gone"
    assert fake_backend.redis.zcard(ENDED_HANDS_KEY) == 0


def test_a_sweeper_leaves_alone_the_hands_another_has_taken(client, fake_backend, table, store,
                                                             monkeypatch):
    first, second = played(client, fake_backend, table)
    other, real, tried = EventStore(fake_backend.redis), EventStore.archive_hand, []

    def archive_hand(archiver, table_id, hand_no):
        tried.append(("other" if archiver is other else "store", hand_no))
        if len(tried) == 1:  # the other sweeps while this one is at its first hand
            assert archive_ended_hands(other, 0.0) == 0
        return real(archiver, table_id, hand_no)
    monkeypatch.setattr(EventStore, "archive_hand", archive_hand)
    assert archive_ended_hands(store, 0.0) == 2
    assert tried == [("store", first), ("store", second)]  # not read and packed twice
    assert fake_backend.redis.zcard(ENDED_HANDS_KEY) == 0


def test_a_stream_that_moved_on_since_the_read_is_left_alone(client, fake_backend, table,
                                                             store):
    hand_no, _ = played(client, fake_backend, table)
    stream, redis = hand_stream(table["id"], hand_no), fake_backend.redis
    real_script = store._archive_script
    length = redis.xlen(stream)

    def moved_on(keys, args):
        redis.xadd(stream, {"type": "Extra", "hash": "x"}, id=f"0-{length + 1}")
        return real_script(keys=keys, args=args)
    store._archive_script = moved_on
    assert store.archive_hand(table["id"], hand_no) == "changed"
    assert redis.xlen(stream) == length + 1 and not redis.exists(archive_key(table["id"], hand_no))


def test_an_append_to_an_archived_hand_is_refused(client, fake_backend, table, store):
    hand_no, _ = played(client, fake_backend, table)
    stream = hand_stream(table["id"], hand_no)
    head = store.read(stream)[-1]
    archive_ended_hands(store, 0.0)
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(stream, head.version, [NewEvent("Extra", {})], head.hash)],
                     actor="admin")
    assert not fake_backend.redis.exists(stream)
    assert store.read(stream)[-1] == head


def test_a_tampered_archive_fails_the_audit(client, fake_backend, table, store):
    _, hand_no = played(client, fake_backend, table)
    audit = hand_url(table, hand_no, "/audit")
    assert client.get(audit, headers=table["auditor"]).json["valid"]
    archive_ended_hands(store, 0.0)
    key, redis = archive_key(table["id"], hand_no), fake_backend.redis
    entries = json.loads(zlib.decompress(redis.get(key)))
    for _, fields in entries:
        data = fields.index("data") + 1
        if fields[fields.index("type") + 1] == "BetPlaced":
            assert '"to":25' in fields[data]
            fields[data] = fields[data].replace('"to":25', '"to":50')
    redis.set(key, zlib.compress(json.dumps(entries).encode()))
    result = client.get(audit, headers=table["auditor"]).json
    assert not result["valid"]
    assert not next(c for c in result["checks"] if c["name"] == "hash_chain")["ok"]


def test_an_archive_that_does_not_decode_fails_the_audit(client, fake_backend, table, store):
    _, hand_no = played(client, fake_backend, table)
    archive_ended_hands(store, 0.0)
    fake_backend.redis.set(archive_key(table["id"], hand_no), b"not zlib")
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert audit["valid"] is False
    [check] = audit["checks"]
    assert check["name"] == "stored_records" and ":archive" in check["detail"]


def _entry_id_of_five(entries):
    entries[0][0] = "5"


def _version_as_a_number(entries):
    fields = entries[0][1]
    fields[fields.index("version") + 1] = 1


def _type_as_a_list(entries):
    fields = entries[0][1]
    fields[fields.index("type") + 1] = ["HandStarted"]


def _ids_reversed(entries):
    ids = [entry_id for entry_id, _ in entries]
    for entry, entry_id in zip(entries, reversed(ids)):
        entry[0] = entry_id


def _type_named_twice(entries):
    entries[0][1] += ["type", "HandStarted"]


def _openings_swapped(entries):
    sealed = [fields for _, fields in entries if "openings" in fields]
    first, second = (fields.index("openings") + 1 for fields in sealed[:2])
    sealed[0][first], sealed[1][second] = sealed[1][second], sealed[0][first]


@pytest.mark.parametrize("garble", [_entry_id_of_five, _version_as_a_number, _type_as_a_list,
                                    _ids_reversed, _type_named_twice, _openings_swapped])
def test_an_archive_entry_this_service_could_not_have_written_fails_the_audit(
        client, fake_backend, table, store, garble):
    """Not a 500, and not a pass: the audit names the record as ``stored_records``."""
    _, hand_no = played(client, fake_backend, table)
    archive_ended_hands(store, 0.0)
    key, redis = archive_key(table["id"], hand_no), fake_backend.redis
    entries = json.loads(zlib.decompress(redis.get(key)))
    garble(entries)
    redis.set(key, zlib.compress(json.dumps(entries).encode()))
    answer = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"])
    assert answer.status_code == 200 and answer.json["valid"] is False
    assert [c["name"] for c in answer.json["checks"]] == ["stored_records"]
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"])
    assert history.json["code"] == "stored_record_unreadable", history.json


def test_the_sweep_archives_only_with_the_setting(client, fake_backend, table):
    hand_no, _ = played(client, fake_backend, table)
    stream = hand_stream(table["id"], hand_no)
    fake_backend.sweep()
    assert fake_backend.redis.exists(stream)
    on = Backend(Config(archive_after=0.0), fake_backend.redis, embedded=True)
    on.sweep()
    assert not fake_backend.redis.exists(stream)
    assert fake_backend.redis.exists(archive_key(table["id"], hand_no))


def test_a_failing_hand_is_logged_once_and_retried_and_the_others_go_on(
        client, fake_backend, table, monkeypatch, caplog):
    first, second = played(client, fake_backend, table)
    real = EventStore.archive_hand

    def failing(store, table_id, hand_no):
        if hand_no == first:
            raise ValueError("cannot pack this one")
        return real(store, table_id, hand_no)
    monkeypatch.setattr(EventStore, "archive_hand", failing)
    on = Backend(Config(archive_after=0.0), fake_backend.redis, embedded=True)
    on.sweep()
    on.sweep()
    redis = fake_backend.redis
    assert not redis.exists(hand_stream(table["id"], second))  # archived all the same
    assert redis.exists(hand_stream(table["id"], first))
    assert redis.zscore(ENDED_HANDS_KEY, f"{table['id']}:{first}") is not None  # kept
    logged = [r for r in caplog.records if "archive_ended_hands failed" in r.getMessage()]
    assert len(logged) == 1 and "cannot pack this one" in str(logged[0].exc_info[1])
    monkeypatch.setattr(EventStore, "archive_hand", real)
    on.sweep()
    assert not redis.exists(hand_stream(table["id"], first))
    assert redis.zcard(ENDED_HANDS_KEY) == 0


@pytest.mark.parametrize("raw, expected", [("", None), ("0", 0.0), ("30", 30.0),
                                           (" 2.5 ", 2.5)])
def test_the_setting_is_seconds_or_off(raw, expected):
    assert Config.from_env({"CARDROOM_ARCHIVE_AFTER": raw}).archive_after == expected
    assert Config.from_env({}).archive_after is None


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf", "1h"])
def test_a_malformed_setting_is_refused_with_its_name(raw):
    with pytest.raises(ValueError, match="CARDROOM_ARCHIVE_AFTER"):
        Config.from_env({"CARDROOM_ARCHIVE_AFTER": raw})


def test_cardroom_refuses_to_start_with_a_malformed_setting(cardroom_process):
    proc = cardroom_process("serve", CARDROOM_ARCHIVE_AFTER="a while")
    assert proc.wait(20) == 2, proc.log_path.read_text()  # a bad setting: exit 2, one line
    assert "CARDROOM_ARCHIVE_AFTER" in proc.log_path.read_text()


@pytest.mark.parametrize("one_server", [True, False])
def test_a_write_that_ends_a_hand_indexes_it_with_the_setting_on(fake_backend, one_server):
    """By its script on one server; just after it on a Redis Cluster (a script touches
    one slot)."""
    calls = []
    store = EventStore(fake_backend.redis, index_ended=True)
    store.one_server = one_server
    store._append_script = recorded(calls, "script", store._append_script)
    store._index_ended_script = recorded(calls, "index", store._index_ended_script)
    store.append([StreamWrite(hand_stream("t1", 1), 0, [NewEvent("A", {})])], actor="x")
    assert calls == ["script"]  # a write that ends nothing does not touch the index
    calls.clear()
    store.append([StreamWrite(hand_stream("t1", 1), 1, [NewEvent("HandEnded", {})])],
                 actor="x", ends_hand=1)
    assert calls == (["script"] if one_server else ["script", "index"])
    assert fake_backend.redis.zrange(ENDED_HANDS_KEY, 0, -1) == [b"t1:1"]
    calls.clear()  # a failed write is not indexed
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(hand_stream("t1", 2), 5, [NewEvent("HandEnded", {})])],
                     actor="x", ends_hand=2)
    assert calls == ["script"]


def test_on_a_cluster_a_write_that_ended_a_hand_stands_when_its_index_cannot_be_written(
        fake_backend, caplog):
    """The index is written after the script (another slot, perhaps another master, down or
    slow): its failure must not turn a write that landed into an error (a 503 for a move
    made: the client's retry is then refused as ``hand_over``). The hand stays a stream."""
    store = EventStore(fake_backend.redis, index_ended=True)
    store.one_server = False

    def unavailable(keys, args):
        raise redis.ConnectionError("the index's master is down")
    store._index_ended_script = unavailable
    stream = hand_stream("t1", 1)
    written = store.append([StreamWrite(stream, 0, [NewEvent("HandEnded", {})])], actor="x",
                           ends_hand=1)
    assert [e.version for e in written[stream]] == [1] == [e.version for e in store.read(stream)]
    assert fake_backend.redis.zcard(ENDED_HANDS_KEY) == 0
    assert "t1" in caplog.text and "master is down" in caplog.text


@pytest.mark.parametrize("fake_backend", [None], indirect=True)
def test_with_the_setting_off_no_hand_is_indexed(client, fake_backend, table):
    """Neither the API nor the showdown job index a hand when the setting is off: the
    index would grow for good."""
    hands = played(client, fake_backend, table)
    assert all(fake_backend.redis.exists(hand_stream(table["id"], n)) for n in hands)
    assert fake_backend.redis.zcard(ENDED_HANDS_KEY) == 0
