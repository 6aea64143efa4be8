"""Prometheus metrics: what cardroom counts, and ``GET /metrics`` in the text format.

Counted where it happens, in the process where it happens:

- requests and their latency by route (the URL rule, never the raw path; ``unmatched``
  when no rule takes the path and method: a 404 or 405), method and status, by the API
  (``observe_request``); requests gunicorn refused before the app could read them (a line
  or header that does not parse or is too long) by status alone, with the route
  ``unread`` and the method ``other``, and no latency, as the app never answered them
  (``count_unread``);
- appends, version conflicts and idempotent replays, by the event store and the service
  layer, wherever they run (an API process, a worker);
- showdown jobs by outcome, their duration and their age (from their last enqueue to
  their start), by whatever runs them (``showdown_job``): the job thread of the API
  process in embedded mode, else the ``cardroom worker`` processes;
- SSE streams open (``service.live.StreamSlots``), by the API;
- ended hands archived (``service.retention``), by whatever sweeps: the ``cardroom
  worker`` processes, or the job thread of the API process in embedded mode.

The showdown job and archive metrics exist only in a process that runs jobs and sweeps
(``job_metrics``): an API process beside separate workers shows none.

Owed jobs are not counted but read from Redis at scrape time (``OwedJobs``).

Under ``cardroom serve`` every API process writes its samples to files in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's multiprocess mode; ``service.cli``
sets it up), and whichever process answers ``GET /metrics`` sums them all. Without that
variable (tests, an app made by ``create_app`` in one process) the process answers with
its own registry. A ``cardroom worker`` is a process of its own, often on another
machine: it never writes to that directory, and serves its own metrics (the job metrics,
its appends) at ``http://HOST:CARDROOM_METRICS_PORT/metrics`` when that variable is set.
"""

from __future__ import annotations

import math
import os
import time
from datetime import datetime, timezone
from functools import cache
from typing import Any, Callable

from prometheus_client import (REGISTRY, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest, multiprocess)
from prometheus_client.core import GaugeMetricFamily

from service.backend import store_unavailable

UNMATCHED = "unmatched"  # the route label when no URL rule takes the path and method
UNREAD = "unread"  # the route label of a request gunicorn refused before the app read it
OWED_TABLES_READ = 1000  # tables the owed-jobs gauge reads at most, per scrape
_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
# What generate_latest writes. Not CONTENT_TYPE_LATEST: in newer prometheus_client versions it
# names version 1.0.0, which the library's own handler (a worker's metrics port) sends only
# to a scraper that asks for it, with names escaped as that version needs.
TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter("cardroom_http_requests", "HTTP requests answered, by route, method and status",
                   ["route", "method", "status"])
REQUEST_SECONDS = Histogram("cardroom_http_request_duration_seconds",
                            "Time the app took to answer a request, by route, method and status",
                            ["route", "method", "status"], buckets=_LATENCY_BUCKETS)
APPENDS = Counter("cardroom_appends", "Atomic writes to the event store that succeeded")
VERSION_CONFLICTS = Counter(
    "cardroom_version_conflicts",
    "Commands that found a hand or table at another version than they expected: a stale "
    "expected_version (answered 409), or a write the store refused because a stream had "
    "moved on since it was read or since its process last saw it (answered 409 when the "
    "client pinned the version, else decided again)")
IDEMPOTENT_REPLAYS = Counter("cardroom_idempotent_replays",
                             "Commands answered from their Idempotency-Key's first answer")
SSE_STREAMS_OPEN = Gauge("cardroom_sse_streams_open", "Server-sent event streams open",
                         multiprocess_mode="livesum")


