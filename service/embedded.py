"""The embedded mode's job thread: its RQ worker, the timeouts of its jobs, and the priority
of its jobs over requests.

The thread (``service.backend.Backend``'s ``_work_loop``) shares one interpreter with the
request threads. ``ThreadWorker`` serves it for its whole life, safe off the main thread
(RQ's signal handlers and SIGALRM timeouts only work on the main thread); one
``_Watchdog`` thread raises every job's timeout; ``JobsFirst`` makes new requests wait a
moment while the thread runs jobs.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

from rq import SimpleWorker
from rq.logutils import setup_loghandlers
from rq.timeouts import TimerDeathPenalty
from rq.worker import WorkerStatus

from service.bookkeeping import FewerRoundTrips
from service.heartbeats import SeldomRenewed

log = logging.getLogger(__name__)

JOBS_FIRST_WAIT = 0.05  # seconds a request waits, at most, while the job thread runs jobs
TIMEOUT_TICK = 1.0  # seconds between the watchdog's looks at the running jobs' deadlines


class _Watchdog:
    """Raises a job's timeout in the thread that runs it, as RQ's ``TimerDeathPenalty``
    does, but from one thread for every job: that class starts a timer thread for each
    job, and starting a thread costs the job thread a hand-over of the interpreter lock or
    two (milliseconds, while request threads are busy). It looks at the deadlines every
    ``TIMEOUT_TICK`` seconds, so a job may outlive its timeout by that much."""

    def __init__(self):
        self._deadlines: dict[TimerDeathPenalty, float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, penalty: TimerDeathPenalty, seconds: float) -> None:
        with self._lock:
            self._deadlines[penalty] = time.monotonic() + seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cardroom-job-timeouts",
                                                daemon=True)
                self._thread.start()

    def forget(self, penalty: TimerDeathPenalty) -> None:
        with self._lock:
            self._deadlines.pop(penalty, None)

    def _run(self) -> None:
        while True:
            time.sleep(TIMEOUT_TICK)
            # Under the lock: a job that ends meanwhile waits in ``forget``, where a timeout
            # raised just now is ignored (``BaseDeathPenalty.__exit__``), not after it
            with self._lock:
                now = time.monotonic()
                for penalty in [p for p, end in self._deadlines.items() if end <= now]:
                    del self._deadlines[penalty]
                    try:
                        penalty.handle_death_penalty()
                    except Exception:  # the job's thread is gone
                        log.exception("could not raise the timeout of a job")


_WATCHDOG = _Watchdog()


class _WatchedDeathPenalty(TimerDeathPenalty):
    """RQ's ``TimerDeathPenalty``, timed by the ``_Watchdog``."""

    def setup_death_penalty(self):
        if self._timeout > 0:
            _WATCHDOG.watch(self, self._timeout)

    def cancel_death_penalty(self):
        if self._timeout > 0:
            _WATCHDOG.forget(self)


class ThreadWorker(SeldomRenewed, FewerRoundTrips, SimpleWorker):
    """The embedded mode's RQ worker: one for the life of the job thread, safe off the main
    thread (no signal handlers; timeouts raised by the ``_Watchdog``, not SIGALRM).

    RQ's ``work`` registers a worker's birth, cleans the queue's registries and registers
    its death around every run; a worker made for each burst of jobs paid all that for
    every showdown. This one is ``born`` once, then each ``run_queued`` is RQ's own burst
    loop (dequeue, ``execute_job``, failures recorded and logged by RQ) without that
    bootstrap and teardown; ``retire`` registers its death. No pubsub thread: nothing out
    of this process can reach the in-process Redis to send it a command. Its renewals are
    seldom (``service.heartbeats``); the job thread asks for one at every pass, so that an
    idle worker stays alive in RQ's eyes. It records each job in fewer round trips than RQ
    (``service.bookkeeping``)."""

    death_penalty_class = _WatchedDeathPenalty

    def born(self) -> None:
        """Register the worker's birth, as RQ's ``bootstrap`` does, once."""
        setup_loghandlers("WARNING", name="rq.worker")  # RQ's lines at INFO are left out
        setup_loghandlers("WARNING", name="rq.job")
        self.register_birth()
        self.set_state(WorkerStatus.STARTED)

    def run_queued(self) -> bool:
        """Run the jobs on the queue until it is empty; True if any ran."""
        return self.work(burst=True)

    def retire(self) -> None:
        """Register the worker's death, as RQ's ``teardown`` does."""
        self.register_death()

    def bootstrap(self, *args, **kwargs):  # RQ calls it at every ``work``: see ``born``
        pass

    def teardown(self):  # RQ calls it at the end of every ``work``: see ``retire``
        pass

    def _install_signal_handlers(self):
        pass

    def heartbeat(self, timeout=None, pipeline=None):
        if not self.renewal_skipped(timeout):
            super().heartbeat(timeout, pipeline)


class JobsFirst:
    """The embedded mode's priority of jobs over requests. The job thread shares one
    interpreter lock with the request threads, so a job run beside N busy requests takes
    about N+1 times its CPU time. While it runs jobs (``running``), a request waits before
    it starts (``wait``), at most ``JOBS_FIRST_WAIT`` seconds; requests already started go
    on. With a real Redis the app does not wait on it (jobs run in other processes)."""

    def __init__(self):
        self._no_jobs_running = threading.Event()
        self._no_jobs_running.set()

    @contextmanager
    def running(self):
        self._no_jobs_running.clear()
        try:
            yield
        finally:
            self._no_jobs_running.set()

    def wait(self) -> None:
        """Wait until no job runs, or ``JOBS_FIRST_WAIT`` seconds (a flask before_request)."""
        self._no_jobs_running.wait(JOBS_FIRST_WAIT)
