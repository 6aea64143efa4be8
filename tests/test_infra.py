"""Tests of the running infrastructure: config, backends, workers, ``cardroom serve``."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import pytest
import rq

from service import jobs
from service.backend import Backend
from service.config import Config
from tests.processes import ROOT, banner, free_port, subprocess_env

WAIT = 20.0  # generous bound for anything asynchronous; never asserted as a timing


def set_key(key: str, value: str) -> str:
    """A job: write ``key`` through the job's own connection."""
    rq.get_current_job().connection.set(key, value)
    return value


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    """Signal ``proc`` and return its exit code (killed if it outlives WAIT)."""
    proc.send_signal(sig)
    try:
        return proc.wait(WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"process ignored signal {sig}: {proc.log_path.read_text()}")


def wait_for(predicate, timeout: float = WAIT, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def sweeper_calls(monkeypatch):
    """Record calls to ``service.jobs.enqueue_owed_jobs``."""
    calls = []

    def fake_enqueue_owed_jobs(backend):
        calls.append(backend)
        return 0

    monkeypatch.setattr(jobs, "enqueue_owed_jobs", fake_enqueue_owed_jobs)
    return calls


# --- config ------------------------------------------------------------------

def test_config_defaults_to_embedded():
    config = Config.from_env({})
    assert config == Config()
    assert config.redis_url is None and config.embedded
    assert (config.host, config.port, config.queue_name) == ("127.0.0.1", 8000, "cardroom")
    assert config.owed_job_after == 10.0


def test_config_reads_environment():
    config = Config.from_env({
        "REDIS_URL": "redis://example:6380/2", "HOST": "0.0.0.0",
        "PORT": "9001", "CARDROOM_OWED_JOB_AFTER": "2.5",
    })
    assert config.redis_url == "redis://example:6380/2" and not config.embedded
    assert (config.host, config.port, config.owed_job_after) == ("0.0.0.0", 9001, 2.5)
    assert Config.from_env({"REDIS_URL": "", "PORT": ""}) == Config()


@pytest.mark.parametrize("name, raw", [("PORT", "soon"), ("CARDROOM_OWED_JOB_AFTER", "soon"),
                                       ("CARDROOM_OWED_JOB_AFTER", "nan"),
                                       ("CARDROOM_OWED_JOB_AFTER", "inf"),
                                       ("CARDROOM_SSE_HEARTBEAT", "inf"),
                                       ("CARDROOM_CLIENT_SILENCE", "0"),
                                       ("CARDROOM_TRUSTED_PROXIES", "-1"),
                                       ("CARDROOM_TRUSTED_PROXIES", "one")])
def test_config_rejects_bad_numbers(name, raw):
    with pytest.raises(ValueError, match=name):
        Config.from_env({name: raw})


@pytest.mark.parametrize("name, raw, says", [
    ("PORT", "1.5", "PORT must be a whole number, got '1.5'"),
    ("CARDROOM_TRUSTED_PROXIES", "1.5", "CARDROOM_TRUSTED_PROXIES must be a whole number"),
    ("CARDROOM_MAX_BODY_BYTES", "64k", "CARDROOM_MAX_BODY_BYTES must be a whole number"),
    ("CARDROOM_ARCHIVE_AFTER", "1d", "CARDROOM_ARCHIVE_AFTER must be a number, got '1d'"),
])
def test_config_says_which_kind_of_number_it_takes(name, raw, says):
    with pytest.raises(ValueError) as refused:
        Config.from_env({name: raw})
    assert str(refused.value).startswith(says)


@pytest.mark.parametrize("name, raw", [("REDIS_URL", "redis://127.0.0.1:notaport/0"),
                                       ("REDIS_URL", "http://127.0.0.1:6379/0"),
                                       ("RQ_REDIS_URL", "redis://h:99999/0"),
                                       ("PORT", "99999"), ("PORT", "0")])
def test_config_rejects_what_cannot_be_connected_to(name, raw):
    with pytest.raises(ValueError, match=name):
        Config.from_env({"REDIS_URL": "redis://127.0.0.1:6379/0", name: raw})


@pytest.mark.parametrize("port", ["99999", "0", "-5", "http", "\u00b2"])
def test_serve_refuses_a_port_option_that_is_no_tcp_port(port, capsys, monkeypatch):
    from service import cli

    monkeypatch.setattr(cli, "serve", lambda *args: pytest.fail(f"served on port {port}"))
    for name in ("REDIS_URL", "REDIS_CLUSTER", "RQ_REDIS_URL", "PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--port", port])
    assert exited.value.code == 2
    error = capsys.readouterr().err  # argparse's usage, and one line: no traceback
    assert f"argument --port: must be a TCP port, 1 to 65535, got '{port}'" in error


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "::"])
def test_serve_binds_an_ipv6_host_in_brackets(host):
    from gunicorn.config import Config as GunicornConfig

    from service.cli import gunicorn_options

    config = GunicornConfig()
    config.set("bind", gunicorn_options(host, 8000, 1, 1)["bind"])
    assert config.address == [(host, 8000)]  # of ::1:8000, gunicorn says '' is no port


