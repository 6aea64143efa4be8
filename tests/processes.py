"""Helpers for tests that run ``cardroom`` (and ``redis-server``) as real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
# Settings that must not leak from the test run into a process unless a test asks for them.
_PRIVATE = ("REDIS_URL", "REDIS_CLUSTER", "RQ_REDIS_URL", "CARDROOM_TEST_SHOWDOWN_PAUSE",
            "CARDROOM_OWED_JOB_AFTER", "CARDROOM_MAX_BODY_BYTES", "CARDROOM_SECRET_KEY",
            "CARDROOM_SIGNING_KEY", "CARDROOM_RATE_LIMIT", "CARDROOM_TABLE_RATE_LIMIT",
            "CARDROOM_MAX_STREAMS", "CARDROOM_MAX_STREAMS_PER_ADDRESS", "CARDROOM_SSE_HEARTBEAT",
            "PROMETHEUS_MULTIPROC_DIR", "CARDROOM_METRICS_PORT", "CARDROOM_ARCHIVE_AFTER",
            "CARDROOM_CLIENT_SILENCE", "CARDROOM_TRUSTED_PROXIES")
# The keys every test process shares (an API and its workers must agree on them).
TEST_KEYS = {"CARDROOM_SECRET_KEY": "5e" * 32, "CARDROOM_SIGNING_KEY": "a1" * 32}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_cluster_port() -> int:
    """A free port P for a cluster node: P + 10000 (its cluster bus) is free too, so P is
    at most 55535."""
    while True:
        port = free_port()
        if port > 55535:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def logged(output: str, logger: str | None = None) -> list[str]:
    """The messages of ``logger`` (of every logger by default) among a process's JSON log
    lines (``service.logs``); a last line still being written is left out."""
    lines = [json.loads(line) for line in output.split("\n")[:-1] if line.startswith("{")]
    return [line["message"] for line in lines if logger in (None, line["logger"])]


def banner(output: str) -> str:
    """The line ``cardroom serve`` prints once it listens (``cardroom: <mode>, listening
    on <url>``), among the lines of its output; "" before it is printed."""
    return next((line for line in output.splitlines() if line.startswith("cardroom: ")), "")


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


def redis_binary(name: str = "redis-server") -> str:
    """The ``redis-server`` (or ``redis-cli``) binary; without one the test is skipped
    (failed with CI=true)."""
    import pytest

    binary = shutil.which(name)
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no {name} binary (CI=true: real-Redis tests must run)")
        pytest.skip(f"no {name} binary to start a Redis of the test's own")
    return binary


class RedisServer:
    """A ``redis-server`` of the tests' own on a free loopback port, in ``workdir``.

    ``stop()`` and ``start()`` again keep the port (and, with ``persistent=True``, the data:
    append-only file fsynced at every write, so whatever Redis acknowledged survives)."""

    def __init__(self, binary: str, workdir: Path, *, persistent: bool = False,
                 options: tuple[str, ...] = ()):
        self.binary, self.workdir, self.persistent = binary, Path(workdir), persistent
        self.options = options  # more redis-server options, e.g. to join a cluster
        self.port = free_cluster_port() if "--cluster-enabled" in options else free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "redis.log"

    def start(self, timeout: float = 10.0) -> "RedisServer":
        persistence = (["--appendonly", "yes", "--appendfsync", "always"] if self.persistent
                       else ["--appendonly", "no"])
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 *persistence, "--dir", str(self.workdir), *self.options],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}; "
                                   f"see {self.log_path}")
            time.sleep(0.05)
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM (Redis closes its clients and the append-only file), then wait."""
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


class RedisCluster:
    """A Redis Cluster of the tests' own: ``masters`` ``redis-server`` nodes with
    ``--cluster-enabled yes`` on free loopback ports, each in a directory of its own under
    ``workdir``, joined by ``redis-cli --cluster create`` (no replicas). ``url`` names one
    node, as ``REDIS_URL`` does with ``REDIS_CLUSTER=true``."""

    def __init__(self, server_binary: str, cli_binary: str, workdir: Path, masters: int = 3):
        self.server, self.cli, self.workdir, self.masters = (server_binary, cli_binary,
                                                             Path(workdir), masters)
        self.nodes = self._new_nodes()

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def _new_nodes(self) -> list[RedisServer]:
        """Nodes on free ports, no node's port another's cluster bus port."""
        nodes, taken = [], set()
        while len(nodes) < self.masters:
            node_dir = self.workdir / f"node-{len(nodes)}"
            node_dir.mkdir(parents=True, exist_ok=True)
            (node_dir / "nodes.conf").unlink(missing_ok=True)  # a failed start's
            node = RedisServer(self.server, node_dir, options=(
                "--cluster-enabled", "yes", "--cluster-config-file", str(node_dir / "nodes.conf"),
                # a lost master fails the cluster in seconds (15 by default)
                "--cluster-node-timeout", "5000"))
            if not {node.port, node.port + 10000} & taken:
                taken |= {node.port, node.port + 10000}
                nodes.append(node)
        return nodes

    def _start_nodes(self, attempts: int = 3) -> None:
        """Start every node; when one finds its port taken meanwhile (by a connection's
        local port, say: free ports are only free when chosen), start anew on new ones."""
        for attempt in range(1, attempts + 1):
            try:
                for node in self.nodes:
                    node.start()
                return
            except RuntimeError:
                self.stop()
                if attempt == attempts:
                    raise
                self.nodes = self._new_nodes()

    def start(self, timeout: float = 30.0) -> "RedisCluster":
        try:
            self._start_nodes()
            created = subprocess.run(
                [self.cli, "--cluster", "create",
                 *(f"127.0.0.1:{node.port}" for node in self.nodes),
                 "--cluster-replicas", "0", "--cluster-yes"],
                capture_output=True, text=True, timeout=timeout)
            if created.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout}"
                                   f"{created.stderr}")
            deadline = time.monotonic() + timeout
            while not all(b"cluster_state:ok" in self.cli_reply(n, "CLUSTER", "INFO")
                          for n in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")
                time.sleep(0.1)
        except (subprocess.SubprocessError, RuntimeError) as error:
            self.stop()
            raise RuntimeError(f"could not start a Redis Cluster: {error}") from error
        return self

    def cli_reply(self, node: RedisServer, *command: str) -> bytes:
        return subprocess.run([self.cli, "-p", str(node.port), *command],
                              capture_output=True, timeout=10).stdout

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
