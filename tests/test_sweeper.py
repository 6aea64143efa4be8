"""The owed-showdown sweeper (``service.jobs.enqueue_owed_jobs``) on a real Redis of its own.

Each test gets a flushed database on a private ``redis-server`` this module starts
on a free loopback port (and stops). Hands are played through the Flask app on
that Redis; jobs run in the test's thread (``Backend.run_jobs``). "A worker takes
a job and dies" is RQ's own bookkeeping done by hand: a ``SimpleWorker`` dequeues
the job and marks it started, and then never runs it.
"""

from __future__ import annotations


import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus

from service import jobs
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.store import (OWED_TABLES_KEY, EventStore, NewEvent, StreamWrite, VersionConflict,
                           hand_stream, owed_key, table_stream)
from tests.processes import RedisServer, redis_binary

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def private_redis_url(tmp_path_factory):
    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("sweeper-redis")).start()
    yield server.url
    server.stop()


@pytest.fixture
def make_backend(private_redis_url):
    """Factory: a Backend on the private Redis with the given ``owed_job_after``; the
    database is flushed once, before the first."""
    made: list[Backend] = []

    def make(owed_job_after: float = 0.0) -> Backend:
        config = Config(redis_url=private_redis_url, owed_job_after=owed_job_after)
        backend = Backend(config, redis.Redis.from_url(private_redis_url), embedded=False)
        if not made:
            backend.redis.flushdb()
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.redis.close()