@pytest.mark.parametrize("command, environ, says", [
    ("serve", {"CARDROOM_RATE_LIMIT": "lots"}, "CARDROOM_RATE_LIMIT must be N/S"),
    ("worker", {"CARDROOM_ARCHIVE_AFTER": "1h"}, "CARDROOM_ARCHIVE_AFTER must be a number"),
    ("worker", {"REDIS_URL": "redis://127.0.0.1:1/0"}, "cardroom worker needs CARDROOM_SECRET"),
    ("worker", {}, "cardroom worker needs REDIS_URL"),
])
def test_a_bad_setting_stops_cardroom_in_one_line(command, environ, says, capsys, monkeypatch):
    from service import cli

    monkeypatch.setattr(cli, "serve", lambda *args: pytest.fail("served"))
    monkeypatch.setattr(cli, "_refuse_a_cluster_node", lambda *args: None)
    for name in ("REDIS_URL", "REDIS_CLUSTER", "RQ_REDIS_URL", *cli.KEY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exited:
        cli.main([command])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"cardroom: error: {says}") and error.count("\n") == 1, error


# --- embedded backend --------------------------------------------------------

def test_embedded_backend_runs_lua_and_returns_bytes(fake_backend):
    assert fake_backend.embedded and fake_backend.ping()
    assert fake_backend.redis.eval("return 1", 0) == 1
    fake_backend.redis.set("k", "v")
    assert fake_backend.redis.get("k") == b"v"  # decode_responses=False
    assert fake_backend.queue.name == "cardroom"


def test_embedded_jobs_keep_to_a_server_apart_from_the_events(fake_backend, client):
    """So that RQ's commands of a job never wait behind a request's script (a fakeredis
    server runs each under its one lock); the showdown still settles through the app."""
    from tests.test_testhooks import _a_hand_at_its_showdown

    hand_path, admin = _a_hand_at_its_showdown(client)
    assert fake_backend.run_jobs(), "no showdown job was queued"
    assert client.get(hand_path, headers=admin).get_json()["status"] == "ended"
    assert fake_backend.rq.keys("rq:job:*"), "the job left no record on the queue's server"
    assert not fake_backend.redis.keys("rq:*")


def test_embedded_backends_do_not_share_data(fake_backend):
    other = Backend.from_config(Config())
    fake_backend.redis.set("mine", "1")
    assert other.redis.get("mine") is None


def test_run_jobs_drains_the_queue_in_the_calling_thread(fake_backend):
    assert fake_backend.run_jobs() is False
    for i in range(3):
        fake_backend.queue.enqueue(set_key, f"k{i}", str(i))
    assert fake_backend.run_jobs() is True
    assert [fake_backend.rq.get(f"k{i}") for i in range(3)] == [b"0", b"1", b"2"]
    assert fake_backend.queue.count == 0


