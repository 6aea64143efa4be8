"""RQ jobs: showdowns are settled by workers, and owed jobs that were lost are re-enqueued.

The write that brings a hand to its showdown also records, atomically, that a
showdown job is owed; the job's own write clears the marker. A marker older
than ``Config.owed_job_after`` may mean the job was lost (a worker died, the
enqueue never happened) and the sweeper enqueues it again, unless RQ still has
it queued or a live worker is running it. Settling is conditional on the hand's
version, so running a job twice settles once.

The sweep costs O(owed jobs), not O(tables): it reads only the tables in the
``cardroom:owed-tables`` index (``service.store``) whose entry is older than
``owed_job_after``, by Redis TIME. For each it reads the table's owed set:
owing nothing, the entry is removed (``EventStore.forget_owed_tables`` explains
why an append in flight keeps its entry); owing, the entry is moved forward to
when the table is next due. A stale marker whose job is lost is claimed
(``EventStore.claim_owed_job``: re-scored with Redis TIME, so one sweeper wins
and the job is not due again for ``owed_job_after``), then enqueued.

A job is lost when RQ has no job by its id; or has it ``queued`` while it is not in
the queue (RQ moves a job to the queue's intermediate list as a worker takes it, and
the worker takes it out as it starts the job, at once: one still there when its
marker is due was taken, as a rule, by a worker that died or hangs, and it is taken
out of that list as it is enqueued again, lest RQ's maintenance fail the new copy;
should a live worker have just taken it, the job runs twice and settles once); or
``started`` by a worker that is not alive; or finished, failed, stopped or canceled
while the hand still owes it. ``deferred`` and ``scheduled`` jobs are waiting, not
lost. RQ cannot tell a dead worker from a busy one soon enough: a ``SimpleWorker``
sends no heartbeat while it runs a job and its StartedJobRegistry entry lasts the
job timeout plus 60 s (240 s). So each ``cardroom worker``'s sweeper thread, which
runs beside its jobs, keeps the key ``cardroom:worker:<rq worker name>:alive`` (TTL
``WORKER_ALIVE_TTL``, a Redis TTL: no host clock) alive on every sweep; once a
worker dies the key expires and its started job is lost. A job started by a worker
that has no such key (RQ's own ``rq worker``) counts as lost after
``owed_job_after``: it runs again and settles nothing.

RQ's keys (jobs, queue, worker-alive keys) live on the job queue's Redis
(``backend.rq``), the owed markers and their index with the events
(``backend.redis``): these are one Redis unless ``RQ_REDIS_URL`` says otherwise,
and two in-process servers in embedded mode (see ``service.backend``). A job
reaches the events through its own connection, or through the events' client of
its process when they live apart (embedded: its app's ``Cardroom``).
"""

from __future__ import annotations

import weakref
from functools import cache, lru_cache

from rq import Queue, get_current_job
from rq.job import Job, JobStatus

from service import handover, metrics, testhooks
from service.backend import connect
from service.config import Config
from service.room import SHOWDOWN_JOB, Cardroom
from service.store import EventStore

WORKER_ALIVE_TTL = 10  # seconds; every sweep (about once a second) renews it
SWEEP_BATCH = 1000  # index entries read per round trip
_WAITING = {JobStatus.DEFERRED.value, JobStatus.SCHEDULED.value}
# id of a job connection -> the Cardroom its jobs use: the app's (embedded), the worker's
_CARDROOMS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def settle_showdown(table_id: str, hand_no: int, held: bytes | None = None) -> bool:
    """The showdown job; counted in ``service.metrics`` by the process that runs it.
    ``held``: the hand as the process that owed it held it (``service.handover``)."""
    job = get_current_job()
    testhooks.before_showdown()  # a no-op unless a test asks (see service.testhooks)
    cardroom = (_CARDROOMS.get(id(job.connection))
                or _cardroom(Config.from_env(), job.connection))

    def settle() -> bool:
        if held is not None:
            handover.take_over(cardroom, table_id, hand_no, held)
        return cardroom.settle_showdown(table_id, hand_no)
    return metrics.showdown_job(job.enqueued_at, settle)


def run_in_app(connection, cardroom: Cardroom) -> None:
    """Embedded mode: the jobs on ``connection`` run in the app's own process, so they use
    its ``cardroom``, whose replay cache holds the hand its last action brought to the
    showdown (held while the app holds it; the id stays its connection's meanwhile)."""
    _CARDROOMS[id(connection)] = cardroom


