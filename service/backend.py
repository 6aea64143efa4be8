"""The Redis connection, the RQ queue and, in embedded mode, a worker thread.

A ``Backend`` is what the app and the workers share: ``redis``, the events' client
(the event store, its owed markers and index), and ``rq``, the job queue's client
(the queue, RQ's jobs and workers, the worker-alive keys). With a real Redis they are
one client unless ``RQ_REDIS_URL`` names another Redis, as it must when the events live on a
Redis Cluster (``REDIS_CLUSTER=true``: ``redis`` is a ``RedisCluster``), since RQ
does not support Cluster. Clients use ``decode_responses=False`` (replies are
``bytes``) because RQ stores pickled jobs and cannot work on a decoding client;
the event store decodes itself.

Embedded mode (``Config.redis_url`` is None) runs two in-process
``fakeredis.FakeServer``s with Lua (``fakeredis[lua]``), one for the events and one
for the job queue: a fakeredis server runs each command, a script whole, under its
lock, so RQ's commands of a job never wait behind a request's script. Its jobs run in a
daemon thread that loops: sweep owed jobs and, with ``CARDROOM_ARCHIVE_AFTER``, ended
hands to archive (``service.retention``; about once a second) and, once a minute, the keys
past their TTL out of both servers (fakeredis drops them only as they are read), drain the
queue with the backend's one RQ worker (RQ's burst loop; the worker is registered once, at
the first jobs, and its death when the thread stops), then sleep until a job is enqueued
on the backend's queue (which wakes it at once) or the next sweep is due. A
blocking RQ worker would never wake on fakeredis from a thread. The thread shares
the interpreter with the request threads, so while it runs jobs, new requests wait
before they start, for a moment at most. ``service.embedded`` holds its worker, the
timeouts of its jobs and that wait.

With a real Redis, ``connect`` gives clients short socket timeouts and one quick
retry, so a dead or hung Redis fails a request within seconds instead of
hanging it; ``store_unavailable`` tells such failures (Redis down, unreachable,
loading, busy, read-only) from bugs, for the API's 503 and the worker's waiting.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from typing import Any, Callable

import fakeredis
import hiredis
import redis
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry
from rq import Queue

from service.config import Config
from service.embedded import JobsFirst, ThreadWorker

log = logging.getLogger(__name__)

SWEEP_INTERVAL = 1.0  # seconds between enqueue_owed_jobs calls
EXPIRE_INTERVAL = 60.0  # embedded: seconds between drops of the keys past their TTL
CONNECT_TIMEOUT = 2.0  # seconds to open a connection to Redis
READ_TIMEOUT = 5.0  # seconds to wait for a reply (RQ raises it on its own connection, for BLPOP)
QUICK_TIMEOUT = 1.0  # seconds /metrics and /healthz wait on Redis: inside a probe's time limit

FAKEREDIS_VERSION_FOR_RQ = (5, 0, 9)  # what RQ takes a Redis without INFO for

# Errors that mean the store cannot be used right now, rather than a bug: Redis is down or
# unreachable (ConnectionError, which includes LOADING's BusyLoadingError), too slow
# (TimeoutError), a replica after a failover (READONLY), out of memory, or in a cluster
# that is down (ClusterError: CLUSTERDOWN, MASTERDOWN, redirections without end; a slot
# no node serves). ``_DOWN_REPLIES`` are the first words of such replies redis-py has no
# class for (a script that runs too long makes every other command answer BUSY).
# ``_DOWN_CLUSTER`` begin the messages of the RedisClusterException (a class it also
# raises for bugs, such as keys of two slots in one command) that say no node answers.
_DOWN_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                redis.exceptions.ReadOnlyError, redis.exceptions.OutOfMemoryError,
                redis.exceptions.ClusterError, redis.exceptions.TryAgainError,
                redis.exceptions.SlotNotCoveredError)
_DOWN_REPLIES = {"BUSY", "LOADING", "MISCONF", "MASTERDOWN", "READONLY", "OOM", "TRYAGAIN",
                 "CLUSTERDOWN"}
_DOWN_CLUSTER = ("Redis Cluster cannot be connected", "All slots are not covered")


def store_unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the store cannot be used right now (worth a retry later)."""
    if isinstance(error, _DOWN_ERRORS):
        return True
    if isinstance(error, redis.exceptions.RedisClusterException):
        return str(error).startswith(_DOWN_CLUSTER)
    return (isinstance(error, redis.exceptions.ResponseError)
            and str(error).split(" ", 1)[0] in _DOWN_REPLIES)


