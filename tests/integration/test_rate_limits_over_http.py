"""The rate limit holds across API processes: ``cardroom serve --workers 2`` with
``CARDROOM_RATE_LIMIT=N/S`` on a redis-server of the test's own. The requests are sent
alternately to each gunicorn worker (a connection is used only once the test has seen which
worker accepted it), so a limit counted in each process would let every request through;
counted in Redis, N requests pass and the next gets 429 with Retry-After from either one.
The same with a made-up token on every request: each counts against the address's bucket,
shared in Redis, so both processes refuse once it is empty."""

from __future__ import annotations

import http.client
import secrets
import time
import urllib.error
import urllib.request

import psutil
import pytest

from tests.processes import RedisServer, free_port, redis_binary

from .conftest import START_TIMEOUT, log_tail

REQUESTS = 6  # N of the limit, even: half of them to each worker
WAIT = 30.0  # seconds; a bound on a stuck wait, never asserted as a timing


@pytest.fixture
def own_redis(tmp_path):
    server = RedisServer(redis_binary(), tmp_path).start()
    yield server
    server.stop()


def test_n_requests_pass_and_the_next_gets_429_from_either_process(own_redis, cardroom_process):
    serve, port, workers = serve_limited(own_redis, cardroom_process)
    for number in range(REQUESTS):
        status, headers = get_from(port, workers[number % 2], workers)
        assert status == 200, (number, status, headers, log_tail(serve.log_path))
    for worker in workers:  # request N + 1, then N + 2: each process refuses
        status, headers = get_from(port, worker, workers)
        assert_rate_limited(serve, status, headers)


def test_made_up_tokens_are_refused_by_either_process(own_redis, cardroom_process):
    """A table that does not exist, asked about with a new token each time: the first N are
    answered (404), then each process refuses, the second round from its own block."""
    serve, port, workers = serve_limited(own_redis, cardroom_process)
    path = "/v1/tables/no-such-table"
    for number in range(REQUESTS):
        status, headers = get_from(port, workers[number % 2], workers, path, made_up())
        assert status == 404, (number, status, headers, log_tail(serve.log_path))
    for worker in workers * 2:
        status, headers = get_from(port, worker, workers, path, made_up())
        assert_rate_limited(serve, status, headers)


def serve_limited(own_redis, cardroom_process):
    """``cardroom serve --workers 2`` limited to ``REQUESTS`` an hour: the process, its port
    and its two workers."""
    port = free_port()
    serve = cardroom_process("serve", "--port", str(port), "--workers", "2",
                             REDIS_URL=own_redis.url,
                             CARDROOM_RATE_LIMIT=f"{REQUESTS}/3600")
    wait_healthy(serve, port)
    return serve, port, gunicorn_workers(serve, 2)


def made_up() -> dict[str, str]:
    return {"Authorization": f"Bearer {secrets.token_urlsafe(32)}"}


def assert_rate_limited(serve, status: int, headers: dict[str, str]) -> None:
    assert status == 429, (status, headers, log_tail(serve.log_path))
    assert headers["content-type"] == "application/problem+json"
    assert 1 <= int(headers["retry-after"]) <= 600  # the interval: 3600 s / 6


def get_from(port: int, worker: psutil.Process, workers: list[psutil.Process],
             path: str = "/v1/games", headers: dict[str, str] | None = None,
             ) -> tuple[int, dict[str, str]]:
    """``GET path`` served by ``worker``: connections another worker accepted are
    closed unused (no request on them, so the limit never sees them)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        try:
            connection.connect()
            if accepted_by(connection.sock.getsockname()[1], workers, deadline) is worker:
                connection.request("GET", path, headers=headers or {})
                response = connection.getresponse()
                response.read()
                return response.status, {k.lower(): v for k, v in response.getheaders()}
        finally:
            connection.close()
    raise AssertionError(f"worker {worker.pid} accepted no connection in {WAIT:.0f} s")


def accepted_by(client_port: int, workers: list[psutil.Process], deadline: float,
                ) -> psutil.Process:
    """The worker that accepted the connection from ``client_port``."""
    while time.monotonic() < deadline:
        for worker in workers:
            if any(c.raddr and c.raddr.port == client_port
                   for c in worker.net_connections(kind="tcp")):
                return worker
        time.sleep(0.01)
    raise AssertionError(f"no process accepted the connection from port {client_port}")


def gunicorn_workers(serve, count: int) -> list[psutil.Process]:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        children = psutil.Process(serve.pid).children()
        if len(children) == count:
            return children
        time.sleep(0.1)
    raise AssertionError(f"expected {count} gunicorn workers\n" + log_tail(serve.log_path))


def wait_healthy(serve, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert serve.poll() is None, "cardroom serve exited\n" + log_tail(serve.log_path)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise AssertionError("cardroom serve is not healthy\n" + log_tail(serve.log_path))
