"""Helpers for tests that run ``cardroom`` as real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
# Settings that must not leak from the test run into a process unless a test asks for them.
_PRIVATE = ("REDIS_URL", "CARDROOM_SHOWDOWN_PAUSE", "CARDROOM_OWED_JOB_AFTER",
            "CARDROOM_SECRET_KEY", "CARDROOM_SIGNING_KEY")
# The keys every test process shares (an API and its workers must agree on them).
TEST_KEYS = {"CARDROOM_SECRET_KEY": "5e" * 32, "CARDROOM_SIGNING_KEY": "a1" * 32}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a ``cardroom`` subprocess: repo and tests importable."""
    env = {k: v for k, v in os.environ.items() if k not in _PRIVATE}
    paths = [str(ROOT), str(TESTS), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(TEST_KEYS)
    env.update(extra)
    return env


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
    """Send ``sig``, wait up to ``timeout`` seconds, then SIGKILL; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    return proc.returncode
