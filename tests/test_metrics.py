"""``GET /metrics`` through the Flask test client: requests by route and status, appends,
version conflicts, idempotent replays, showdown jobs, owed jobs and SSE streams open.

The metrics are process-wide counters shared by every test here, so each test compares
what it reads after its requests with what it read before them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from service import metrics
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.store import EventStore, NewEvent, StreamWrite, VersionConflict, table_stream
from tests.processes import free_port
from tests.test_api import act, hand_url, play_to_showdown, read, start_hand

HAND_ROUTE = "/v1/tables/<table_id>/hands/<int:hand_no>"


def scrape(client) -> dict[tuple[str, frozenset], float]:
    """Every sample of ``GET /metrics``: (name, labels) -> value."""
    response = client.get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(response.get_data(as_text=True))
            for sample in family.samples}


def value(samples, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_requests_are_counted_by_route_and_status_never_by_raw_path(client, table):
    hand_no = start_hand(client, table)
    other = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    labels = {"route": HAND_ROUTE, "method": "GET", "status": "200"}
    before = scrape(client)
    for _ in range(3):
        assert client.get(hand_url(table, hand_no), headers=table["admin"]).status_code == 200
    missing = client.get(f"/v1/tables/{other['table_id']}/hands/7",
                         headers={"Authorization": f"Bearer {other['admin_token']}"})
    assert missing.status_code == 404
    for path in ("/no/such/path", "/another/stray/path"):
        assert client.get(path).status_code == 404
    after = scrape(client)

    assert value(after, "cardroom_http_requests_total", **labels) - value(
        before, "cardroom_http_requests_total", **labels) == 3
    assert value(after, "cardroom_http_request_duration_seconds_count", **labels) - value(
        before, "cardroom_http_request_duration_seconds_count", **labels) == 3
    not_found = {**labels, "status": "404"}
    assert value(after, "cardroom_http_requests_total", **not_found) - value(
        before, "cardroom_http_requests_total", **not_found) == 1
    unmatched = {"route": "unmatched", "method": "GET", "status": "404"}
    assert value(after, "cardroom_http_requests_total", **unmatched) - value(
        before, "cardroom_http_requests_total", **unmatched) == 2
    routes = {dict(labels)["route"] for (name, labels) in after if name.startswith("cardroom_http")}
    assert not any(table["id"] in route or "stray" in route for route in routes), routes


def test_methods_outside_http_share_one_label_value(client):
    before = scrape(client)
    for method in ("BREW", "WHEN"):
        client.open("/v1/games", method=method)
    after = scrape(client)
    other = {"route": "unmatched", "method": "other", "status": "405"}
    assert value(after, "cardroom_http_requests_total", **other) - value(
        before, "cardroom_http_requests_total", **other) == 2


def test_appends_and_a_stale_expected_version_are_counted(client, table):
    hand_no = start_hand(client, table)
    version = read(client, table, hand_no)["version"]
    before = scrape(client)
    assert act(client, table, hand_no, 2, type="check", expected_version=version).status_code == 201
    stale = act(client, table, hand_no, 3, type="check", expected_version=version)
    assert stale.status_code == 409 and stale.json["code"] == "version_conflict"
    after = scrape(client)
    assert value(after, "cardroom_appends_total") - value(before, "cardroom_appends_total") == 1
    assert value(after, "cardroom_version_conflicts_total") - value(
        before, "cardroom_version_conflicts_total") == 1


def test_a_write_that_loses_its_race_at_the_store_is_a_version_conflict(fake_backend):
    store = EventStore(fake_backend.redis)
    stream = table_stream("race")
    store.append([StreamWrite(stream, 0, [NewEvent("Noted", {"n": 1})])], actor="a")
    before = REGISTRY.get_sample_value("cardroom_version_conflicts_total")
    with pytest.raises(VersionConflict):
        store.append([StreamWrite(stream, 0, [NewEvent("Noted", {"n": 2})])], actor="b")
    assert REGISTRY.get_sample_value("cardroom_version_conflicts_total") - before == 1


def test_an_idempotent_replay_is_counted_and_appends_nothing(client, table):
    hand_no = start_hand(client, table)
    headers = {**table["players"][2], "Idempotency-Key": "bet-once"}
    before = scrape(client)
    for _ in range(2):
        response = client.post(hand_url(table, hand_no, "/actions"),
                               json={"type": "bet", "amount": 25}, headers=headers)
        assert response.status_code == 201
    after = scrape(client)
    assert value(after, "cardroom_idempotent_replays_total") - value(
        before, "cardroom_idempotent_replays_total") == 1
    assert value(after, "cardroom_appends_total") - value(before, "cardroom_appends_total") == 1


def test_owed_jobs_are_read_from_redis_and_the_showdown_job_is_counted(client, fake_backend,
                                                                       table):
    hand_no = start_hand(client, table)
    play_to_showdown(client, table, hand_no)
    owed = scrape(client)
    assert read(client, table, hand_no)["status"] == "showdown_pending"
    assert value(owed, "cardroom_owed_jobs") == 1
    assert value(owed, "cardroom_store_up") == 1

    assert fake_backend.run_jobs()
    settled = scrape(client)
    assert read(client, table, hand_no)["status"] == "ended"
    assert value(settled, "cardroom_owed_jobs") == 0
    for name, labels in (("cardroom_showdown_jobs_total", {"outcome": "settled"}),
                         ("cardroom_showdown_job_duration_seconds_count", {}),
                         ("cardroom_showdown_job_age_seconds_count", {})):
        assert value(settled, name, **labels) - value(owed, name, **labels) == 1, name


def test_a_showdown_job_that_fails_is_counted_as_failed():
    failed = {"outcome": "failed"}
    before = REGISTRY.get_sample_value("cardroom_showdown_jobs_total", failed) or 0.0

    def broken() -> bool:
        raise RuntimeError("the hand cannot be read")
    with pytest.raises(RuntimeError):
        metrics.showdown_job(None, broken)
    assert REGISTRY.get_sample_value("cardroom_showdown_jobs_total", failed) - before == 1


def test_sse_streams_open_count_the_streams_until_they_close(client, table):
    def streams() -> float:
        return value(scrape(client), "cardroom_sse_streams_open")
    before = streams()
    path = hand_url(table, start_hand(client, table), "/events/stream")
    first, second = (client.get(path, headers=table["players"][seat], buffered=False)
                     for seat in (1, 2))
    assert streams() == before + 2
    first.close()
    assert streams() == before + 1
    second.close()
    assert streams() == before


def test_the_content_type_names_the_text_format_the_body_is_in(client):
    """The 0.0.4 text format, as a worker's metrics port says for the same body, not the
    1.0.0 that prometheus_client's CONTENT_TYPE_LATEST names in its newer versions."""
    response = client.get("/metrics")
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"