class Outage:
    """Logs that the store is unavailable once when an outage begins (and again every
    ``remind_every`` seconds while it lasts, if given), and once when ``up`` says it
    ended; never at every failed retry. Thread-safe."""

    def __init__(self, logger: logging.Logger, meanwhile: str, remind_every: float | None = None,
                 what: str = "the event store"):
        self.logger, self.meanwhile, self.remind_every = logger, meanwhile, remind_every
        self.what = what  # the Redis it watches, as its lines name it
        self.is_down, self._reported, self._lock = False, 0.0, threading.Lock()

    def down(self, error: object) -> None:
        now = time.monotonic()
        with self._lock:
            report = not self.is_down or (
                self.remind_every is not None and now - self._reported >= self.remind_every)
            self.is_down = True
            if report:
                self._reported = now
        if report:
            self.logger.error("%s is unavailable (%s); %s", self.what, error, self.meanwhile)

    def up(self) -> None:
        if not self.is_down:  # the usual case, without the lock
            return
        with self._lock:
            ended, self.is_down = self.is_down, False
        if ended:
            self.logger.warning("%s answers again", self.what)


def connect(url: str, *, cluster: bool = False, timeout: float = READ_TIMEOUT,
            retries: int = 1) -> redis.Redis | RedisCluster:
    """A client of the Redis at ``url`` (with ``cluster``, of the Redis Cluster that node
    belongs to) that fails fast when Redis is down or hung: short socket timeouts and one
    immediate retry (on a fresh connection, after a restart or a failover)."""
    options = dict(socket_connect_timeout=min(CONNECT_TIMEOUT, timeout), socket_timeout=timeout,
                   retry=Retry(NoBackoff(), retries))
    if cluster:
        return _Cluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options, command_packer=_Packer())


class Rediscovering(redis.exceptions.ConnectionError):
    """A node of the cluster did not answer, and another thread of this process is asking
    the nodes for the cluster's map."""


class _Cluster(RedisCluster):
    """redis-py's cluster client, asking the nodes for the cluster's map after a node failed
    (``NodesManager.initialize``) in one thread at a time. redis-py asks under a lock of
    the process, ``READ_TIMEOUT`` for each hung node, and every thread whose command failed
    asks again after the one before: with every master hung, requests waited behind one
    another for as long as the outage. Here a thread whose command failed while another
    asks gets ``Rediscovering`` (a 503) at once, as does a command sent while an asking has
    taken over ``MAP_PATIENCE`` (a node hangs); asking after a redirection (``MOVED``, the
    slots moving) waits its turn as before. redis-py retries a ConnectionError only of that
    very class, so ``Rediscovering`` is not retried."""

    MAP_PATIENCE = 1.0  # seconds
    connected: Callable[[Any], None] | None = None  # ``on_each_connection``'s hook

    def __init__(self, *args, **kwargs):
        self._asking, self._asked_since = threading.Lock(), None
        super().__init__(*args, **kwargs)
        self.nodes_manager.initialize = self._one_at_a_time(self.nodes_manager.initialize)

    def _one_at_a_time(self, initialize):
        def asked(*args, **kwargs):
            after_failure = kwargs.get("last_failed_node_name") is not None
            if not self._asking.acquire(blocking=not after_failure):
                raise Rediscovering("a node of the Redis Cluster did not answer, and the "
                                    "cluster's map is being asked for")
            self._asked_since = time.monotonic() if after_failure else None
            try:
                return initialize(*args, **kwargs)
            finally:
                self._asked_since = None
                self._asking.release()
        return asked

    def on_connect(self, connection):
        super().on_connect(connection)
        if self.connected is not None:
            self.connected(connection)

    def execute_command(self, *args, **kwargs):
        since = self._asked_since
        if since is not None and time.monotonic() - since > self.MAP_PATIENCE:
            raise Rediscovering("the Redis Cluster's nodes are being asked for its map, and "
                                "they are slow to answer")
        return super().execute_command(*args, **kwargs)


def on_each_connection(client: redis.Redis | RedisCluster, hook: Callable[[Any], None]) -> None:
    """Run ``hook`` on every connection ``client`` makes from now on, once redis-py has set it
    up: at first, and again after Redis restarted or failed over."""
    if isinstance(client, _Cluster):
        client.connected = hook
        return

    def connected(connection) -> None:
        connection.on_connect()
        hook(connection)
    client.connection_pool.connection_kwargs["redis_connect_func"] = connected


class _Packer(redis.connection.HiredisRespSerializer):
    """redis-py's packer for hiredis, without its look at every argument in Python first,
    which cost a sixth of a read's round trip (the store's connections) and RQ about forty
    commands' worth a showdown job. A name of two words, or an argument hiredis refuses (a
    ``bytearray``), goes redis-py's way."""

    def pack(self, *args):
        if isinstance(args[0], str) and " " not in args[0]:
            try:
                return [hiredis.pack_command(args)]
            except TypeError:
                pass
        return super().pack(*args)


