"""The ``cardroom`` command: ``cardroom serve``, ``cardroom worker`` and ``cardroom keys``.

``serve`` runs the Flask app under gunicorn. Without ``REDIS_URL`` (embedded
mode) it runs exactly one gunicorn worker process with threads, and that
process creates the fakeredis server, the app and the job worker thread
itself (no preload, so nothing is shared across a fork); its master ignores the
signals that would start a worker with a store of its own, and says that the tables are
lost when it replaces a worker that died (``EmbeddedArbiter``). With ``REDIS_URL`` it
runs ``--workers`` processes and no job thread: jobs go to separate ``cardroom worker``
processes, on ``RQ_REDIS_URL`` if set (required with ``REDIS_CLUSTER=true``;
``service.config`` says why).

Observability (``service.metrics``, ``service.logs``): ``serve`` gives its processes a
``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary one, removed at exit, unless set; a
given one is emptied of old samples first, and refused while another server uses it; as
it starts, it removes the temporary ones that servers killed at once left behind),
forgets a dead process's live gauges (gunicorn's ``child_exit``), and has each process
log JSON lines, one per request, in place of gunicorn's access log. ``worker`` never
writes to that directory; with ``CARDROOM_METRICS_PORT`` set it serves its own metrics on
that port.

Keys (``service.keys``): ``serve`` makes up the ones that are unset, once, for all
of its processes, and warns; a ``worker`` needs both from the environment, since it
must sign receipts with the API's key. ``keys`` prints a fresh pair to keep.
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import shutil
import stat
import sys
import tempfile
from contextlib import suppress
from dataclasses import replace
from functools import partial
from typing import Any, Callable
from urllib.parse import urlsplit

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from redis.exceptions import RedisClusterException, RedisError

from service.config import Config
from service.keys import KEYS_KEY, new_key_pair, publish_keys

KEY_VARIABLES = ("CARDROOM_SECRET_KEY", "CARDROOM_SIGNING_KEY")
METRICS_PREFIX = "cardroom-metrics-"  # of a metrics directory made up in the temporary one
MAKER = "server.pid"  # in such a directory: the pid of the server that made it
IN_USE = "server.lock"  # in a given directory: locked while a server uses it
_HELD: list = []  # that lock's file, open for this server's life (its processes share it)
WORKERS, THREADS = 2, 8  # gunicorn processes (with REDIS_URL) and threads per process


class Gunicorn(BaseApplication):
    """Runs the app that ``load`` makes, in each gunicorn worker process (preload_app is
    off, so nothing made there is shared across a fork), under an ``arbiter`` of that
    class."""

    def __init__(self, load: Callable[[], Any], options: dict,
                 arbiter: type[Arbiter] = Arbiter):
        self.load = load
        self.options = options
        self.arbiter = arbiter
        super().__init__()

    def run(self):
        """As ``BaseApplication.run``, with the arbiter's class given."""
        try:
            self.arbiter(self).run()
        except RuntimeError as error:
            print(f"\nError: {error}\n", file=sys.stderr)
            sys.stderr.flush()
            sys.exit(1)

    def load_config(self):
        for key, value in self.options.items():
            if key in self.cfg.settings:
                self.cfg.set(key, value)


class EmbeddedArbiter(Arbiter):
    """The embedded mode's gunicorn master. Its one worker process holds every table (the
    in-process fakeredis): it ignores, and says so, the signals that would replace that
    process by one with an empty store (SIGHUP, gunicorn's reload) or start another beside
    it with a store of its own (SIGTTIN, one worker more; SIGUSR2, a new master and its
    workers); and when that process died (killed, out of memory) and it boots another,
    it says that the tables are lost."""

    def spawn_worker(self):
        if self.worker_age:  # not the first: the one before has died
            self.log.warning("the worker process is gone and a new one starts with an empty "
                             "store: every table and hand of the embedded mode is lost")
        return super().spawn_worker()

    def _ignore(self, name: str, effect: str) -> None:
        self.log.warning("%s ignored in the embedded mode: the worker process holds every "
                         "table, and %s (stop and start the server to begin afresh)",
                         name, effect)

    def handle_hup(self):
        self._ignore("SIGHUP", "a reload would replace it by one with an empty store")

    def handle_ttin(self):
        self._ignore("SIGTTIN", "a second worker would hold tables of its own")

    def handle_usr2(self):
        self._ignore("SIGUSR2", "a new master's worker would hold tables of its own")