def test_worker_thread_runs_jobs_and_sweeps(fake_backend, sweeper_calls):
    thread = fake_backend.start_worker_thread()
    job = fake_backend.queue.enqueue(set_key, "done", "yes")
    wait_for(lambda: fake_backend.rq.get("done") == b"yes", what="the job")
    wait_for(lambda: sweeper_calls, what="enqueue_owed_jobs")
    assert sweeper_calls[0] is fake_backend
    wait_for(lambda: job.get_status(refresh=True) == "finished", what="the job to finish")
    fake_backend.stop_worker_thread()
    assert not thread.is_alive()


def test_worker_thread_survives_a_failing_sweeper(fake_backend, sweeper_calls, monkeypatch):
    def broken(backend):
        sweeper_calls.append(backend)
        raise RuntimeError("sweeper broke")

    monkeypatch.setattr(jobs, "enqueue_owed_jobs", broken)
    fake_backend.start_worker_thread()
    wait_for(lambda: sweeper_calls, what="the failing sweep")
    fake_backend.queue.enqueue(set_key, "after", "ok")
    wait_for(lambda: fake_backend.rq.get("after") == b"ok", what="the job")


def test_an_embedded_sweep_logs_an_outage_of_its_events_once_and_once_as_it_ends(
        fake_backend, caplog):
    """No RQ loop watches a Redis there: the sweep reports it (its queue's server answers)."""
    events = fake_backend.redis.connection_pool.connection_kwargs["server"]
    events.connected = False  # fakeredis's outage
    for _ in range(3):
        fake_backend.sweep()
    events.connected = True
    for _ in range(2):
        fake_backend.sweep()
    said = [r.getMessage() for r in caplog.records if r.name == "service.backend"]
    assert len(said) == 2 and said[0].startswith("the event store is unavailable"), said
    assert said[1] == "the event store answers again", said


# --- cardroom worker ---------------------------------------------------------

def test_worker_command_requires_redis_url(cardroom_process):
    proc = cardroom_process("worker")
    assert proc.wait(WAIT) != 0
    assert "REDIS_URL" in proc.log_path.read_text()


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_redis_cluster_that_does_not_answer_is_one_clear_line_and_exit_2(
        cardroom_process, command):
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    proc = cardroom_process(command, REDIS_CLUSTER="true", REDIS_URL=nowhere,
                            RQ_REDIS_URL=nowhere, CARDROOM_SECRET_KEY="11" * 32,
                            CARDROOM_SIGNING_KEY="22" * 32)
    assert proc.wait(WAIT) == 2
    log = proc.log_path.read_text()
    assert f"no Redis Cluster answers at {nowhere}" in log and "Traceback" not in log


@pytest.mark.redis
def test_a_worker_s_showdown_jobs_use_the_configuration_it_started_with(real_backend,
                                                                        monkeypatch):
    """Not one read from the environment at every job (``jobs.run_in_worker``)."""
    from service.app import create_app
    from service.backend import connect
    from service.worker import _Worker
    from tests.test_testhooks import _a_hand_at_its_showdown

    client = create_app(backend=real_backend).test_client()
    hand_path, admin = _a_hand_at_its_showdown(client)
    connection = connect(real_backend.config.rq_url)
    jobs.run_in_worker(real_backend.config, connection)
    monkeypatch.setattr(Config, "from_env", lambda *args: pytest.fail("read the environment"))
    assert _Worker([real_backend.queue.name], connection=connection).work(burst=True)
    assert client.get(hand_path, headers=admin).get_json()["status"] == "ended"


@pytest.mark.redis
def test_real_worker_runs_jobs_and_stops_on_sigterm(real_backend, redis_url, worker_process):
    (proc,) = worker_process(redis_url)
    job = real_backend.queue.enqueue(set_key, "real", "yes")
    wait_for(lambda: real_backend.redis.get("real") == b"yes", what="the worker to run the job")
    wait_for(lambda: job.get_status(refresh=True) == "finished", what="the job to finish")
    assert stop(proc, signal.SIGTERM) == 0, proc.log_path.read_text()


