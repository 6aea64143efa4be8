"""The RQ workers' bookkeeping (``service.bookkeeping``): a job leaves in Redis what RQ's own
``SimpleWorker`` leaves (keys, statuses, registries, the worker's counts and state), in five
round trips besides the job's own instead of eleven; its dependents run after it."""

from __future__ import annotations

import re
import signal

import fakeredis
import pytest
import rq

from service import embedded
from service import worker as worker_module
from tests.test_round_trips import RoundTrips


_ID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


def succeed(value):
    return value


def fail():
    raise RuntimeError("the job broke")


def make_worker(worker_class, connection):
    worker = worker_class([rq.Queue("cardroom", connection=connection)], connection=connection)
    if isinstance(worker, embedded.ThreadWorker):
        worker.born()  # its ``work`` is a burst without RQ's bootstrap
    return worker


@pytest.fixture(params=[embedded.ThreadWorker, worker_module._Worker])
def worker_class(request):
    return request.param


def left_in_redis(worker_class, *jobs) -> dict:
    """What ``worker_class`` leaves in a new Redis after running ``jobs`` (``(func, args,
    options)``): each key with its type and, for hashes, its fields, names made alike."""
    connection = fakeredis.FakeRedis()
    queue = rq.Queue("cardroom", connection=connection)
    for func, args, options in jobs:
        queue.enqueue(func, *args, **options)
    worker = make_worker(worker_class, connection)
    worker.work(burst=True)
    if isinstance(worker, embedded.ThreadWorker):
        worker.retire()  # as RQ's ``work`` does at its end
    found = {}
    for key in connection.keys():
        name = _ID.sub("<id>", key.decode().replace(worker.name, "<worker>"))
        kind = connection.type(key).decode()
        fields = sorted(f.decode() for f in connection.hkeys(key)) if kind == "hash" else None
        found[name] = (kind, fields, connection.ttl(key) > 0)
    return found


@pytest.mark.parametrize("jobs", [
    [(succeed, (1,), {"job_id": "one", "result_ttl": 3600})],
    [(succeed, (1,), {"job_id": "parent"}), (succeed, (2,), {"depends_on": "parent"})],
    [(fail, (), {"job_id": "failing"})],
], ids=["a job", "a job and its dependent", "a failing job"])
def test_a_worker_leaves_what_rq_s_own_leaves(worker_class, jobs):
    assert left_in_redis(worker_class, *jobs) == left_in_redis(rq.SimpleWorker, *jobs)


def test_a_job_that_succeeds_is_recorded_with_its_result_and_its_dependents_run(worker_class):
    connection = fakeredis.FakeRedis()
    queue = rq.Queue("cardroom", connection=connection)
    parent = queue.enqueue(succeed, "first")
    child = queue.enqueue(succeed, "second", depends_on=parent)
    worker = make_worker(worker_class, connection)
    assert worker.work(burst=True)
    for job, value in ((parent, "first"), (child, "second")):
        job.refresh()
        assert job.get_status() == rq.job.JobStatus.FINISHED
        assert job.return_value() == value
        assert job.id in queue.finished_job_registry.get_job_ids()
        assert job.started_at <= job.ended_at <= job.last_heartbeat
    assert queue.started_job_registry.get_job_ids() == []
    registered = rq.Worker.find_by_key(worker.key, connection=connection)
    assert registered.successful_job_count == 2
    assert registered.get_state() == "idle"
    assert connection.smembers(worker.executions_key) == set()


def test_a_job_that_succeeds_costs_five_round_trips_besides_its_own(worker_class, real_backend,
                                                                     monkeypatch):
    connection = real_backend.rq
    queue = rq.Queue("cardroom", connection=connection)
    worker = make_worker(worker_class, connection)
    worker.work(burst=True)  # the worker's key renewed: no renewal in the runs counted
    round_trips = RoundTrips(monkeypatch)
    counts = []
    for jobs in (1, 3):
        for n in range(jobs):
            queue.enqueue(succeed, n)
        counts.append(round_trips.during(lambda: worker.work(burst=True))[1])
    assert (counts[1] - counts[0]) / 2 == 5


def test_a_sigterm_as_a_job_is_recorded_stops_the_worker_after_it():
    """The worker stays "busy" until it waits for the next job: a stop asked for while the
    job's success is being recorded lets the recording finish and ends the work loop (it
    used to break into the recording, the job counted failed, and the stop was forgotten
    while the worker waited for a job that might never come)."""
    connection = fakeredis.FakeRedis()
    queue = rq.Queue("cardroom", connection=connection)
    first, second = queue.enqueue(succeed, 1), queue.enqueue(succeed, 2)
    worker = make_worker(worker_module._Worker, connection)
    recorded = worker.handle_job_success

    def recorded_then_stopped(*args, **kwargs):
        recorded(*args, **kwargs)
        worker.request_stop(signal.SIGTERM, None)  # as the signal would, once it is sent
    worker.handle_job_success = recorded_then_stopped
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker.work(burst=True)
    finally:  # RQ's handlers, installed by its stop, are this test's alone
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert first.get_status(refresh=True) == "finished"
    assert second.get_status(refresh=True) == "queued"  # not taken: the worker stopped
    assert worker.stopped_by_signal