def host_and_port(host: str, port: int) -> str:
    """``host:port``, an IPv6 address such as ``::1`` in brackets (as gunicorn's bind and a
    URL need it: ``::1:8000`` is no address)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def gunicorn_options(host: str, port: int, workers: int, threads: int) -> dict:
    """The gunicorn settings of ``cardroom serve`` (``benchmarks/floor.py`` uses them too)."""
    return {
        "bind": host_and_port(host, port),
        "workers": workers,
        "worker_class": "service.refusals.ProblemThreadWorker",  # gthread, refusing in JSON
        "post_fork": "service.refusals.post_fork",  # see ProblemThreadWorker.init_signals
        "threads": threads,
        "preload_app": False,
        "control_socket_disable": True,  # gunicorn >= 25.1: one shared path otherwise
        "errorlog": "-",
        "logger_class": "service.logs.GunicornLogger",
        "accesslog": None,  # cardroom logs each request itself, as JSON (service.logs)
    }


def _load_cardroom(config: Config):
    from service import logs, metrics
    from service.app import create_app
    from service.backend import Backend

    logs.configure()
    backend = Backend.from_config(config)
    if backend.embedded:
        metrics.job_metrics()  # at zero until the job thread runs a job
        backend.start_worker_thread()
    return create_app(config, backend=backend)


def _publish_keys(config: Config, made_up: bool) -> None:
    """Once, before the workers fork: the keys' fingerprint that each ``cardroom worker``
    checks its own against (``service.keys``); not while Redis is down. Exit, saying why,
    if the given keys are not those of the pair published already."""
    from service.backend import connect

    with suppress(RedisClusterException, RedisError):
        client = connect(config.redis_url, cluster=config.redis_cluster, timeout=1, retries=0)
        try:
            wrong = publish_keys(client, config.keys())
        finally:
            client.close()
        if wrong and made_up:
            logging.getLogger("cardroom").warning(
                "the keys made up for this run are not those of the hands in this Redis: %s",
                wrong)
        elif wrong:
            raise SystemExit(f"cardroom: error: {wrong}. To start over with this pair, "
                             f"the hands stored so far unreadable, delete {KEYS_KEY} first")


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _share_keys(config: Config) -> Config:
    """Make up the unset keys once, here, so every process of this server shares them."""
    if config.secret_key and config.signing_key:
        return config
    secret_key, signing_key = new_key_pair()
    logging.getLogger("cardroom").warning(
        "CARDROOM_SECRET_KEY or CARDROOM_SIGNING_KEY is unset; made up keys for this run: "
        "receipts and tokens will not survive a restart, and separate `cardroom worker` "
        "processes cannot settle hands (set both; `cardroom keys` prints a pair)")
    config = replace(config, secret_key=config.secret_key or secret_key,
                     signing_key=config.signing_key or signing_key)
    os.environ.update(dict(zip(KEY_VARIABLES, (config.secret_key, config.signing_key))))
    return config


def _reach_cluster(parser: argparse.ArgumentParser, config: Config) -> None:
    """A Redis Cluster client asks a node for the cluster's map as it is made: with no
    node that answers as one, say so and exit (a plain Redis that is down is waited for,
    each request answered 503 meanwhile)."""
    from service.backend import connect

    try:
        connect(config.redis_url, cluster=True).close()
    except (RedisClusterException, RedisError) as error:
        parser.exit(2, f"cardroom: error: no Redis Cluster answers at "
                    f"{_redacted(config.redis_url)} (REDIS_CLUSTER=true): {error}\n")


def _refuse_a_cluster_node(parser: argparse.ArgumentParser, url: str, name: str,
                           instead: str) -> None:
    """Exit if ``url`` names a node of a Redis Cluster, where a plain client is answered
    MOVED for the keys of other nodes (RQ would fail at every job, for ever). A Redis that
    does not answer yet is waited for, as ever."""
    from service.backend import connect

    client = connect(url)
    try:
        clustered = client.info("cluster").get("cluster_enabled")
    except RedisError:
        return
    finally:
        client.close()
    if clustered:
        parser.exit(2, f"cardroom: error: {name} ({_redacted(url)}) is a node of a Redis "
                    f"Cluster: {instead}\n")


def print_keys() -> int:
    secret_key, signing_key = new_key_pair()
    print(f"{KEY_VARIABLES[0]}={secret_key}\n{KEY_VARIABLES[1]}={signing_key}")
    return 0


def serve(config: Config, workers: int, threads: int) -> int:
    from service import logs

    logs.configure()  # stderr is JSON lines from the first: the processes forked inherit it
    made_up = not (config.secret_key or config.signing_key)  # one given: the pair is not
    config = _share_keys(config)
    if config.embedded:
        workers = 1  # the fakeredis server lives in one process
        mode = "embedded mode (in-process fakeredis, jobs in a worker thread)"
    else:
        events = ("Redis Cluster at " if config.redis_cluster else "") + _redacted(config.redis_url)
        queue = f", jobs on {_redacted(config.rq_url)}" if config.rq_apart else ""
        mode = (f"redis mode ({events}{queue}, {workers} workers; "
                "run `cardroom worker` for jobs)")
        _publish_keys(config, made_up)
    banner = f"cardroom: {mode}, listening on http://{host_and_port(config.host, config.port)}"
    # Each open event stream holds a thread: CARDROOM_MAX_STREAMS more than --threads.
    options = {**gunicorn_options(config.host, config.port, workers, threads + config.max_streams),
               "child_exit": _forget_dead_process,
               "when_ready": lambda _: print(banner, flush=True)}  # once bound, not before
    metrics_dir, arbiter = _metrics_dir(), os.getpid()
    try:
        Gunicorn(partial(_load_cardroom, config), options,
                 EmbeddedArbiter if config.embedded else Arbiter).run()
    finally:
        # A worker, forked in run(), leaves through here too: only the arbiter cleans up.
        if metrics_dir and os.getpid() == arbiter:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def _metrics_dir() -> str | None:
    """Set up PROMETHEUS_MULTIPROC_DIR before any process of this server imports
    prometheus_client; the made-up directory to remove at exit, if any. A made-up one
    holds ``MAKER`` (this process's pid), by which a later server tells it is left over."""
    _remove_dead_servers_metrics()
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        os.makedirs(given, exist_ok=True)
        _hold(given)
        for name in os.listdir(given):
            if name.endswith(".db"):  # samples of an earlier run
                os.remove(os.path.join(given, name))
        return None
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = made = tempfile.mkdtemp(prefix=METRICS_PREFIX)
    marker = os.path.join(made, MAKER)
    with open(marker + ".new", "w") as new:
        new.write(str(os.getpid()))
    os.replace(marker + ".new", marker)  # whole or absent: a server starting meanwhile reads it
    return made


def _hold(directory: str) -> None:
    """Lock ``directory`` for this server (an ``flock``, let go as the last of its processes
    ends), or exit, saying why, if another server holds it: emptying it would take that
    server's live samples, and the two would report each other's."""
    held = open(os.path.join(directory, IN_USE), "a")
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.close()
        raise SystemExit(f"cardroom: error: PROMETHEUS_MULTIPROC_DIR {directory} is in use by "
                         "another cardroom serve; give each server a directory of its own, "
                         "or leave it unset for a fresh one") from None
    _HELD.append(held)


def _remove_dead_servers_metrics() -> None:
    """Remove the made-up metrics directories that servers killed at once (SIGKILL) left in
    the temporary directory: each ``METRICS_PREFIX*`` directory of ours (our uid, not a
    link) whose ``MAKER`` names a process that is gone, or this one (which has made none
    yet: a server before it had its pid, as a container's first process has after a
    restart). One without that file, or naming another live process, stays: a server still
    running, or one starting. A dead server's pid taken since by another process keeps its
    directory until that one ends too (at worst a leftover, never a live server's loss).
    Pids are this machine's: the temporary directory must not be shared with servers in
    another pid namespace (another container's)."""
    temp = tempfile.gettempdir()
    for name in os.listdir(temp):
        path = os.path.join(temp, name)
        if name.startswith(METRICS_PREFIX) and _made_by_a_dead_server(path):
            shutil.rmtree(path, ignore_errors=True)


def _made_by_a_dead_server(path: str) -> bool:
    """Whether ``path`` is a directory of ours whose ``MAKER`` names a process now gone, or
    this one."""
    try:
        status = os.lstat(path)
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
            return False
        with open(os.path.join(path, MAKER)) as marker:
            pid = int(marker.read())
    except (OSError, ValueError):  # gone meanwhile, no marker, not a pid
        return False
    if pid <= 0:  # os.kill would ask about a group of processes
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only whether it exists
    except ProcessLookupError:
        return True
    except PermissionError:  # it does, another user's
        pass
    return False


def _forget_dead_process(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def _tcp_port(raw: str) -> int:
    """``--port``: a TCP port, 1 to 65535, as ``PORT`` must be (gunicorn fails on any other
    with a traceback, or binds a random port for 0)."""
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        raise argparse.ArgumentTypeError(f"must be a TCP port, 1 to 65535, got {raw!r}")
    return int(raw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardroom", description="cardroom card-game service")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="run the HTTP API under gunicorn")
    serve_cmd.add_argument("--host", help="bind address (env HOST, default 127.0.0.1)")
    serve_cmd.add_argument("--port", type=_tcp_port, help="port (env PORT, default 8000)")
    serve_cmd.add_argument("--workers", type=int, default=WORKERS,
                           help=f"processes with REDIS_URL (default {WORKERS})")
    serve_cmd.add_argument("--threads", type=int, default=THREADS,
                           help=f"threads per process (default {THREADS}), and "
                           "CARDROOM_MAX_STREAMS more for event streams")
    commands.add_parser("worker", help="run an RQ worker on REDIS_URL")
    commands.add_parser("keys", help="print a fresh CARDROOM_SECRET_KEY and CARDROOM_SIGNING_KEY")
    args = parser.parse_args(argv)

    if args.command == "keys":
        return print_keys()
    try:
        config = Config.from_env()
    except ValueError as exc:  # a setting, not the command line: one line, without the usage
        parser.exit(2, f"cardroom: error: {exc}\n")
    if config.redis_cluster:
        _reach_cluster(parser, config)
    elif config.redis_url:
        _refuse_a_cluster_node(parser, config.redis_url, "REDIS_URL", "set REDIS_CLUSTER=true")
    if config.redis_url and config.rq_apart:
        _refuse_a_cluster_node(parser, config.rq_url, "RQ_REDIS_URL", "the job queue needs a "
                               "plain Redis of its own (RQ does not support Redis Cluster)")
    if args.command == "worker":
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)  # its metrics are its own
        from service.worker import run_worker

        if not config.redis_url:
            parser.exit(2, "cardroom: error: cardroom worker needs REDIS_URL (e.g. "
                        "redis://127.0.0.1:6379/0); without it, `cardroom serve` runs jobs in "
                        "an embedded worker thread\n")
        if not (config.secret_key and config.signing_key):
            parser.exit(2, "cardroom: error: cardroom worker needs CARDROOM_SECRET_KEY and "
                        "CARDROOM_SIGNING_KEY, the same as the API's (`cardroom keys` prints "
                        "a pair)\n")
        return run_worker(config, metrics_port=config.metrics_port)
    if args.host:
        config = replace(config, host=args.host)
    if args.port is not None:
        config = replace(config, port=args.port)
    return serve(config, max(1, args.workers), max(1, args.threads))


if __name__ == "__main__":
    sys.exit(main())