def _module(name: str):
    """``service.<name>``, imported when first swept (those modules import this one)."""
    return importlib.import_module(f"service.{name}")


class _WakingQueue(Queue):
    """An RQ queue that sets ``enqueued`` once a job is on it (the embedded worker waits
    on that event instead of polling the queue)."""

    def __init__(self, *args, enqueued: threading.Event, **kwargs):
        super().__init__(*args, **kwargs)
        self.enqueued = enqueued

    def enqueue_job(self, *args, **kwargs):
        job = super().enqueue_job(*args, **kwargs)
        self.enqueued.set()
        return job


def in_process_client() -> fakeredis.FakeRedis:
    """A client of a new in-process (fakeredis) server whose database is made now, in this
    thread: fakeredis makes it when the first connection opens, without its lock, so the
    first connections of two threads at once could each make one, and one's writes land
    where nobody reads them (two racing appends were both answered as written)."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    client.ping()
    return client


class Backend:
    def __init__(self, config: Config, client: redis.Redis, *, embedded: bool,
                 rq_client: redis.Redis | None = None):
        self.config = config
        self.redis = client  # the events
        self.rq = client if rq_client is None else rq_client  # the job queue
        self.embedded = embedded
        self.job_enqueued = threading.Event()  # set by every enqueue on ``queue``
        self.queue = _WakingQueue(config.queue_name, connection=self.rq,
                                  enqueued=self.job_enqueued)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._worker: ThreadWorker | None = None  # embedded: made by the first run_jobs
        self._worker_lock = threading.Lock()  # one thread at a time runs jobs with it
        self.jobs_first = JobsFirst()  # the app waits on it before each request, if embedded
        self._sweep_errors: dict[str, str] = {}  # task name -> its last failure, logged
        self._next_expiry = 0.0  # embedded: when the sweep next drops keys past their TTL
        # An outage of the events' Redis the sweep meets (a worker on one Redis shares its own)
        self.events_outage = Outage(log, "the sweeper tries again every second")
        self._quick_redis: redis.Redis | RedisCluster | None = None
        self._connected: Callable[[Any], None] | None = None

    def on_each_connection(self, hook: Callable[[Any], None]) -> None:
        """Run ``hook`` on each new connection to the events' Redis (not the embedded one,
        which never restarts), the quick client's too."""
        if self.embedded:
            return
        self._connected = hook
        for client in (self.redis, self._quick_redis):
            if client is not None:
                on_each_connection(client, hook)

    @classmethod
    def from_config(cls, config: Config | None = None) -> "Backend":
        config = config or Config()
        if config.redis_url:
            events = connect(config.redis_url, cluster=config.redis_cluster)
            rq = connect(config.rq_url) if config.rq_apart else None
            return cls(config, events, embedded=False, rq_client=rq)
        events, rq = in_process_client(), in_process_client()
        # fakeredis has no INFO, so RQ asks for the server's version (with an INFO that
        # fails) at every dequeue; this is the cache RQ keeps on a client after a
        # successful INFO, filled with what RQ falls back to (harmless if RQ renames it)
        setattr(rq, "__rq_redis_server_version", FAKEREDIS_VERSION_FOR_RQ)
        return cls(config, events, embedded=True, rq_client=rq)

    def quick_redis(self) -> redis.Redis | RedisCluster:
        """The events' Redis as ``GET /metrics`` and ``GET /healthz`` ask it: a client of its
        own (made at first use) that gives up after ``QUICK_TIMEOUT`` without a retry, so
        that a hung Redis costs a scrape or a health check a second, inside the prober's
        time limit (the events' client may wait twice ``READ_TIMEOUT``). A hung Redis
        Cluster costs a second for each node: redis-py asks each for the map."""
        if self.embedded:
            return self.redis
        if self._quick_redis is None:  # two probes at once may make two: no harm
            quick = connect(self.config.redis_url, cluster=self.config.redis_cluster,
                            timeout=QUICK_TIMEOUT, retries=0)
            if self._connected is not None:
                on_each_connection(quick, self._connected)
            self._quick_redis = quick
        return self._quick_redis

    def check_store(self) -> None:
        """Raise unless the events' store answers as a whole, asked on ``quick_redis``: a
        Redis Cluster must also cover every slot (a node answers PING while the cluster is
        down, in which case every table on a lost master is unavailable)."""
        client = self.quick_redis()
        if not self.config.redis_cluster:
            client.ping()
            return
        state = client.cluster_info().get("cluster_state")
        if state != "ok":
            raise redis.exceptions.ClusterDownError(f"the cluster's state is {state}")

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except redis.RedisError:
            return False

    def sweep(self) -> None:
        """Call ``service.jobs.enqueue_owed_jobs`` and, with ``Config.archive_after`` set,
        ``service.retention.archive_ended_hands``; embedded, every ``EXPIRE_INTERVAL``, drop
        the keys past their TTL (each task whether or not another failed); log a new
        failure of each (an outage of the events' Redis once), never raise."""
        tasks = {"enqueue_owed_jobs": lambda: _module("jobs").enqueue_owed_jobs(self)}
        if self.config.archive_after is not None:
            tasks["archive_ended_hands"] = lambda: _module("retention").archive_ended_hands(
                _module("store").EventStore(self.redis), self.config.archive_after)
        if self.embedded and time.monotonic() >= self._next_expiry:
            self._next_expiry = time.monotonic() + EXPIRE_INTERVAL
            tasks["expire_keys"] = self._expire_keys
        if all([self._sweep_task(name, task) for name, task in tasks.items()]):
            self.events_outage.up()

    def _expire_keys(self) -> None:
        """Embedded: drop the keys past their TTL from both in-process servers. fakeredis
        drops an expired key only as it is read, or as the key space is counted or listed
        (as DBSIZE does); a real Redis drops them itself. Without this, what is meant to
        last a while (the idempotency records, a day; RQ's jobs and results, an hour) was
        held for good, some 6 KB a hand."""
        self.redis.dbsize()
        self.rq.dbsize()

    def _sweep_task(self, name: str, task) -> bool:
        """Run one task of the sweep; False if it failed (logged once until it changes)."""
        try:
            task()
        except Exception as exc:
            if store_unavailable(exc):
                self._store_failed(exc)
            elif repr(exc) != self._sweep_errors.get(name):
                log.exception("%s failed (logged once until it changes)", name)
                self._sweep_errors[name] = repr(exc)
            return False
        self._sweep_errors.pop(name, None)
        return True

    def _store_failed(self, error: Exception) -> None:
        """Report an outage of the events' Redis; with the job queue's apart, only if that
        one answers a ping: else the failure may be its own, which the worker's RQ loop
        reports (``service.worker``), and with both down the events' is told once the
        queue's is back. (A ping of the events' could not tell: a Redis Cluster's asks one
        node.)"""
        if self.rq is not self.redis:
            try:
                self.rq.ping()
            except redis.RedisError:
                return
        self.events_outage.down(error)

    def run_jobs(self) -> bool:
        """Run every queued job in the calling thread, with the backend's one RQ worker
        (born at the first call); True if any ran."""
        if not self.queue.count:
            return False
        with self._worker_lock:
            if self._worker is None:
                worker = ThreadWorker([self.queue], connection=self.rq)
                worker.born()
                self._worker = worker
            with self.jobs_first.running():
                return self._worker.run_queued()

    def _keep_worker_alive(self) -> None:
        """Renew the worker's key in RQ (seldom: ``service.heartbeats``)."""
        with self._worker_lock:
            if self._worker is not None:
                self._worker.heartbeat()

    def _retire_worker(self) -> None:
        """Register the death of the backend's RQ worker, if it has one."""
        with self._worker_lock:
            worker, self._worker = self._worker, None
            if worker is not None:
                worker.retire()

    def start_worker_thread(self) -> threading.Thread:
        if self._thread and self._thread.is_alive():
            return self._thread
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._work_loop, name="cardroom-worker", daemon=True
        )
        self._thread.start()
        return self._thread

    def stop_worker_thread(self, timeout: float = 5.0) -> None:
        """Stop the job thread after its current job (it retires its RQ worker as it
        ends); without a thread, retire the worker ``run_jobs`` made, if any."""
        self._stop.set()
        self.job_enqueued.set()  # wakes the thread to see it
        if self._thread:
            self._thread.join(timeout)
            self._thread = None
        else:
            self._retire_worker()

    def _work_loop(self) -> None:
        next_sweep = 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_sweep:
                self.sweep()
                next_sweep = time.monotonic() + SWEEP_INTERVAL
            self.job_enqueued.clear()  # before draining: a job enqueued meanwhile sets it again
            try:
                self.run_jobs()
                self._keep_worker_alive()
            except Exception:
                log.exception("worker thread failed to drain the queue")
            self.job_enqueued.wait(max(0.0, next_sweep - time.monotonic()))
        try:
            self._retire_worker()
        except Exception:
            log.exception("worker thread failed to register its RQ worker's death")
