"""The embedded job thread's RQ worker: one for the life of the thread, registered once and
kept alive in RQ's registry while idle; a failing or overlong job is recorded as failed
and the thread goes on; stopping the thread registers the worker's death. While the
thread runs jobs, requests wait before they start, for a moment at most, and only in the
embedded mode."""

from __future__ import annotations

import threading
import time

import fakeredis
import pytest
import rq
from rq.job import JobStatus
from rq.worker_registration import clean_worker_registry

from domain.events import EVENT_TYPES, holds_dicts
from service import backend as backend_module
from service import embedded, heartbeats
from service import worker as worker_module
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.reads import opened_event
from service.store import hand_stream
from tests.test_infra import set_key, wait_for
from tests.test_testhooks import _a_hand_at_its_showdown

release_job = threading.Event()  # what ``wait_for_release`` waits for


def fail(message: str) -> None:
    """A job that raises."""
    raise RuntimeError(message)


def wait_for_release() -> str:
    """A job that runs until the test sets ``release_job``."""
    release_job.wait(20)
    return "released"


def run_on(seconds: float) -> None:
    """A job that runs for ``seconds`` (in short sleeps, so a timeout can stop it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.02)


def workers(backend: Backend) -> list[rq.Worker]:
    """The workers RQ has registered on the backend's queue."""
    return rq.Worker.all(queue=backend.queue)


def run(backend: Backend, func, *args, **options) -> rq.job.Job:
    """Enqueue a job and wait for the worker thread to be done with it."""
    job = backend.queue.enqueue(func, *args, **options)
    wait_for(lambda: job.get_status(refresh=True) in ("finished", "failed"),
             what=f"job {job.id} to be done")
    return job


@pytest.fixture
def released():
    release_job.clear()
    yield release_job
    release_job.set()  # never leave a job waiting


def test_one_worker_runs_every_job_of_the_thread(fake_backend):
    fake_backend.start_worker_thread()
    for n in range(5):  # each job wakes the sleeping thread: five runs of RQ's burst loop
        run(fake_backend, set_key, f"k{n}", "done")
        registered = workers(fake_backend)
        assert len(registered) == 1, registered
    assert registered[0].successful_job_count == 5  # the same worker ran all five
    assert registered[0].death_date is None


def test_the_worker_made_in_the_calling_thread_serves_every_run_until_stopped(fake_backend):
    for n in range(3):
        fake_backend.queue.enqueue(set_key, f"k{n}", "done")
        assert fake_backend.run_jobs()
    (worker,) = workers(fake_backend)
    assert worker.successful_job_count == 3
    fake_backend.stop_worker_thread()  # no thread: it retires that worker
    assert workers(fake_backend) == []
    assert fake_backend.rq.hget(worker.key, "death") is not None


def test_a_failing_job_is_recorded_as_failed_and_the_thread_goes_on(fake_backend, caplog):
    fake_backend.start_worker_thread()
    failed = run(fake_backend, fail, "the job broke")
    assert failed.get_status() == JobStatus.FAILED
    assert failed.id in fake_backend.queue.failed_job_registry.get_job_ids()
    assert "RuntimeError: the job broke" in failed.latest_result().exc_string
    assert any("the job broke" in r.getMessage() and r.levelname == "ERROR"
               for r in caplog.records if r.name == "rq.worker"), "RQ did not log the failure"
    assert run(fake_backend, set_key, "after", "ok").get_status() == JobStatus.FINISHED
    (worker,) = workers(fake_backend)
    assert (worker.failed_job_count, worker.successful_job_count) == (1, 1)


def test_a_job_past_its_timeout_fails_and_the_thread_goes_on(fake_backend, monkeypatch):
    monkeypatch.setattr(embedded, "TIMEOUT_TICK", 0.05)
    fake_backend.start_worker_thread()
    overlong = run(fake_backend, run_on, 60, job_timeout=1)
    assert overlong.get_status() == JobStatus.FAILED
    assert "JobTimeoutException" in overlong.latest_result().exc_string
    assert run(fake_backend, set_key, "after", "ok").get_status() == JobStatus.FINISHED
    assert fake_backend.rq.get("after") == b"ok"


def test_stopping_the_thread_registers_the_worker_s_death(fake_backend):
    thread = fake_backend.start_worker_thread()
    run(fake_backend, set_key, "k", "done")
    (worker,) = workers(fake_backend)
    fake_backend.stop_worker_thread(timeout=20)
    assert not thread.is_alive()
    assert workers(fake_backend) == []
    assert fake_backend.rq.hget(worker.key, "death") is not None
    fake_backend.start_worker_thread()  # a thread started again has a worker of its own
    run(fake_backend, set_key, "k", "again")
    (second,) = workers(fake_backend)
    assert second.name != worker.name