class JobMetrics:
    """The metrics of showdown jobs and of archiving, which only a process that runs jobs
    and sweeps moves (``job_metrics``)."""

    def __init__(self):
        self.showdown_jobs = Counter(
            "cardroom_showdown_jobs", "Showdown jobs run, by outcome (settled, nothing_to_do, "
            "failed)", ["outcome"])
        self.showdown_job_seconds = Histogram(
            "cardroom_showdown_job_duration_seconds", "Time a showdown job took to run",
            buckets=_LATENCY_BUCKETS)
        self.showdown_job_age = Histogram(
            "cardroom_showdown_job_age_seconds",
            "Time from a showdown job's (last) enqueue to its start (the enqueuing host's "
            "clock against the runner's: keep the hosts' clocks synchronized)",
            buckets=_LATENCY_BUCKETS)
        self.hands_archived = Counter(
            "cardroom_hands_archived",
            "Ended hands whose stream this process replaced by its archive")


@cache
def job_metrics() -> JobMetrics:
    """This process's job metrics, made on first use: by ``cardroom worker`` as it starts,
    by the API as its embedded job thread starts. An API process beside separate workers
    never makes them, so its ``/metrics`` shows no job series that only workers move."""
    return JobMetrics()


_request_series: dict[tuple[str, str, int], tuple] = {}


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request (the labelled children are looked up once per series)."""
    key = (route, method if method in _METHODS else "other", status)
    series = _request_series.get(key)
    if series is None:
        labels = (*key[:2], str(status))
        series = _request_series[key] = (REQUESTS.labels(*labels),
                                         REQUEST_SECONDS.labels(*labels))
    series[0].inc()
    series[1].observe(seconds)


def count_unread(status: int) -> None:
    REQUESTS.labels(UNREAD, "other", str(status)).inc()


def showdown_job(enqueued_at: datetime | None, settle: Callable[[], bool]) -> bool:
    """Run ``settle`` (True: it settled the hand) as a showdown job, counting it."""
    counted = job_metrics()
    if enqueued_at is not None:
        age = datetime.now(timezone.utc) - enqueued_at.replace(tzinfo=timezone.utc)
        counted.showdown_job_age.observe(max(0.0, age.total_seconds()))
    outcome, started = "failed", time.perf_counter()
    try:
        settled = settle()
        outcome = "settled" if settled else "nothing_to_do"
        return settled
    finally:
        counted.showdown_job_seconds.observe(time.perf_counter() - started)
        counted.showdown_jobs.labels(outcome).inc()


def exposition(store_of: Callable[[], Any]) -> tuple[bytes, str]:
    """The body and content type of ``GET /metrics``: this process's metrics (or, in
    multiprocess mode, every API process's) and the owed jobs read from ``store_of()``, an
    event store."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(REGISTRY)  # a registry is a collector of its metrics
    registry.register(OwedJobs(store_of))
    return generate_latest(registry), TEXT_FORMAT


class OwedJobs:
    """Gauges read from Redis at scrape time: the showdown jobs owed now and the age of
    the oldest (``service.jobs``), from the tables indexed as owing (at most
    ``OWED_TABLES_READ``; three round trips); and whether the store answered."""

    def __init__(self, store_of: Callable[[], Any]):
        self.store_of = store_of

    def collect(self):
        try:
            store = self.store_of()
            now = store.redis_time()
            tables = store.owed_tables(math.inf, OWED_TABLES_READ)
            owed = store.owed_markers(tables) if tables else {}
        except Exception as error:
            if not store_unavailable(error):
                raise
            yield GaugeMetricFamily("cardroom_store_up", "Whether Redis answered", value=0)
            return
        since = [score for markers in owed.values() for _, score in markers]
        yield GaugeMetricFamily("cardroom_store_up", "Whether Redis answered", value=1)
        yield GaugeMetricFamily("cardroom_owed_jobs", "Jobs owed now (a showdown not yet "
                                "settled), on Redis", value=len(since))
        yield GaugeMetricFamily("cardroom_owed_job_oldest_age_seconds",
                                "How long the oldest owed job has been owed (or re-enqueued)",
                                value=max(0.0, now - min(since)) if since else 0.0)
