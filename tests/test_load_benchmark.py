"""``benchmarks/load.py``'s own work, without a cardroom to load: what it makes of servers
that are not there or not what it was told, and how its phases start and count."""

from __future__ import annotations

import http.server
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from benchmarks import load
from tests.processes import ROOT, free_port


@pytest.fixture
def answering():
    """A loopback HTTP server answering ``/ok`` and ``/healthz`` 200, ``/once`` 200 the
    first time and 500 after, anything else 404; its base URL."""
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            if self.path == "/once":
                self.send_response(200 if asked.count("/once") == 1 else 500)
            else:
                self.send_response(200 if self.path in ("/ok", "/healthz") else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_server_that_answers_200_is_taken(answering):
    assert load.awaited_answer(answering + "/ok", "", 1) is None
    assert load.awaited_answer(answering, "/ok", 1) is None


def test_a_server_that_answers_otherwise_is_refused_at_once(answering):
    assert "answers 404" in load.awaited_answer(answering + "/nope", "/healthz", 30)


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "https://127.0.0.1", "http://:80",
                                 "http://127.0.0.1:99999", "http://127.0.0.1:port"])
def test_a_url_it_cannot_use_is_refused(url):
    assert "is not an http://HOST[:PORT] URL" in load.awaited_answer(url, "", 1)


def test_a_server_not_listening_is_waited_for_then_refused(capsys):
    why = load.awaited_answer(f"http://127.0.0.1:{free_port()}", "/healthz", 0.5)
    assert "does not answer" in why and "after 0.5 s" in why
    assert "waiting up to 0.5 s" in capsys.readouterr().out


def test_main_exits_with_a_message_when_the_api_does_not_answer(monkeypatch, capsys):
    monkeypatch.setattr(load, "SERVER_WAIT", 0.3)
    with pytest.raises(SystemExit) as exit:
        load.main([f"http://127.0.0.1:{free_port()}", "--seconds", "0.2",
                   "--probes", "none"])
    assert exit.value.code == 2
    assert "does not answer" in capsys.readouterr().err


def test_main_exits_with_a_message_when_the_floor_does_not_answer(
        answering, monkeypatch, capsys):
    monkeypatch.setattr(load, "SERVER_WAIT", 0.3)
    with pytest.raises(SystemExit) as exit:
        load.main([answering, "--floor", answering + "/floor", "--seconds", "0.2"])
    assert exit.value.code == 2
    assert "GET /floor" in capsys.readouterr().err


def test_no_slot_starts_before_every_process_is_set_up(monkeypatch):
    """A phase's window starts once every slot of every client process is set up (the
    action probe first starts its hands): a slot that went as soon as its own process was
    ready would add requests made before the window to the window's rate."""
    context = load.multiprocessing.get_context("fork")
    arrived = context.Value("i", 0)

    def slot(base_url, floor_url, seconds, out):
        with arrived.get_lock():
            first, arrived.value = arrived.value == 0, arrived.value + 1
        load.time.sleep(0.5 if first else 0)  # the first slot's setup is slow
        out["ready"]()
        began = load.time.monotonic()
        return {"samples": [("probe", began, began, 200)]}

    monkeypatch.setitem(load.SLOTS, "probe", slot)
    args = load.argparse.Namespace(base_url="http://127.0.0.1:1", floor=None, tables=4,
                                   processes=2, servers={})
    phase = load.run_phase("probe", args, 0.1)
    began = [s[1] for o in phase.outputs for s in o["samples"]]
    assert len(began) == 4
    assert min(began) >= phase.start - 0.05


def test_ctrl_c_stops_every_process_with_one_line(answering):
    """Ctrl-C (SIGINT to the terminal's whole process group) in the middle of a phase: one
    line, exit 130, no traceback from the client processes, none of them left."""
    run = subprocess.Popen(
        [sys.executable, "benchmarks/load.py", answering, "--tables", "2", "--seconds", "60",
         "--uneven"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert run.stdout.readline().startswith("pids:")
        time.sleep(1)  # the load phase is under way
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=20)
    finally:
        run.kill()
    assert run.returncode == 130
    assert err == "load.py: interrupted\n"
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.killpg(run.pid, 0)


def test_a_redis_url_that_finds_no_process_is_said(answering, capsys):
    load.main([answering, "--seconds", "0.2", "--probes", "none", "--uneven",
               "--redis-url", f"redis://127.0.0.1:{free_port()}/0"])
    assert "no workers nor redis process found" in capsys.readouterr().out


def test_requests_per_hand_are_those_of_the_hands_that_ended(monkeypatch):
    """A hand cut off by an error (or the deadline) leaves its requests out: counted, they
    would lower the goal, 0.5 x floor / requests per hand, and flatter the run."""
    plays = iter([(5, False), (30, True), (3, False), (34, True)])

    def play_hand(client, showdowns, deadline):
        made, ended = next(plays, (0, False))
        client.samples.extend([("setup", 0.0, 0.0, 503 if not ended else 201)] * made)
        if not made:
            load.time.sleep(max(0, deadline - load.time.monotonic()))
        return ended

    monkeypatch.setattr(load, "play_hand", play_hand)
    out = load.load_slot("http://127.0.0.1:1", None, 0.5, {"ready": lambda: None})
    assert len(out["samples"]) == 72
    assert load.requests_per_hand([out, {"hands": []}]) == 32
    assert math.isnan(load.requests_per_hand([{"hands": []}]))


def test_a_floor_that_fails_once_measured_gives_no_ratios(answering, capsys):
    code = load.main([answering, "--floor", answering + "/once", "--tables", "2",
                      "--seconds", "0.2", "--probe-seconds", "0.2", "--probe-hands", "1",
                      "--uneven"])
    assert code == 1
    assert "none of its requests succeeded" in capsys.readouterr().err