def test_a_worker_whose_metrics_port_is_taken_says_so_and_exits(cardroom_process):
    with socket.create_server(("127.0.0.1", 0)) as taken:  # by a worker started before
        port = taken.getsockname()[1]
        proc = cardroom_process("worker", REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
                                CARDROOM_METRICS_PORT=str(port))
        assert proc.wait(30) != 0
    said = proc.log_path.read_text()
    assert f"127.0.0.1:{port} (CARDROOM_METRICS_PORT)" in said and "Traceback" not in said, said


@pytest.mark.parametrize("raw, says", [("0", "be a TCP port"), ("65536", "be a TCP port"),
                                       ("nine", "be a whole number"), ("-1", "not be negative"),
                                       ("\u00b2", "be a whole number")])
def test_a_worker_s_metrics_port_that_is_no_port_is_refused_by_name(raw, says):
    with pytest.raises(ValueError, match=f"CARDROOM_METRICS_PORT must {says}"):
        Config.from_env({"CARDROOM_METRICS_PORT": raw})
    assert Config.from_env({"CARDROOM_METRICS_PORT": "9101"}).metrics_port == 9101
    assert Config.from_env({}).metrics_port is None


def test_metrics_are_answered_while_the_store_is_down():
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    client = create_app(backend=Backend.from_config(Config(redis_url=nowhere))).test_client()
    samples = scrape(client)
    assert value(samples, "cardroom_store_up") == 0
    assert ("cardroom_owed_jobs", frozenset()) not in samples


