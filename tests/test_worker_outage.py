"""``cardroom worker`` without Redis: it waits (logging that once) instead of exiting,
works once Redis is there, and a SIGTERM while it waits stops it with status 0. A Redis
that goes and comes back is one line each way, from the whole process (RQ's loop and the
sweeper), naming that Redis. (Redis going away under a busy worker:
tests/integration/test_redis_outage.py.)"""

from __future__ import annotations

import shutil
import signal
import time

import pytest
import redis
import rq

from service import jobs
from service.backend import SWEEP_INTERVAL
from service.config import Config
from service.jobs import worker_alive_key
from tests.processes import RedisServer, free_port, logged, redis_binary

WAIT = 20.0  # bound on anything asynchronous; never asserted as a timing
OUTAGE = "the event store is unavailable"  # the start of cardroom.worker's line
ALIVE = worker_alive_key("*")  # the sweeper's mark of its RQ worker, at every sweep


def set_key(key: str, value: str) -> str:
    """A job: write ``key`` through the job's own connection."""
    rq.get_current_job().connection.set(key, value)
    return value


def wait_for(predicate, what: str, proc) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"not {what} after {WAIT:.0f} s\n{proc.log_path.read_text()}")
        time.sleep(0.05)


def outages(proc) -> int:
    return sum(m.startswith(OUTAGE) for m in logged(proc.log_path.read_text(), "cardroom.worker"))


def stopped(proc, sig=signal.SIGTERM) -> int:
    proc.send_signal(sig)
    return proc.wait(WAIT)