class Room:
    """Tables and hands through the HTTP API of an app on ``backend``."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.http = create_app(backend=backend).test_client()
        self.store = EventStore(backend.redis)

    def table(self, players: int = 0) -> dict:
        created = self.http.post("/v1/tables", json={"game": "five-card-draw",
                                                     "max_seats": 4}).json
        table = {"id": created["table_id"], "admin": _auth(created["admin_token"]),
                 "players": {}}
        for name in ("ann", "bob", "cy")[:players]:
            joined = self.http.post(f"/v1/tables/{table['id']}/players",
                                    json={"name": name, "buy_in": 1000}).json
            table["players"][joined["seat"]] = _auth(joined["token"])
        return table

    def showdown(self) -> tuple[str, int]:
        """A table of three whose first hand waits for its showdown: (table id, hand no)."""
        table = self.table(players=3)
        started = self.http.post(f"/v1/tables/{table['id']}/hands", headers=table["admin"])
        assert started.status_code == 201, started.json
        hand_no = started.json["hand_no"]
        moves = [(2, {"type": "bet", "amount": 25}), (3, {"type": "call"}), (1, {"type": "call"})]
        moves += [(seat, {"type": "draw", "cards": []}) for seat in (2, 3, 1)]
        moves += [(seat, {"type": "check"}) for seat in (2, 3, 1)]
        for seat, body in moves:
            resp = self.http.post(f"/v1/tables/{table['id']}/hands/{hand_no}/actions",
                                  json=body, headers=table["players"][seat])
            assert resp.status_code == 201, resp.json
        assert self.status(table["id"], hand_no) == "showdown_pending"
        return table["id"], hand_no

    def status(self, table_id: str, hand_no: int) -> str:
        types = [e.type for e in self.store.read(hand_stream(table_id, hand_no))]
        return "ended" if "HandEnded" in types else (
            "showdown_pending" if types[-1] == "StreetStarted" else "betting")

    def settled_once(self, table_id: str, hand_no: int) -> bool:
        types = [e.type for e in self.store.read(hand_stream(table_id, hand_no))]
        settled = [e for e in self.store.read(table_stream(table_id))
                   if e.type == "HandSettled" and e.data["hand_no"] == hand_no]
        return (types.count("ShowdownEvaluated") == 1 and types.count("HandEnded") == 1
                and len(settled) == 1)


def _auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def queue_entries(backend: Backend) -> list[str]:
    return [i.decode() for i in backend.redis.lrange(backend.queue.key, 0, -1)]


def take_and_die(backend: Backend, alive: bool) -> str:
    """A worker takes the next job, as RQ does (started, in its StartedJobRegistry, its
    name on the job), and never runs it; ``alive``: its sweeper marks it alive."""
    worker = SimpleWorker([backend.queue], connection=backend.redis)
    job, queue = Queue.dequeue_any([backend.queue], None, connection=backend.redis)
    worker.prepare_execution(job)
    worker.prepare_job_execution(job, remove_from_intermediate_queue=True)
    assert job.get_status() == JobStatus.STARTED
    if alive:
        jobs.mark_worker_alive(backend.redis, worker.name)
    return worker.name


def age_index_entry(backend: Backend, table_id: str, seconds: float) -> None:
    """Pretend the table was indexed ``seconds`` ago (by Redis TIME)."""
    now = EventStore(backend.redis).redis_time()
    backend.redis.zadd(OWED_TABLES_KEY, {table_id: now - seconds})


# --- a job is enqueued once --------------------------------------------------

def test_five_sweeps_of_one_lost_job_leave_one_queue_entry_and_the_hand_settles_once(
        make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    backend.queue.empty()  # the job is lost before any worker saw it (gone with the queue)
    assert queue_entries(backend) == []

    counts = [jobs.enqueue_owed_jobs(backend) for _ in range(5)]

    assert counts == [1, 0, 0, 0, 0]
    jid = jobs.showdown_job_id(table_id, hand_no)
    assert queue_entries(backend) == [jid]
    assert backend.redis.keys("rq:job:*") == [Job.key_for(jid).encode()]
    assert backend.run_jobs()
    assert room.settled_once(table_id, hand_no)
    assert [jobs.enqueue_owed_jobs(backend) for _ in range(2)] == [0, 0]
    assert not backend.run_jobs()


def test_a_queued_job_is_not_enqueued_again(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()  # the API enqueued its job
    jid = jobs.showdown_job_id(table_id, hand_no)
    assert queue_entries(backend) == [jid]
    assert backend.queue.fetch_job(jid).description == (  # not its sealed hand, for RQ's lines
        f"showdown of hand {hand_no} at table {table_id}")

    assert [jobs.enqueue_owed_jobs(backend) for _ in range(5)] == [0] * 5
    assert queue_entries(backend) == [jid]


def test_a_job_a_live_worker_is_running_is_not_enqueued_again(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    take_and_die(backend, alive=True)  # still running, as far as anyone can tell

    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [0, 0, 0]
    assert queue_entries(backend) == []
    assert room.status(table_id, hand_no) == "showdown_pending"


def test_a_job_whose_worker_died_is_enqueued_again_once_and_settles_once(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    worker_name = take_and_die(backend, alive=True)
    assert jobs.enqueue_owed_jobs(backend) == 0
    backend.redis.delete(jobs.worker_alive_key(worker_name))  # its TTL ran out: it died

    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [1, 0, 0]

    jid = jobs.showdown_job_id(table_id, hand_no)
    assert queue_entries(backend) == [jid]
    assert backend.run_jobs()
    assert Job.fetch(jid, connection=backend.redis).get_status() == JobStatus.FINISHED
    assert room.settled_once(table_id, hand_no)
    assert jobs.enqueue_owed_jobs(backend) == 0 and queue_entries(backend) == []


def test_a_job_lost_while_queued_is_enqueued_again_once_and_settles_once(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    jid = jobs.showdown_job_id(table_id, hand_no)
    backend.redis.lrem(backend.queue.key, 0, jid)  # gone from the queue; RQ still says queued
    assert Job.fetch(jid, connection=backend.redis).get_status() == JobStatus.QUEUED

    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [1, 0, 0]

    assert queue_entries(backend) == [jid]
    assert backend.run_jobs()
    assert room.settled_once(table_id, hand_no)


def test_a_marker_is_not_due_before_owed_job_after_even_if_its_job_is_lost(make_backend):
    backend = make_backend(owed_job_after=60)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    backend.queue.empty()
    assert jobs.enqueue_owed_jobs(backend) == 0
    store = room.store
    backend.redis.zadd(owed_key(table_id), {f"showdown:{hand_no}": store.redis_time() - 61})
    age_index_entry(backend, table_id, 61)
    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [1, 0, 0]
    # the claim re-scored the marker: not due again for another owed_job_after
    assert store.owed_jobs(table_id, 60) == [] and store.owed_jobs(table_id, -1) != []


def test_the_sweep_works_on_the_embedded_fakeredis_too(fake_backend):
    room = Room(fake_backend)
    table_id, hand_no = room.showdown()
    fake_backend.queue.empty()
    backend = Backend(Config(owed_job_after=0), fake_backend.redis, embedded=True)
    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [1, 0, 0]
    assert backend.run_jobs()
    assert room.settled_once(table_id, hand_no)


# --- the sweep reads only what may be owed ----------------------------------

def _sweep_cost(backend: Backend) -> tuple[int, int]:
    """(commands the server ran, keys it looked up) for one sweep; nothing else talks to
    this server meanwhile."""
    backend.redis.ping()  # the connection is open before counting
    backend.redis.config_resetstat()
    jobs.enqueue_owed_jobs(backend)
    commands = backend.redis.info("commandstats")
    stats = backend.redis.info("stats")
    calls = sum(c["calls"] for name, c in commands.items()
                if not name.startswith(("cmdstat_info", "cmdstat_config", "cmdstat_client")))
    return calls, stats["keyspace_hits"] + stats["keyspace_misses"]


def test_the_sweep_does_not_grow_with_tables_that_owe_nothing(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    for table_id, hand_no in [room.showdown(), room.showdown()]:  # two hands ended
        assert backend.run_jobs() or room.status(table_id, hand_no) == "ended"
    for _ in range(10):
        room.table(players=2)
    jobs.enqueue_owed_jobs(backend)  # removes the index entries of the settled tables
    assert backend.redis.zcard(OWED_TABLES_KEY) == 0
    few = _sweep_cost(backend)

    for _ in range(400):
        room.table(players=1)
    many = _sweep_cost(backend)

    assert many == few, f"sweep cost with 12 tables {few}, with 412 tables {many}"
    assert few[0] <= 3, few  # TIME, ZRANGEBYSCORE on the index, and nothing per table


# --- the index ------------------------------------------------------------------

def recorded(calls: list, name: str, script):
    """``script``, appending ``name`` to ``calls`` at each call."""
    def call(**kwargs):
        calls.append(name)
        return script(**kwargs)
    return call


@pytest.mark.parametrize("one_server", [True, False])
def test_append_indexes_a_table_it_makes_owe_a_job(make_backend, one_server):
    """On one server the append script indexes the table itself; on a Redis Cluster (a
    script touches one slot) the table is indexed just before the script and again just
    after it."""
    backend = make_backend()
    store = EventStore(backend.redis)
    store.one_server = one_server
    table_id = "t1"
    calls = []
    store._append_script = recorded(calls, "script", store._append_script)
    store._index_owed_script = recorded(calls, "index", store._index_owed_script)
    store.append([StreamWrite(hand_stream(table_id, 1), 0, [NewEvent("A", {})])],
                 actor="x", owe_job=(table_id, "showdown:1"))
    assert calls == (["script"] if one_server else ["index", "script", "index"])
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None

    calls.clear()  # an append that owes nothing does not touch the index
    store.append([StreamWrite(hand_stream(table_id, 1), 1, [NewEvent("B", {})])],
                 actor="x", settle_job=(table_id, "showdown:1"))
    assert calls == ["script"]

    calls.clear()  # a failed append: on a cluster indexed before, not after (the sweeper
    with pytest.raises(VersionConflict):  # cleans it); on one server not at all
        store.append([StreamWrite(hand_stream("t2", 1), 5, [NewEvent("A", {})])],
                     actor="x", owe_job=("t2", "showdown:1"))
    assert calls == (["script"] if one_server else ["index", "script"])
    assert (backend.redis.zscore(OWED_TABLES_KEY, "t2") is None) == one_server


def test_on_a_cluster_a_write_stands_when_its_index_after_cannot_be_written(make_backend,
                                                                           caplog):
    """The index again after the script (another slot, perhaps a master that is down): its
    failure must not turn a move that landed into a 503."""
    store = EventStore(make_backend().redis)
    store.one_server = False
    index = store._index_owed_script
    calls = []

    def down_after_the_first(keys, args):
        calls.append(args)
        if len(calls) > 1:
            raise redis.ConnectionError("the index's master is down")
        return index(keys=keys, args=args)
    store._index_owed_script = down_after_the_first
    stream = hand_stream("t1", 1)
    written = store.append([StreamWrite(stream, 0, [NewEvent("A", {})])], actor="x",
                           owe_job=("t1", "showdown:1"))
    assert len(calls) == 2 and [e.version for e in written[stream]] == [1]
    assert [e.version for e in store.read(stream)] == [1]
    assert "table t1 owes a job" in caplog.text and "master is down" in caplog.text


def test_a_stale_index_entry_whose_script_never_ran_is_cleaned(make_backend):
    """On a Redis Cluster, where the table is indexed before the append script runs."""
    backend = make_backend(owed_job_after=5)
    store = EventStore(backend.redis)
    store.one_server = False
    table_id = "crashed"

    def crash(**kwargs):
        raise redis.ConnectionError("the process died before its script ran")

    store._append_script = crash
    with pytest.raises(redis.ConnectionError):
        store.append([StreamWrite(hand_stream(table_id, 1), 0, [NewEvent("A", {})])],
                     actor="x", owe_job=(table_id, "showdown:1"))
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None
    assert backend.redis.zcard(owed_key(table_id)) == 0

    assert jobs.enqueue_owed_jobs(backend) == 0  # younger than the grace: kept
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None

    age_index_entry(backend, table_id, 6)
    assert jobs.enqueue_owed_jobs(backend) == 0
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is None


def test_an_index_entry_of_an_append_in_flight_is_not_removed(make_backend, monkeypatch):
    """The sweeper sees the table owe nothing while an append is between its first index
    write and its script; the table must stay indexed, and the job that append owes
    must be swept once it is due."""
    backend = make_backend(owed_job_after=5)
    store = EventStore(backend.redis)
    table_id = "inflight"

    # 1. the first index write was just now, the script has not run: within the grace
    store.index_owed_table(table_id)
    assert jobs.enqueue_owed_jobs(backend) == 0
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None

    # 2. an older entry (a previous hand), and the append runs whole between the
    #    sweeper's read of the owed set and its removal of the entry
    age_index_entry(backend, table_id, 6)
    markers = EventStore.owed_markers

    def read_then_append(self, table_ids):
        found = markers(self, table_ids)
        assert found == {table_id: []}
        EventStore(backend.redis).append(
            [StreamWrite(hand_stream(table_id, 1), 0, [NewEvent("A", {})])],
            actor="x", owe_job=(table_id, "showdown:1"))
        return found

    monkeypatch.setattr(EventStore, "owed_markers", read_then_append)
    assert jobs.enqueue_owed_jobs(backend) == 0
    monkeypatch.setattr(EventStore, "owed_markers", markers)
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None, (
        "the sweeper removed the entry of a table whose append was in flight")

    # 3. another table: its first write is older than the grace and only its script
    #    lands in that window: the entry goes, and the append's second write restores it
    other = "inflight2"
    store.index_owed_table(other)
    age_index_entry(backend, other, 6)
    backend.redis.zadd(OWED_TABLES_KEY, {table_id: store.redis_time()})  # not due now

    def read_then_script(self, table_ids):
        found = markers(self, table_ids)
        assert found == {other: []}
        backend.redis.zadd(owed_key(other), {"showdown:2": store.redis_time()})
        return found

    monkeypatch.setattr(EventStore, "owed_markers", read_then_script)
    assert jobs.enqueue_owed_jobs(backend) == 0
    monkeypatch.setattr(EventStore, "owed_markers", markers)
    assert backend.redis.zscore(OWED_TABLES_KEY, other) is None
    store.index_owed_table(other)  # the append's write after its script
    assert backend.redis.zscore(OWED_TABLES_KEY, other) is not None

    # 4. once the markers are due, the sweep finds both jobs (neither was enqueued)
    for table, job in ((table_id, "showdown:1"), (other, "showdown:2")):
        backend.redis.zadd(owed_key(table), {job: store.redis_time() - 6})
        age_index_entry(backend, table, 6)
    assert jobs.enqueue_owed_jobs(backend) == 2
    assert sorted(queue_entries(backend)) == sorted(
        [jobs.showdown_job_id(table_id, 1), jobs.showdown_job_id(other, 2)])


def test_an_owing_table_stays_indexed_until_its_job_settles(make_backend):
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    for _ in range(3):
        jobs.enqueue_owed_jobs(backend)  # queued: nothing to do, the entry stays
        assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is not None
    assert backend.run_jobs()
    jobs.enqueue_owed_jobs(backend)
    assert backend.redis.zscore(OWED_TABLES_KEY, table_id) is None


def test_a_job_taken_by_a_worker_that_died_before_starting_it_settles_once(make_backend):
    """RQ moves a job to the queue's intermediate list as a worker takes it, and the worker
    takes it out as it starts the job; one still there when its marker is due was taken by
    a worker that died or hangs (RQ itself fails it only minutes later)."""
    backend = make_backend(owed_job_after=0)
    room = Room(backend)
    table_id, hand_no = room.showdown()
    jid = jobs.showdown_job_id(table_id, hand_no)
    intermediate = backend.queue.intermediate_queue_key
    backend.redis.lmove(backend.queue.key, intermediate)  # taken, never started
    assert Job.fetch(jid, connection=backend.redis).get_status() == JobStatus.QUEUED

    assert [jobs.enqueue_owed_jobs(backend) for _ in range(3)] == [1, 0, 0]

    assert queue_entries(backend) == [jid] and backend.redis.llen(intermediate) == 0
    assert backend.run_jobs()
    assert room.settled_once(table_id, hand_no)
