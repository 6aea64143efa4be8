"""``cardroom worker``: a real RQ worker process that outlives Redis outages.

It takes jobs from the job queue's Redis (``RQ_REDIS_URL``, else ``REDIS_URL``) and
settles hands in the events' (``REDIS_URL``, a Redis Cluster node with
``REDIS_CLUSTER=true``; see ``service.backend``).

It listens on the cardroom queue in the main thread and runs each job in
process (``SimpleWorker``: no fork, so SIGKILL leaves no orphaned job
process behind). A daemon sweeper thread calls ``enqueue_owed_jobs`` (and, with
``CARDROOM_ARCHIVE_AFTER``, archives ended hands: ``service.retention``) about
once a second, which also keeps this worker marked alive (``backend.worker_name``;
see ``service.jobs``), so that a job it is running is not taken for lost.
SIGTERM or SIGINT stops it after the current job (a second one stops it at
once), with exit status 0.

It logs as the API does (``service.logs``: one JSON object a line, on stderr) what RQ
logs at INFO: its start and stop, and for each job the line as it takes it and two as
it completes it (RQ's third, "result is kept for ... seconds", is left out), or the
job's traceback at ERROR when it fails (but for want of the events' Redis: that is the
outage's line, below).

When Redis goes away the worker waits for it. RQ retries its own wait for a
job (here at most ``BACKOFF_MAX`` seconds apart), but quits on a Redis error
anywhere else (while it takes, runs or records a job, cleans its registries,
or starts); then ``run_worker`` waits, with exponential backoff, until Redis
answers, and starts a new RQ worker on it. The sweeper keeps trying every
second. Each outage is logged once when it begins and once when it ends, not
at every retry, and not once by RQ's loop and again by the sweeper: on one Redis
they share its ``Outage``; with the job queue's Redis apart, RQ's loop reports that
one and the sweeper the events' (``Backend.sweep``).
"""

from __future__ import annotations

import logging
import signal
import threading
import time

import prometheus_client
from rq import SimpleWorker
from rq.exceptions import StopRequested
from rq.job_lifecycle import call_exception_handlers

from service import jobs, logs, metrics
from service.backend import SWEEP_INTERVAL, Backend, Outage, connect, store_unavailable
from service.bookkeeping import FewerRoundTrips
from service.config import Config
from service.heartbeats import SeldomRenewed
from service.keys import keys_disagree

log = logging.getLogger("cardroom.worker")

BACKOFF_FIRST = 0.5  # seconds before the first retry after RQ quit
BACKOFF_MAX = 4.0  # seconds between retries, at most (RQ's own too)
STEADY_RUN = 60.0  # seconds an RQ worker must have run for the backoff to start again


class _Worker(SeldomRenewed, FewerRoundTrips, SimpleWorker):
    """Remembers whether a signal stopped it, tells ``outage`` when Redis answers, sends
    each heartbeat in one round trip, its renewals seldom (``service.heartbeats``), and
    records each job in fewer round trips than RQ (``service.bookkeeping``)."""

    max_connection_wait_time = BACKOFF_MAX  # RQ's own retry of its dequeue: 1, 2, 4, 4 ... s
    log_result_lifespan = False  # RQ's "result is kept for 3600 seconds", after every job
    stopped_by_signal = False
    outage: Outage | None = None
    events_outage: Outage | None = None  # the sweeper's (the same one on one Redis)

    def request_stop(self, signum, frame):
        self.stopped_by_signal = True
        super().request_stop(signum, frame)

    def heartbeat(self, timeout=None, pipeline=None):
        if not (self.outage and self.outage.is_down) and self.renewal_skipped(timeout):
            return
        if pipeline is not None:  # RQ sends it with its own commands
            super().heartbeat(timeout, pipeline)
            return
        # RQ's heartbeat is three commands, each its own round trip, three times a job
        with self.connection.pipeline(transaction=False) as batch:
            super().heartbeat(timeout, batch)
            batch.execute()
        if self.outage is not None:  # it reached Redis just now
            self.outage.up()

    def handle_exception(self, job, *exc_info):
        """A job that failed for want of the events' Redis reports that outage (once, with
        the sweeper's lines) instead of RQ's traceback a job; RQ records the failure, and
        the sweeper enqueues an owed showdown again once the events answer."""
        if self.events_outage is not None and store_unavailable(exc_info[1]):
            self.events_outage.down(exc_info[1])
            call_exception_handlers(self._exc_handlers, job, *exc_info)
            return
        super().handle_exception(job, *exc_info)


class _OneLinePerOutage(logging.Filter):
    """Drops RQ's lines about a lost Redis (one per retry: "could not connect to Redis
    instance ... retrying", or a traceback as it quits) and reports the outage instead."""

    def __init__(self, outage: Outage):
        super().__init__()
        self.outage = outage

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and store_unavailable(error):
            self.outage.down(error)
            return False
        if "could not connect to Redis" in str(record.msg):
            args = record.args if isinstance(record.args, tuple) else ()
            self.outage.down(args[1] if len(args) > 1 else record.getMessage())
            return False
        return True