@pytest.fixture
def hung_redis():
    """The URL of a "Redis" that takes connections and never answers (a hung server), and
    the connections it has taken."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken = []

    def take():
        while True:
            try:
                taken.append(listener.accept()[0])
            except OSError:  # closed at teardown
                return

    threading.Thread(target=take, daemon=True).start()
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0", taken
    listener.close()
    for connection in taken:
        connection.close()


def test_a_hung_store_costs_a_scrape_one_short_wait(hung_redis):
    """The scrape asks once, on a client that waits ``QUICK_TIMEOUT`` (the events' client
    would ask twice, waiting ``READ_TIMEOUT`` each time: as long as a scrape may take)."""
    url, taken = hung_redis
    backend = Backend.from_config(Config(redis_url=url))
    samples = scrape(create_app(backend=backend).test_client())
    assert value(samples, "cardroom_store_up") == 0
    assert len(taken) == 1
    kwargs = backend.quick_redis().connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] <= 1 and kwargs["retry"].get_retries() == 0


def test_a_hung_store_fails_a_health_check_after_one_short_wait(hung_redis):
    """A load balancer's probe gets its 503 inside its time limit: one ask, on the client
    that waits ``QUICK_TIMEOUT``, not the events' two of ``READ_TIMEOUT`` each."""
    url, taken = hung_redis
    answer = create_app(backend=Backend.from_config(Config(redis_url=url))).test_client().get(
        "/healthz")
    assert answer.status_code == 503 and answer.json["code"] == "store_unavailable"
    assert len(taken) == 1


def test_serve_makes_a_fresh_metrics_directory_or_empties_the_one_given(monkeypatch, tmp_path):
    from service import cli

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    given = tmp_path / "given"
    given.mkdir()
    (given / "counter_123.db").write_bytes(b"an earlier run")
    (given / "notes.txt").write_text("not a sample")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(given))
    try:
        assert cli._metrics_dir() is None
        assert sorted(p.name for p in given.iterdir()) == ["notes.txt", cli.IN_USE]
        (given / "counter_456.db").write_bytes(b"this server's")
        with pytest.raises(SystemExit, match="in use by another cardroom serve"):
            cli._metrics_dir()  # a second server given it: its samples are left alone
        assert (given / "counter_456.db").exists()
    finally:
        for held in cli._HELD:
            held.close()
        cli._HELD.clear()
    assert cli._metrics_dir() is None  # let go
    cli._HELD.pop().close()

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")  # restored to unset after the test
    made = cli._metrics_dir()
    assert made and os.environ["PROMETHEUS_MULTIPROC_DIR"] == made
    assert os.path.dirname(made) == str(tmp_path / "temp")
    assert os.listdir(made) == [cli.MAKER]  # no samples yet; who made it
    assert open(os.path.join(made, cli.MAKER)).read() == str(os.getpid())


def test_serve_removes_the_metrics_directories_dead_servers_left_and_no_other(
        monkeypatch, tmp_path):
    """Each names its maker's pid (``cli.MAKER``): a live server's stays, and so does what
    cardroom did not make, or made for another user."""
    from service import cli

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    def made_by(name: str, pid: int | None) -> str:
        (tmp_path / name).mkdir()
        if pid is not None:
            (tmp_path / name / cli.MAKER).write_text(str(pid))
        return name
    try:
        dead = {made_by("cardroom-metrics-dead", gone.pid),
                made_by("cardroom-metrics-mine-before", os.getpid())}  # a restarted container's
        kept = {made_by("cardroom-metrics-live", alive.pid),
                made_by("cardroom-metrics-unmarked", None),
                made_by("not-cardroom-metrics-dead", gone.pid)}
        (tmp_path / "cardroom-metrics-link").symlink_to(tmp_path / "not-cardroom-metrics-dead")
        kept.add("cardroom-metrics-link")
        with monkeypatch.context() as someone_else:
            someone_else.setattr(os, "getuid", lambda: os.stat(tmp_path).st_uid + 1)
            cli._remove_dead_servers_metrics()
        assert {p.name for p in tmp_path.iterdir()} == dead | kept, "another user's removed"
        made = os.path.basename(cli._metrics_dir())
        assert {p.name for p in tmp_path.iterdir()} == kept | {made}
        assert (tmp_path / "not-cardroom-metrics-dead" / cli.MAKER).exists()
    finally:
        alive.kill()
        alive.wait()