def test_a_worker_waiting_for_redis_stops_on_sigterm_with_status_0(worker_process):
    (proc,) = worker_process(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    wait_for(lambda: outages(proc) or proc.poll() is not None,
             "waiting for Redis", proc)
    assert proc.poll() is None, "the worker gave up:\n" + proc.log_path.read_text()
    assert stopped(proc) == 0, proc.log_path.read_text()
    assert outages(proc) == 1, proc.log_path.read_text()


def test_a_worker_whose_job_queue_is_apart_names_that_redis_when_it_is_down(worker_process):
    events, queue = free_port(), free_port()
    while queue == events:
        queue = free_port()
    (proc,) = worker_process(f"redis://127.0.0.1:{events}/0",
                             RQ_REDIS_URL=f"redis://127.0.0.1:{queue}/0")

    def said() -> list[str]:
        return [m for m in logged(proc.log_path.read_text(), "cardroom.worker")
                if m.startswith("the job queue's Redis is unavailable")]
    wait_for(lambda: said() or proc.poll() is not None, "waiting for the queue's Redis", proc)
    assert proc.poll() is None, "the worker gave up:\n" + proc.log_path.read_text()
    assert f":{queue}" in said()[0] and f":{events}" not in said()[0], said()
    assert stopped(proc) == 0, proc.log_path.read_text()


@pytest.mark.redis
def test_a_worker_started_before_redis_works_once_redis_is_up(worker_process, tmp_path):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server binary")
    server = RedisServer(binary, tmp_path)  # not started yet: its port is free
    (proc,) = worker_process(server.url)
    try:
        wait_for(lambda: outages(proc) or proc.poll() is not None,
                 "waiting for Redis", proc)
        assert proc.poll() is None, "the worker gave up:\n" + proc.log_path.read_text()
        server.start()
        client = redis.Redis.from_url(server.url)
        rq.Queue(Config().queue_name, connection=client).enqueue(set_key, "after", "yes")
        wait_for(lambda: client.get("after") == b"yes", "the job run", proc)
        assert any(m.startswith("the event store answers again")
                   for m in logged(proc.log_path.read_text(), "cardroom.worker"))
        assert stopped(proc) == 0, proc.log_path.read_text()
    finally:
        server.stop()


def said(proc, beginning: str) -> list[str]:
    """What ``proc`` logged, by any logger, that begins with ``beginning``."""
    return [m for m in logged(proc.log_path.read_text()) if m.startswith(beginning)]


def swept(proc, queue: redis.Redis) -> None:
    """Wait until the sweeper of ``proc`` has begun and ended a sweep from now on (each
    begins by marking the RQ worker alive: marked again twice, the first is over)."""
    for _ in range(2):
        for key in queue.keys(ALIVE):
            queue.delete(key)
        wait_for(lambda: queue.keys(ALIVE) or proc.poll() is not None, "a sweep", proc)


def gone_and_back(proc, server: RedisServer, named: str, queue: redis.Redis) -> None:
    """Stop ``server`` under the worker ``proc`` long enough for its RQ loop and its sweeper
    both to meet the outage, start it again, and wait until both have worked since."""
    swept(proc, queue)
    server.stop()
    wait_for(lambda: said(proc, f"{named} is unavailable") or proc.poll() is not None,
             f"{named} found down", proc)
    time.sleep(3 * SWEEP_INTERVAL)  # the sweeper's turns to meet it (it sweeps every second)
    server.start()
    rq.Queue(Config().queue_name, connection=queue).enqueue(set_key, "after", "yes")
    wait_for(lambda: queue.get("after") == b"yes" or proc.poll() is not None,
             "a job run after the outage", proc)
    swept(proc, queue)
    assert proc.poll() is None, "the worker gave up:\n" + proc.log_path.read_text()


@pytest.mark.redis
def test_a_worker_logs_one_line_as_its_redis_goes_and_one_as_it_comes_back(
        worker_process, tmp_path):
    server = RedisServer(redis_binary(), tmp_path).start()
    try:
        (proc,) = worker_process(server.url)
        gone_and_back(proc, server, "the event store", redis.Redis.from_url(server.url))
        assert len(said(proc, "the event store is unavailable")) == 1, proc.log_path.read_text()
        assert len(said(proc, "the event store answers again")) == 1, proc.log_path.read_text()
        assert stopped(proc) == 0, proc.log_path.read_text()
    finally:
        server.stop()


@pytest.mark.redis
@pytest.mark.parametrize("down, named, other", [
    ("events", "the event store", "the job queue's Redis"),
    ("queue", "the job queue's Redis", "the event store")])
def test_a_worker_whose_job_queue_is_apart_names_the_redis_that_went_and_came_back_once(
        worker_process, tmp_path, down, named, other):
    binary, servers = redis_binary(), {}
    try:
        for name in ("events", "queue"):
            (tmp_path / name).mkdir()
            servers[name] = RedisServer(binary, tmp_path / name).start()
        (proc,) = worker_process(servers["events"].url, RQ_REDIS_URL=servers["queue"].url)
        gone_and_back(proc, servers[down], named, redis.Redis.from_url(servers["queue"].url))
        assert len(said(proc, f"{named} is unavailable")) == 1, proc.log_path.read_text()
        assert f":{servers[down].port}" in said(proc, f"{named} is unavailable")[0]
        assert len(said(proc, f"{named} answers again")) == 1, proc.log_path.read_text()
        assert not said(proc, other), proc.log_path.read_text()
        assert stopped(proc) == 0, proc.log_path.read_text()
    finally:
        for server in servers.values():
            server.stop()


@pytest.mark.redis
def test_a_job_that_finds_the_events_redis_down_is_the_outage_s_line_not_a_traceback(
        worker_process, tmp_path):
    """With the job queue's Redis apart, a showdown job run while the events' is down fails
    (RQ records it; the sweeper enqueues the showdown again later): the log says the event
    store is unavailable, once for all the jobs, and shows no job's traceback."""
    binary, servers = redis_binary(), {}
    try:
        for name in ("events", "queue"):
            (tmp_path / name).mkdir()
            servers[name] = RedisServer(binary, tmp_path / name).start()
        queue_redis = redis.Redis.from_url(servers["queue"].url)
        (proc,) = worker_process(servers["events"].url, RQ_REDIS_URL=servers["queue"].url)
        swept(proc, queue_redis)
        servers["events"].stop()
        queue = rq.Queue(Config().queue_name, connection=queue_redis)
        failed = [queue.enqueue(jobs.settle_showdown, f"t{n}", 1) for n in range(3)]
        wait_for(lambda: all(job.get_status(refresh=True) == "failed" for job in failed)
                 or proc.poll() is not None, "the jobs failed", proc)
        log = proc.log_path.read_text()
        assert len(said(proc, "the event store is unavailable")) == 1, log
        assert "exception raised while executing" not in log and "Traceback" not in log, log
        assert stopped(proc) == 0, proc.log_path.read_text()
    finally:
        for server in servers.values():
            server.stop()