def run_in_worker(config: Config, connection) -> None:
    """``cardroom worker``: the jobs on ``connection`` use the Cardroom of the configuration
    the worker started with (an RQ worker of another kind: one of ``Config.from_env()``, read
    at every job, about 25 µs)."""
    _CARDROOMS[id(connection)] = _cardroom(config, connection)  # held by _cardroom's cache


@lru_cache(maxsize=8)  # a worker needs one; tests make a backend (a connection) per test
def _cardroom(config: Config, connection) -> Cardroom:
    """The jobs' Cardroom for this configuration and job connection, made once: its keys
    are parsed once, and a job reads a table's stream on from where the process's last job
    at that table left it (``ReplayCache``), not from its start."""
    keys = config.keys()
    store = EventStore(_events_client(config, connection), keys,
                       index_ended=config.archive_after is not None)
    return Cardroom(store, keys, None)


def _events_client(config: Config, connection):
    """The job's own connection, unless the events live apart from the queue."""
    if config.embedded or not config.rq_apart:
        return connection
    return _connect_events(config.redis_url, config.redis_cluster)


@cache  # one client (and its connection pool) per process
def _connect_events(url: str, cluster: bool):
    return connect(url, cluster=cluster)


def showdown_job_id(table_id: str, hand_no: int) -> str:
    return f"showdown-{table_id}-{hand_no}"


def enqueue_showdown(queue: Queue, table_id: str, hand_no: int,
                     held: bytes | None = None) -> None:
    # Not result_ttl=0: RQ would then delete the finished job, in more round trips. The
    # description names the hand, for RQ's lines and tools (its own shows the sealed hand)
    queue.enqueue(settle_showdown, table_id, hand_no, held,
                  job_id=showdown_job_id(table_id, hand_no), result_ttl=3600,
                  description=f"showdown of hand {hand_no} at table {table_id}")


def worker_alive_key(worker_name: str) -> str:
    return f"cardroom:worker:{worker_name}:alive"


def mark_worker_alive(connection, worker_name: str) -> None:
    connection.set(worker_alive_key(worker_name), "1", ex=WORKER_ALIVE_TTL)


def enqueue_owed_jobs(backend) -> int:
    """Enqueue every showdown owed for longer than ``owed_job_after`` whose job is lost;
    how many. First marks ``backend.worker_name`` (set by ``cardroom worker``) alive."""
    queue = backend.queue
    worker_name = getattr(backend, "worker_name", None)
    if worker_name:
        mark_worker_alive(backend.rq, worker_name)
    store = EventStore(backend.redis)
    now = store.redis_time()
    cutoff = now - backend.config.owed_job_after
    lost = _LostJobs(backend.rq, queue)
    count, seen = 0, set()
    while True:
        batch = store.owed_tables(cutoff, SWEEP_BATCH)
        tables = [t for t in batch if t not in seen]
        seen.update(tables)
        owed = store.owed_markers(tables) if tables else {}
        store.forget_owed_tables([t for t, markers in owed.items() if not markers], cutoff)
        for table_id, markers in owed.items():
            if not markers:
                continue
            due = now  # look again once owed_job_after has passed, or a fresh marker is due
            for job, since in markers:
                name, _, hand_no = job.partition(":")
                job_id = showdown_job_id(table_id, int(hand_no)) if name == SHOWDOWN_JOB else ""
                if since > cutoff:
                    due = min(due, since)
                elif job_id and lost(job_id) and store.claim_owed_job(table_id, job, cutoff):
                    backend.rq.lrem(queue.intermediate_queue_key, 0, job_id)
                    enqueue_showdown(queue, table_id, int(hand_no))
                    count += 1
            store.keep_owed_table(table_id, due)
        if len(batch) < SWEEP_BATCH or not tables:
            return count


class _LostJobs:
    """``lost(job_id)``: see the module's docstring. Reads the queue at most once."""

    def __init__(self, redis, queue: Queue):
        self.redis, self.queue = redis, queue
        self._in_queue: set[str] | None = None

    def __call__(self, job_id: str) -> bool:
        status, worker = (_text(v) for v in self.redis.hmget(
            Job.key_for(job_id), ["status", "worker_name"]))
        if status == JobStatus.QUEUED.value:
            return job_id not in self._queued()  # (in the intermediate list: lost)
        if status == JobStatus.STARTED.value:
            return not (worker and self.redis.exists(worker_alive_key(worker)))
        return status not in _WAITING

    def _queued(self) -> set[str]:
        if self._in_queue is None:
            self._in_queue = {_text(i) for i in self.redis.lrange(self.queue.key, 0, -1)}
        return self._in_queue


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value
