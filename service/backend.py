"""The Redis connection, the RQ queue and, in embedded mode, a worker thread.

A ``Backend`` is what the app and the workers share. Its ``redis`` client uses
``decode_responses=False`` (replies are ``bytes``) because RQ stores pickled
jobs and cannot work on a decoding client; the event store decodes itself.

Embedded mode (``Config.redis_url`` is None) runs an in-process
``fakeredis.FakeServer`` with Lua (``fakeredis[lua]``). Its jobs run in a
daemon thread that loops: sweep owed jobs (about once a second), drain the
queue with an RQ worker in burst mode, sleep a little. A blocking RQ worker
would never wake on fakeredis from a thread, and RQ's signal handlers and
SIGALRM job timeouts only work on the main thread, hence ``_ThreadWorker``.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time

import fakeredis
import redis
from rq import Queue, SimpleWorker
from rq.timeouts import TimerDeathPenalty

from service.config import Config

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05  # seconds between queue checks in the worker thread
SWEEP_INTERVAL = 1.0  # seconds between enqueue_owed_jobs calls


class _ThreadWorker(SimpleWorker):
    """An RQ worker safe to run off the main thread: no signals, timer timeouts."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self):
        pass


class Backend:
    def __init__(self, config: Config, client: redis.Redis, *, embedded: bool):
        self.config = config
        self.redis = client
        self.embedded = embedded
        self.queue = Queue(config.queue_name, connection=client)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sweep_error: str | None = None

    @classmethod
    def from_config(cls, config: Config | None = None) -> "Backend":
        config = config or Config()
        if config.redis_url:
            return cls(config, redis.Redis.from_url(config.redis_url), embedded=False)
        server = fakeredis.FakeServer()
        return cls(config, fakeredis.FakeRedis(server=server), embedded=True)

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except redis.RedisError:
            return False

    def sweep(self) -> None:
        """Call ``service.jobs.enqueue_owed_jobs``; log a new failure, never raise."""
        try:
            importlib.import_module("service.jobs").enqueue_owed_jobs(self)
            self._sweep_error = None
        except Exception as exc:
            if repr(exc) != self._sweep_error:
                log.exception("enqueue_owed_jobs failed (logged once until it changes)")
            self._sweep_error = repr(exc)

    def run_jobs(self) -> bool:
        """Run every queued job in the calling thread; True if any ran."""
        if not self.queue.count:
            return False
        worker = _ThreadWorker([self.queue], connection=self.redis)
        return worker.work(burst=True, logging_level="WARNING")

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
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)
            self._thread = None

    def _work_loop(self) -> None:
        next_sweep = 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_sweep:
                self.sweep()
                next_sweep = time.monotonic() + SWEEP_INTERVAL
            try:
                self.run_jobs()
            except Exception:
                log.exception("worker thread failed to drain the queue")
            self._stop.wait(POLL_INTERVAL)