@pytest.mark.redis
def test_real_workers_share_the_queue_and_die_on_sigkill(real_backend, redis_url, worker_process):
    procs = worker_process(redis_url, count=2)
    for i in range(10):
        real_backend.queue.enqueue(set_key, f"n{i}", str(i))
    wait_for(lambda: all(real_backend.redis.get(f"n{i}") for i in range(10)), what="10 jobs")
    for proc in procs:
        assert stop(proc, signal.SIGKILL) == -signal.SIGKILL


# --- cardroom serve ----------------------------------------------------------


def _healthz(base: str) -> int | None:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
            return response.status
    except OSError:
        return None


def _check_serve(cardroom_process, tmp_path, mode: str, *args: str, **env: str):
    """``cardroom serve`` answers /healthz, says its mode, and stops on SIGTERM."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = cardroom_process("serve", "--port", str(port), *args, cwd=tmp_path, **env)
    wait_for(lambda: _healthz(base) == 200 or proc.poll() is not None, what="/healthz")
    assert proc.poll() is None, proc.log_path.read_text()
    said = banner(proc.log_path.read_text())
    assert mode in said and f"listening on {base}" in said
    assert stop(proc, signal.SIGTERM) == 0, proc.log_path.read_text()


def test_serve_says_it_listens_only_once_it_does(cardroom_process, tmp_path):
    """On a port another server holds, gunicorn retries for a few seconds and gives up:
    ``cardroom serve`` never says it is listening there."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = cardroom_process("serve", "--port", str(port), cwd=tmp_path)
        assert proc.wait(timeout=60) != 0
    log = proc.log_path.read_text()
    assert "Connection in use" in log and "listening on" not in log, log


def test_serve_embedded_answers_healthz(cardroom_process, tmp_path):
    _check_serve(cardroom_process, tmp_path, "embedded mode")


_BOOTING_WORKER = """
import os, queue, signal, sys
from types import SimpleNamespace
from gunicorn.config import Config
from gunicorn.glogging import Logger
from service import live
from service.refusals import ProblemThreadWorker, post_fork

config = Config()
worker = ProblemThreadWorker(1, os.getppid(), [], None, 30, config, Logger(config))
worker.PIPE = os.pipe()  # what init_process makes before it calls init_signals
os.set_blocking(worker.PIPE[1], False)
worker.tpool = worker.get_thread_pool()
worker.method_queue.init()
arbiter = SimpleNamespace(SIG_QUEUE=queue.SimpleQueue())
post_fork(arbiter, worker)
arbiter.SIG_QUEUE.put_nowait(int(sys.argv[1]))  # caught by the arbiter's handler it still has
worker.init_signals()
print("served on" if worker.alive else "stopping", live.STOPPING.is_set())
"""


@pytest.mark.parametrize("sig, says", [(signal.SIGTERM, "stopping True"), (signal.SIGINT, "")],
                         ids=["TERM", "INT"])