def run_worker(config: Config, metrics_port: int | None = None) -> int:
    """Work the queue, through any outage of Redis, until SIGTERM/SIGINT; then 0. With
    ``metrics_port``, serve this process's metrics (``service.metrics``) on it."""
    logs.configure()  # JSON lines, as the API's: RQ's own lines too
    outage = Outage(log, "the worker waits for it and reconnects",
                    what="the job queue's Redis" if config.rq_apart else "the event store")
    logging.getLogger("rq.worker").addFilter(_OneLinePerOutage(outage))
    backend = Backend.from_config(config)
    if not config.rq_apart:  # one Redis: one outage, whether RQ's loop or the sweeper meets it
        backend.events_outage = outage
    metrics.job_metrics()  # at zero until a job runs
    if metrics_port is not None:
        try:
            prometheus_client.start_http_server(metrics_port, addr=config.host)
        except OSError as error:  # another worker on this machine has it, say
            raise SystemExit(f"cardroom: error: cannot serve metrics on {config.host}:"
                             f"{metrics_port} (CARDROOM_METRICS_PORT): {error.strerror}; "
                             "give each worker on a machine a port of its own") from None
    threading.Thread(
        target=_sweep_forever, args=(backend,), name="cardroom-sweeper", daemon=True
    ).start()
    try:
        _work(config, backend, outage)
    except (_Stopped, StopRequested):  # a signal while no RQ worker was running
        pass
    return 0


def _work(config: Config, backend: Backend, outage: Outage) -> None:
    """Run RQ workers one after the other until a signal stops one (RQ raises its
    connection's socket timeout above its BLPOP timeout, hence a connection of its own;
    the sweeper keeps the one working marked alive)."""
    connection = connect(config.rq_url)
    jobs.run_in_worker(config, connection)
    delay = BACKOFF_FIRST
    while True:
        signal.signal(signal.SIGTERM, _stop)  # RQ installs its own while it works
        signal.signal(signal.SIGINT, _stop)
        began, worker = time.monotonic(), None
        try:
            worker = _Worker([config.queue_name], connection=connection)  # this talks to Redis
            worker.outage, worker.events_outage = outage, backend.events_outage
            backend.worker_name = worker.name  # each sweep marks it alive (service.jobs)
            jobs.mark_worker_alive(connection, worker.name)  # alive before it takes a job
            _refuse_other_keys(config, backend)
            worker.work(logging_level="INFO")
        except StopRequested:  # RQ's handler, signalled as its worker was done
            raise
        except Exception as error:  # RQ raised (its start and teardown talk to Redis)
            if store_unavailable(error):
                outage.down(error)
            else:
                log.exception("the RQ worker failed; starting another")
        finally:
            backend.worker_name = None  # its job, if it had one, is lost once the mark expires
            _let_go(worker)
        if worker is not None and worker.stopped_by_signal:
            return
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        log.warning("no RQ worker is running; another starts once Redis answers")
        if time.monotonic() - began > STEADY_RUN:
            delay = BACKOFF_FIRST
        delay = _wait_for_redis(connection, outage, delay)


def _refuse_other_keys(config: Config, backend: Backend) -> None:
    """Exit, saying why, if this worker's keys are not those the API published: each hand
    it settled would fail, or end with a receipt the API's public key does not verify.
    Checked as each RQ worker starts: at first, and again after an outage."""
    wrong = keys_disagree(backend.redis, config.keys())
    if wrong:
        log.error("cardroom worker stops: %s", wrong)
        raise SystemExit(f"cardroom: error: {wrong}")


def _wait_for_redis(connection, outage: Outage, delay: float) -> float:
    """Sleep ``delay``, doubling up to BACKOFF_MAX, until Redis answers; the next delay."""
    while True:
        time.sleep(delay)
        delay = min(2 * delay, BACKOFF_MAX)
        try:
            connection.ping()
        except Exception as error:  # not there yet, whatever it says
            outage.down(error)
            continue
        outage.up()
        return delay


def _let_go(worker: _Worker | None) -> None:
    """Stop the pubsub thread of an RQ worker whose teardown could not reach Redis."""
    thread = getattr(worker, "pubsub_thread", None)
    if thread is not None and thread.is_alive():
        thread.stop()


class _Stopped(BaseException):
    """SIGTERM or SIGINT while no RQ worker runs (a BaseException: no ``except Exception``
    on the way out may take it for a failure and carry on)."""


def _stop(signum, frame):
    raise _Stopped()


def _sweep_forever(backend: Backend) -> None:
    while True:
        backend.sweep()  # never raises; logs an outage of Redis once
        time.sleep(SWEEP_INTERVAL)
