"""Fixtures for the integration tests: real ``cardroom serve`` processes, an isolated Redis DB.

The tests use a DB of their own (``integration_redis_url``) on the tests' own Redis,
flushed before each test, so that the other tests (which flush their DB and run
workers and sweepers on it) never touch our streams or take our jobs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from tests.processes import ROOT, TEST_KEYS, free_port, stop_process, subprocess_env

from .client import Api

INTEGRATION_DB = int(os.environ.get("CARDROOM_INTEGRATION_DB", "14"))
START_TIMEOUT = 30.0


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {path})"
    return f"--- last lines of {path} ---\n" + "\n".join(text[-lines:])


class Server:
    """A running ``cardroom serve`` subprocess."""

    def __init__(self, log_path: Path, redis_url: str | None, workers: int = 2, **env: str):
        self.port = free_port()
        self.log_path = log_path
        self.redis_url = redis_url
        extra = {"REDIS_URL": redis_url, **env} if redis_url else env
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port),
                 "--workers", str(workers), "--threads", "8"],
                cwd=ROOT, env=subprocess_env(**extra), stdout=log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        self.api = Api(self.url)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"cardroom serve exited with {self.proc.returncode}\n"
                                     + log_tail(self.log_path))
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"cardroom serve not healthy after {START_TIMEOUT:.0f} s\n"
                                     + log_tail(self.log_path))
            time.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.proc)

    def log(self) -> str:
        return log_tail(self.log_path)


@pytest.fixture(scope="session")
def integration_redis_url(redis_url):
    """DB ``CARDROOM_INTEGRATION_DB`` (default 14) of the tests' own Redis (``redis_url``),
    apart from the DB the other tests flush and run workers on."""
    return urlunsplit(urlsplit(redis_url)._replace(path=f"/{INTEGRATION_DB}"))


@pytest.fixture
def redis_db(integration_redis_url):
    """A client on the integration DB, flushed before the test (replies are bytes)."""
    client = redis.Redis.from_url(integration_redis_url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture(scope="session")
def live_server(integration_redis_url, tmp_path_factory):
    """``cardroom serve --workers 2`` on the integration DB (no job worker: start those)."""
    server = Server(tmp_path_factory.mktemp("serve") / "serve.log", integration_redis_url)
    yield server
    server.stop()


@pytest.fixture
def api(live_server, redis_db) -> Api:
    """The live server's client, on a freshly flushed DB."""
    return live_server.api


@pytest.fixture
def embedded_server(tmp_path):
    server = Server(tmp_path / "serve-embedded.log", None)
    yield server
    server.stop()


@pytest.fixture
def store(redis_db):
    from service.keys import Keys
    from service.store import EventStore

    return EventStore(redis_db, Keys.from_hex(*TEST_KEYS.values()))


def worker_logs(procs) -> str:
    return "\n".join(log_tail(p.log_path) for p in procs if hasattr(p, "log_path"))