def test_a_worker_stopped_as_it_boots_stops(sig, says):
    """A gunicorn worker keeps its arbiter's signal handlers from its fork until its own are
    set (``init_signals``): a stop signal caught then is queued where nobody reads it, and
    the worker served on while its arbiter waited 30 s to kill it. It is now sent again to
    the worker's handlers: SIGTERM stops it gracefully, SIGINT at once (exit 0)."""
    ran = subprocess.run([sys.executable, "-c", _BOOTING_WORKER, str(int(sig))], cwd=ROOT,
                         env=subprocess_env(), capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout.strip()) == (0, says), ran.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_serve_stops_within_seconds_with_an_event_stream_open(cardroom_process, tmp_path,
                                                              sig):
    """A stream of a hand under way ends as its process begins to stop: the server stops well
    within ``docker stop``'s 10 s, not at gunicorn's graceful timeout (30 s). So on Ctrl-C
    (SIGINT; gunicorn sends its workers SIGQUIT), whose worker exits at once but whose
    interpreter still waits for its request threads: not killed after 30 s."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = cardroom_process("serve", "--port", str(port), cwd=tmp_path)
    wait_for(lambda: _healthz(base) == 200 or proc.poll() is not None, what="/healthz")

    def post(path: str, body: dict, token: str | None = None) -> dict:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(f"{base}{path}", json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return json.load(response)

    table = post("/v1/tables", {"game": "five-card-draw"})
    players = [post(f"/v1/tables/{table['table_id']}/players", {"name": name, "buy_in": 1000})
               for name in ("ann", "bob")]
    hand = post(f"/v1/tables/{table['table_id']}/hands", {}, table["admin_token"])
    stream = urllib.request.urlopen(urllib.request.Request(
        f"{base}/v1/tables/{table['table_id']}/hands/{hand['hand_no']}/events/stream",
        headers={"Authorization": f"Bearer {players[0]['token']}"}), timeout=WAIT)
    try:
        assert stream.readline() == b": open\n"
        started = time.monotonic()
        assert stop(proc, sig) == 0, proc.log_path.read_text()
        assert time.monotonic() - started < 10, proc.log_path.read_text()
        assert "SIGKILL" not in proc.log_path.read_text()
    finally:
        stream.close()


def test_serve_embedded_keeps_its_tables_through_sighup_and_sigttin(cardroom_process, tmp_path):
    """In the embedded mode the one worker process holds every table: gunicorn's reload
    (SIGHUP) would replace it by one with an empty store, and SIGTTIN add a second worker
    with a store of its own. The master ignores both, and says why."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = cardroom_process("serve", "--port", str(port), cwd=tmp_path)
    wait_for(lambda: _healthz(base) == 200 or proc.poll() is not None, what="/healthz")
    request = urllib.request.Request(f"{base}/v1/tables", b'{"game": "five-card-draw"}',
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        table = json.load(response)

    for sig in (signal.SIGHUP, signal.SIGTTIN):
        proc.send_signal(sig)
    wait_for(lambda: "Handling signal: ttin" in proc.log_path.read_text(),
             what="the master to handle both signals")
    read = urllib.request.Request(f"{base}/v1/tables/{table['table_id']}",
                                  headers={"Authorization": f"Bearer {table['admin_token']}"})
    for _ in range(20):  # a worker booted meanwhile would answer 404: it holds no table
        with urllib.request.urlopen(read, timeout=WAIT) as response:
            assert response.status == 200
        time.sleep(0.1)
    log = proc.log_path.read_text()
    assert log.count("Booting worker") == 1 and log.count("ignored in the embedded mode") == 2, log
    assert stop(proc, signal.SIGTERM) == 0, proc.log_path.read_text()


def test_serve_embedded_says_its_tables_are_lost_when_its_worker_process_dies(
        cardroom_process, tmp_path):
    """gunicorn boots a new worker process in place of one that died (the kernel's
    out-of-memory killer, say); in the embedded mode its store is empty, and the log says
    so rather than only that a worker boots."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = cardroom_process("serve", "--port", str(port), cwd=tmp_path)
    wait_for(lambda: _healthz(base) == 200 or proc.poll() is not None, what="/healthz")
    (worker,) = re.findall(r"Booting worker with pid: (\d+)", proc.log_path.read_text())
    os.kill(int(worker), signal.SIGKILL)
    wait_for(lambda: _healthz(base) == 200 and "Booting worker" in proc.log_path.read_text()
             .split(f"pid: {worker}", 1)[1], what="a new worker process")
    lost = [line for line in proc.log_path.read_text().splitlines()
            if "every table and hand" in line]
    assert len(lost) == 1 and '"level":"WARNING"' in lost[0], proc.log_path.read_text()
    assert stop(proc, signal.SIGTERM) == 0, proc.log_path.read_text()


def test_serve_removes_the_metrics_directory_a_killed_server_left_not_a_running_one(
        cardroom_process, tmp_path):
    temp = tmp_path / "temp"  # the servers' TMPDIR, where each makes its metrics directory
    temp.mkdir()

    def serving() -> tuple[subprocess.Popen, str]:
        base = f"http://127.0.0.1:{free_port()}"
        proc = cardroom_process("serve", "--port", base.rsplit(":", 1)[1], cwd=tmp_path,
                                TMPDIR=str(temp))
        wait_for(lambda: _healthz(base) == 200 or proc.poll() is not None, what="/healthz")
        assert proc.poll() is None, proc.log_path.read_text()
        return proc, base

    def metrics_dirs() -> set[str]:
        return {path.name for path in temp.glob("cardroom-metrics-*")}

    killed, killed_base = serving()
    (left,) = metrics_dirs()
    assert stop(killed, signal.SIGKILL) == -signal.SIGKILL
    wait_for(lambda: _healthz(killed_base) is None, what="its orphaned worker to leave")
    assert metrics_dirs() == {left}, "SIGKILL gave it no chance to remove its own"
    running, _ = serving()
    assert left not in metrics_dirs(), "the next server left the killed one's directory"
    (made,) = metrics_dirs()
    second, _ = serving()
    assert made in metrics_dirs() and len(metrics_dirs()) == 2
    assert stop(running, signal.SIGTERM) == 0 and stop(second, signal.SIGTERM) == 0
    assert not metrics_dirs()


# Requests gunicorn cannot parse, so refuses before the app sees them
UNREADABLE = [
    (b"GET /v1/games HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
     431, "request_header_fields_too_large"),
    (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    (b"GET /v1/games HTTP/1.1\r\nHost: x\r\nX-A: b\r\n  folded\r\n\r\n", 400, "bad_request"),
    (b"POST /v1/tables HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_request"),
    (b"BLAH\r\n\r\n", 400, "bad_request"),
    (b"GET /v1/games HTTP/1.1\r\nHost: x\r\nAuthorization Bearer s3cret\r\n\r\n",
     400, "bad_request"),  # no colon: gunicorn's warning would quote the token
    (b"GET /v1/games HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 417,
     "expectation_failed"),
]
CHUNKED = b"Host: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
BAD_CHUNKS = [  # gunicorn parses the head; the app reads the body
    (b"POST /v1/tables HTTP/1.1\r\nContent-Type: application/json\r\n" + CHUNKED
     + b"\r\nzz\r\n{}\r\n0\r\n\r\n", 400, "bad_request"),
    (b"GET /v1/games HTTP/1.1\r\n" + CHUNKED + b"\r\n2\r\n{}XX0\r\n\r\n", 400, "bad_request"),
]


def _raw_exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(request)
        answer = b"".join(iter(lambda: sock.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def test_serve_answers_requests_it_cannot_parse_as_problems(cardroom_process, tmp_path):
    port = free_port()
    proc = cardroom_process("serve", "--port", str(port), cwd=tmp_path)
    wait_for(lambda: _healthz(f"http://127.0.0.1:{port}") == 200 or proc.poll() is not None,
             what="/healthz")
    for request, status, code in UNREADABLE + BAD_CHUNKS:
        answered, headers, body = _raw_exchange(port, request)
        problem = json.loads(body)
        assert (answered, problem["status"], problem["code"]) == (status, status, code)
        assert headers["content-type"] == "application/problem+json"
        assert problem["request_id"] == headers["x-request-id"]
        assert int(headers["content-length"]) == len(body)
    counted = Counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=WAIT) as scraped:
        text = scraped.read().decode()
    for line in text.splitlines():
        if line.startswith('cardroom_http_requests_total{') and 'route="unread"' in line:
            counted[re.search(r'status="(\d+)"', line)[1]] += float(line.split()[-1])
    assert counted == Counter(str(status) for _, status, _ in UNREADABLE)
    log = proc.log_path.read_text()
    assert stop(proc, signal.SIGTERM) == 0, log
    assert "s3cret" not in log and "Invalid request from ip=" in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    refused = [line for line in lines if line["message"].startswith("refused before the app")]
    assert [(line["status"], line["code"], line["remote_addr"]) for line in refused] == [
        (status, code, "127.0.0.1") for _, status, code in UNREADABLE]


@pytest.mark.redis
def test_serve_with_redis_answers_healthz(cardroom_process, tmp_path, redis_url):
    _check_serve(cardroom_process, tmp_path, "redis mode", "--workers", "2", REDIS_URL=redis_url)
