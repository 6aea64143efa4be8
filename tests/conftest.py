"""Shared fixtures: backends (embedded and real Redis), a Flask client, workers.

``redis_url`` is a Redis the tests own, which they flush at will: a throwaway
``redis-server`` they start on a free loopback port when the binary exists, else
``CARDROOM_TEST_REDIS_URL`` if it is set (a Redis given to the tests to flush);
never ``REDIS_URL`` or a default address. With neither, the tests that need it
are skipped, or fail when ``CI=true``. Every test that uses it (directly or
through ``real_backend`` / ``worker_process``) is marked ``redis``
automatically, so ``-m "not redis"`` deselects them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from service.backend import Backend
from service.config import Config
from tests.browser import cardroom_serve, chromium, require_chromium
from tests.processes import ROOT, RedisServer, stop_process, subprocess_env


def _answers(url: str) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        return bool(client.ping())
    except (redis.RedisError, OSError, ValueError):
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if "redis_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.redis)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    binary = shutil.which("redis-server")
    if binary is not None:
        try:
            server = RedisServer(binary, tmp_path_factory.mktemp("redis")).start()
        except RuntimeError as exc:
            pytest.fail(str(exc))
        yield server.url
        server.stop()
        return
    url = os.environ.get("CARDROOM_TEST_REDIS_URL")
    if url and _answers(url):
        yield url
        return
    reason = (f"CARDROOM_TEST_REDIS_URL={url} does not answer" if url else
              "no redis-server binary to start one, and no CARDROOM_TEST_REDIS_URL")
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true: real-Redis tests must run)")
    pytest.skip(reason)


@pytest.fixture
def fake_backend():
    """An embedded Backend on a fresh fakeredis server (no worker thread)."""
    backend = Backend.from_config(Config())
    yield backend
    backend.stop_worker_thread()


@pytest.fixture
def real_backend(redis_url):
    """A Backend on the real Redis, its database flushed before the test."""
    backend = Backend.from_config(Config(redis_url=redis_url))
    backend.redis.flushdb()
    yield backend
    backend.stop_worker_thread()
    backend.redis.close()


@pytest.fixture
def client(fake_backend):
    from service.app import create_app

    return create_app(backend=fake_backend).test_client()


@pytest.fixture
def table(client):
    return make_table(client)


def make_table(client) -> dict:
    """A five card draw table with three players: ids and ``Authorization`` headers."""
    def auth(token):
        return {"Authorization": f"Bearer {token}"}
    created = client.post("/v1/tables", json={"game": "five-card-draw", "max_seats": 4}).json
    players = {}
    for name in ("ann", "bob", "cy"):
        joined = client.post(f"/v1/tables/{created['table_id']}/players",
                             json={"name": name, "buy_in": 1000}).json
        players[joined["seat"]] = auth(joined["token"])
    return {"id": created["table_id"], "admin": auth(created["admin_token"]),
            "auditor": auth(created["auditor_token"]), "players": players}


@pytest.fixture
def cardroom_process(tmp_path):
    """Factory: ``cardroom_process(*args, cwd=None, **env)`` starts
    ``python -m service.cli *args`` (REDIS_URL unset unless given in ``env``)
    and returns its Popen, with ``.log_path`` holding its output. Every process
    still running at teardown is killed."""
    started: list[subprocess.Popen] = []

    def start(*args: str, cwd: Path | None = None, **env: str) -> subprocess.Popen:
        log_path = tmp_path / f"cardroom-{args[0]}-{len(started)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "service.cli", *args],
                cwd=cwd or ROOT, env=subprocess_env(**env),
                stdout=log, stderr=subprocess.STDOUT,
            )
        proc.log_path = log_path
        started.append(proc)
        return proc

    yield start
    for proc in started:
        stop_process(proc, signal.SIGKILL)


@pytest.fixture
def worker_process(cardroom_process):
    """Factory: ``worker_process(url, count=1, **env)`` starts real
    ``cardroom worker`` processes on ``url`` and returns their Popen objects
    (output in ``proc.log_path``); all are killed at teardown."""

    def start(url: str, count: int = 1, **env: str) -> list[subprocess.Popen]:
        return [cardroom_process("worker", REDIS_URL=url, **env) for _ in range(count)]

    return start


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """For a module of browser tests: ``cardroom serve`` in embedded mode on a free port,
    until the module's tests end."""
    require_chromium()
    with cardroom_serve(tmp_path_factory.mktemp("serve")) as base:
        yield base


@pytest.fixture(scope="module")
def browser(base_url):
    """Debian's Chromium, driven by Playwright, for a module of browser tests."""
    with chromium() as browser:
        yield browser
