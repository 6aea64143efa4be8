"""Metrics and logs of a real ``cardroom serve --workers 2`` (its own redis-server) and a
separate ``cardroom worker``: the request counters summed over both API processes equal
the requests sent, each request is one JSON log line without a token, and the showdown
job is counted on the worker's own metrics port (``CARDROOM_METRICS_PORT``)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.processes import (ROOT, TEST_KEYS, RedisServer, free_port, redis_binary,
                             stop_process, subprocess_env)

from .client import Api, create_table, play_hand
from .conftest import Server, worker_logs

HAND_PATH = re.compile(r"^/v1/tables/[^/]+/hands/\d+$")
HAND_ROUTE = "/v1/tables/<table_id>/hands/<int:hand_no>"


class CountingApi(Api):
    """An Api that remembers (method, path without query, status) of every answer."""

    def __init__(self, base_url: str):
        super().__init__(base_url)
        self.sent: list[tuple[str, str, int]] = []

    def request(self, method, path, **kw):
        response = super().request(method, path, **kw)
        self.sent.append((method, path.split("?")[0], response.status))
        return response


@pytest.fixture
def stack(tmp_path):
    redis = RedisServer(redis_binary(), tmp_path).start()
    server = Server(tmp_path / "serve.log", redis.url, workers=2)
    yield redis, server
    server.stop()
    redis.stop()


def scrape(url: str) -> list:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return [sample for family in text_string_to_metric_families(response.read().decode())
                for sample in family.samples]


def access_lines(log_path) -> list[dict]:
    lines = []
    for text in log_path.read_text(errors="replace").splitlines():
        if text.startswith("{"):
            line = json.loads(text)
            if line.get("logger") == "cardroom.access":
                lines.append(line)
    return lines


def test_metrics_sum_both_api_processes_and_the_worker_counts_its_showdown(
        stack, worker_process):
    redis, server = stack
    metrics_port = free_port()
    workers = worker_process(redis.url, CARDROOM_METRICS_PORT=str(metrics_port))
    api = CountingApi(server.url)
    table = create_table(api, 3, buy_in=1000)
    played = play_hand(table, random.Random(9), allow_fold=False,
                       diagnostics=lambda: worker_logs(workers))
    assert played.final["status"] == "ended"
    for _ in range(200):  # until both API processes have answered (the log says who did)
        if len({line["pid"] for line in access_lines(server.log_path)}) == 2:
            break
        api.ok(api.get("/v1/games"), 200)
    assert len({line["pid"] for line in access_lines(server.log_path)}) == 2, server.log()

    samples = scrape(server.url + "/metrics")
    counted = [s for s in samples if s.name == "cardroom_http_requests_total"
               and s.labels["route"] not in ("/healthz", "/metrics")]
    assert sum(s.value for s in counted) == len(api.sent)
    hand_reads = sum(1 for method, path, status in api.sent
                     if method == "GET" and HAND_PATH.match(path) and status == 200)
    assert hand_reads > 3
    assert [s.value for s in counted if s.labels == {
        "route": HAND_ROUTE, "method": "GET", "status": "200"}] == [hand_reads]
    by_name = {s.name: s.value for s in samples if not s.labels}
    assert by_name["cardroom_appends_total"] == played.actions + 5  # table, 3 seats, start
    assert by_name["cardroom_owed_jobs"] == 0 and by_name["cardroom_store_up"] == 1
    assert not [s for s in samples if s.name.startswith(("cardroom_showdown_job",
                                                          "cardroom_hands_archived"))]

    lines = access_lines(server.log_path)
    assert len([line for line in lines if line["route"] not in ("/healthz", "/metrics")]) == \
        len(api.sent)
    for line in lines:
        assert {"method", "path", "route", "status", "duration_ms", "request_id",
                "remote_addr", "table_id", "time"} <= set(line), line
    log_text = server.log_path.read_text(errors="replace")
    for token in [table.admin, table.auditor, *table.tokens.values()]:
        assert token not in log_text

    worker_samples = scrape(f"http://127.0.0.1:{metrics_port}/metrics")
    jobs = {(s.name, s.labels.get("outcome")): s.value for s in worker_samples}
    assert jobs[("cardroom_showdown_jobs_total", "settled")] == 1, worker_logs(workers)
    assert jobs[("cardroom_showdown_job_duration_seconds_count", None)] == 1
    assert jobs[("cardroom_showdown_job_age_seconds_count", None)] == 1
    assert jobs[("cardroom_appends_total", None)] == 1  # the showdown's one write


def test_in_embedded_mode_the_api_counts_the_showdowns_its_job_thread_settles(embedded_server):
    table = create_table(embedded_server.api, 2, buy_in=1000)
    play_hand(table, random.Random(4), allow_fold=False)
    samples = {(s.name, s.labels.get("outcome")): s.value
               for s in scrape(embedded_server.url + "/metrics")}
    assert samples[("cardroom_showdown_jobs_total", "settled")] == 1, embedded_server.log()
    assert samples[("cardroom_showdown_job_age_seconds_count", None)] == 1
    assert samples[("cardroom_owed_jobs", None)] == 0


def test_a_worker_that_exits_leaves_the_metrics_of_the_others(stack):
    """Gunicorn replaces a worker that exits; the replacement boots and /metrics answers
    (the shared metrics directory belongs to the server, not to any one worker)."""
    _, server = stack
    api = Api(server.url)
    deadline = time.monotonic() + 30  # gunicorn forks its workers a moment apart
    while len(first := set(psutil.Process(server.proc.pid).children())) < 2:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)
    leaving = first.pop()
    leaving.terminate()
    leaving.wait(10)
    deadline = time.monotonic() + 30
    while len(set(psutil.Process(server.proc.pid).children()) - {leaving}) < 2:
        assert server.proc.poll() is None, server.log()
        assert time.monotonic() < deadline, "no worker replaced the one that exited"
        time.sleep(0.1)
    for _ in range(20):  # both processes answer, the new one included
        assert api.get("/metrics").status == 200, server.log()
    assert server.proc.poll() is None, server.log()
    assert "Exception in worker process" not in server.log_path.read_text(), server.log()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:  # not listening yet
        return False


def test_every_line_serve_writes_to_stderr_is_json_the_missing_keys_warning_too(tmp_path):
    env = {name: value for name, value in subprocess_env().items() if name not in TEST_KEYS}
    port = free_port()
    with open(tmp_path / "stderr", "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port)], cwd=ROOT,
            env=env, stdout=subprocess.PIPE, stderr=stderr)
    try:
        banner = proc.stdout.readline().decode()
        assert f"listening on http://127.0.0.1:{port}" in banner
        deadline = time.monotonic() + 30
        while not answers(f"http://127.0.0.1:{port}/v1/games"):
            assert time.monotonic() < deadline, "serve never answered"
            time.sleep(0.1)
    finally:
        stop_process(proc)
    lines = [json.loads(text) for text in (tmp_path / "stderr").read_text().splitlines()]
    warned = [line for line in lines if "CARDROOM_SECRET_KEY" in line["message"]]
    assert [(line["level"], line["logger"]) for line in warned] == [("WARNING", "cardroom")]
    assert any(line["logger"] == "cardroom.access" for line in lines)