def test_an_idle_worker_is_kept_alive_in_rq_s_registry(fake_backend, monkeypatch):
    monkeypatch.setattr(backend_module, "SWEEP_INTERVAL", 0.05)  # a pass every 50 ms
    monkeypatch.setattr(heartbeats, "HEARTBEAT_EVERY", 0.0)  # a heartbeat at every pass
    fake_backend.start_worker_thread()
    run(fake_backend, set_key, "k", "done")
    (worker,) = workers(fake_backend)
    fake_backend.rq.expire(worker.key, 5)  # about to expire: RQ would take it for dead
    wait_for(lambda: fake_backend.rq.ttl(worker.key) > 5, what="the idle worker's heartbeat")
    clean_worker_registry(fake_backend.queue)
    assert [w.name for w in workers(fake_backend)] == [worker.name]


def test_requests_wait_while_the_thread_runs_a_job(fake_backend, client, released,
                                                   monkeypatch):
    monkeypatch.setattr(embedded, "JOBS_FIRST_WAIT", 20.0)
    fake_backend.start_worker_thread()
    job = fake_backend.queue.enqueue(wait_for_release)
    wait_for(lambda: job.get_status(refresh=True) == "started", what="the job to start")
    answered = []
    request = threading.Thread(target=lambda: answered.append(client.get("/healthz")))
    request.start()
    request.join(0.5)
    assert not answered, "a request started while the job ran"
    released.set()
    request.join(20)
    assert answered and answered[0].status_code == 200
    wait_for(lambda: job.get_status(refresh=True) == "finished", what="the job to finish")


def test_a_request_waits_for_a_running_job_for_a_moment_at_most(fake_backend, client,
                                                               released):
    fake_backend.start_worker_thread()
    job = fake_backend.queue.enqueue(wait_for_release)
    wait_for(lambda: job.get_status(refresh=True) == "started", what="the job to start")
    assert client.get("/healthz").status_code == 200  # answered while the job still runs
    assert job.get_status(refresh=True) == "started"


def test_with_a_real_redis_requests_never_wait_for_jobs():
    backend = Backend(Config(redis_url="redis://127.0.0.1:1/0"),
                      fakeredis.FakeRedis(server=fakeredis.FakeServer()), embedded=False)
    app = create_app(backend=backend)
    assert backend.jobs_first.wait not in app.before_request_funcs[None]
    embedded = Backend.from_config(Config())
    assert embedded.jobs_first.wait in create_app(backend=embedded).before_request_funcs[None]


def test_a_showdown_job_uses_the_app_s_cardroom_and_replays_only_what_it_wrote(
        fake_backend, client):
    room = client.application.extensions["cardroom"]
    hand_path, admin = _a_hand_at_its_showdown(client)
    stream = hand_stream(*hand_path.split("/")[3::2])
    assert room.cache.base(stream).state.status == "showdown_pending"
    replayed = []
    room.cache.to_event = lambda envelope: replayed.append(envelope.type) or opened_event(
        envelope)
    assert fake_backend.run_jobs()
    assert room.cache.base(stream).state.status == "ended"  # the app's cache, kept by the job
    assert client.get(hand_path, headers=admin).get_json()["status"] == "ended"
    assert "HandStarted" not in replayed  # the job's own events only, those with dicts read back
    assert replayed and all(holds_dicts(EVENT_TYPES[kind]) for kind in replayed), replayed


@pytest.mark.parametrize("worker_class", [embedded.ThreadWorker, worker_module._Worker])
def test_a_worker_renews_its_key_seldom_and_a_job_s_heartbeat_always(worker_class):
    """RQ renews a worker's key three times a job; within ``HEARTBEAT_EVERY`` of the last
    renewal a renewal is skipped (the key lives for minutes), a job's heartbeat is not."""
    connection = fakeredis.FakeRedis()
    worker = worker_class([rq.Queue(connection=connection)], connection=connection)
    worker.heartbeat()
    assert connection.exists(worker.key)
    connection.delete(worker.key)
    worker.heartbeat()  # a renewal just after one: skipped
    with connection.pipeline() as pipeline:  # also in a pipeline of RQ's (``rq suspend``'s)
        worker.heartbeat(pipeline=pipeline)
        assert len(pipeline) == 0
    assert not connection.exists(worker.key)
    worker.heartbeat(30)  # a job's: sent
    assert 0 < connection.ttl(worker.key) <= 30


def _held(client) -> set[bytes]:
    """The keys the in-process server of ``client`` holds, past their TTL or not (reading a
    key would answer the question: fakeredis drops an expired key as it is read)."""
    return set(client.connection_pool.connection_kwargs["server"].dbs[0]._dict)


def test_the_thread_drops_keys_past_their_ttl_from_both_in_process_servers(fake_backend,
                                                                          monkeypatch):
    """fakeredis drops an expired key only as it is read or the key space is counted: the
    idempotency records (a day), RQ's jobs and results (an hour) were held for good."""
    monkeypatch.setattr(backend_module, "SWEEP_INTERVAL", 0.05)
    monkeypatch.setattr(backend_module, "EXPIRE_INTERVAL", 0.05)
    servers = (fake_backend.redis, fake_backend.rq)
    for client in servers:
        client.set("brief", "x", px=100)
        client.set("lasting", "x")
    fake_backend.start_worker_thread()
    wait_for(lambda: all(b"brief" not in _held(client) for client in servers), timeout=5,
             what="the keys past their TTL to be dropped")
    assert all(b"lasting" in _held(client) for client in servers)
