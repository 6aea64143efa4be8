"""The request id (``X-Request-Id`` and ``request_id`` in every problem) and the JSON log
lines: one per request, with its fields and never a token; errors logged while a
request is answered carry its id."""

from __future__ import annotations

import io
import json
import logging

import pytest

from service import logs
from service.app import create_app
from service.backend import Backend
from service.config import Config
from tests.processes import free_port
from tests.test_api import hand_url, start_hand


@pytest.fixture
def log_lines():
    """The JSON lines the process logs (INFO and up) while the test runs, as a list."""
    stream = io.StringIO()
    handler = logs.json_handler(stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    lines: list[dict] = []

    def read() -> list[dict]:
        lines[:] = [json.loads(line) for line in stream.getvalue().splitlines()]
        return lines
    yield read
    root.removeHandler(handler)
    root.setLevel(level)


def test_every_answer_carries_a_request_id_equal_to_its_problems(client, table):
    answers = [client.get("/v1/games"),
               client.get("/no/such/path"),  # 404
               client.delete("/v1/games"),  # 405
               client.post("/v1/tables", json={"game": "go-fish"}),  # 422
               client.post("/v1/tables", data="{not json", content_type="application/json"),
               client.post("/v1/tables", data="x" * 70000, content_type="application/json"),
               client.get(f"/v1/tables/{table['id']}")]  # 401
    ids = [answer.headers["X-Request-Id"] for answer in answers]
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids), ids
    assert len(set(ids)) == len(ids), "request ids repeat"
    for answer in answers[1:]:
        assert answer.mimetype == "application/problem+json", answer.status_code
        assert answer.json["request_id"] == answer.headers["X-Request-Id"], answer.json
    assert [a.status_code for a in answers] == [200, 404, 405, 422, 400, 413, 401]


def test_an_unexpected_error_is_a_500_problem_with_the_request_id(client, fake_backend,
                                                                  monkeypatch, table):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr(client.application.extensions["cardroom"], "table", broken)
    answer = client.get(f"/v1/tables/{table['id']}", headers=table["admin"])
    assert answer.status_code == 500 and answer.json["code"] == "internal_error"
    assert answer.json["request_id"] == answer.headers["X-Request-Id"]


def test_a_sane_incoming_request_id_is_kept(client):
    for given in ("3f2a9c1e-77b0-4c1d-9f0e-2b8d6c5a4e13", "edge:lb-1/req=42.7_x+y"):
        answer = client.get("/no/such/path", headers={"X-Request-Id": given})
        assert answer.headers["X-Request-Id"] == given
        assert answer.json["request_id"] == given


@pytest.mark.parametrize("hostile", ["", "a" * 129, "two words", "<script>alert(1)</script>",
                                     '{"json": 1}', "caf\u00e9", "id;rm -rf"])
def test_a_hostile_incoming_request_id_is_replaced(client, hostile):
    answer = client.get("/no/such/path", headers={"X-Request-Id": hostile})
    echoed = answer.headers["X-Request-Id"]
    assert echoed != hostile and len(echoed) == 32 and int(echoed, 16) >= 0
    assert answer.json["request_id"] == echoed


def test_each_request_is_one_json_line_with_its_fields_and_no_token(client, table, log_lines):
    hand_no = start_hand(client, table)
    token = table["players"][2]["Authorization"].removeprefix("Bearer ")
    answer = client.get(hand_url(table, hand_no), headers={**table["players"][2],
                                                           "X-Request-Id": "req-1"})
    assert answer.status_code == 200
    access = [line for line in log_lines() if line["logger"] == "cardroom.access"]
    assert [line["method"] for line in access] == ["POST", "GET"], access  # start, read
    line = access[1]
    assert line == {**line, "method": "GET", "path": hand_url(table, hand_no),
                    "route": "/v1/tables/<table_id>/hands/<int:hand_no>", "status": 200,
                    "request_id": "req-1", "remote_addr": "127.0.0.1", "table_id": table["id"],
                    "level": "INFO"}
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert isinstance(line["pid"], int) and line["time"].endswith("+00:00")
    text = json.dumps(log_lines())
    assert token not in text and "Bearer" not in text and "Authorization" not in text


def test_an_access_line_written_directly_reads_as_a_records_line(client, monkeypatch):
    """Where every handler is a ``json_handler``, the access line is written without a log
    record (it is made for every request); it must read as the line a record makes."""
    def line(handlers: list[logging.Handler], stream: io.StringIO) -> dict:
        monkeypatch.setattr(logs.access_log, "handlers", handlers)
        client.get("/v1/tables/x/y", headers={"X-Request-Id": "req-9"})
        (written,) = stream.getvalue().splitlines()
        return {k: v for k, v in json.loads(written).items() if k not in ("time", "duration_ms")}

    monkeypatch.setattr(logs.access_log, "propagate", False)
    monkeypatch.setattr(logs.access_log, "level", logging.INFO)
    recorded = io.StringIO()
    other_kind = logging.StreamHandler(io.StringIO())  # not a json_handler: records made
    via_record = line([logs.json_handler(recorded), other_kind], recorded)
    monkeypatch.setattr(logs.access_log, "makeRecord", None)  # no record made below
    direct = io.StringIO()
    assert line([logs.json_handler(direct)], direct) == via_record
    assert via_record["message"] == "GET /v1/tables/x/y 404" and via_record["pid"] > 0


def test_the_line_of_a_new_table_names_it(client, log_lines):
    made = client.post("/v1/tables", json={"game": "five-card-draw"})
    again = client.post("/v1/tables", json={"game": "five-card-draw"},
                        headers={"Idempotency-Key": "k1"})
    replayed = client.post("/v1/tables", json={"game": "five-card-draw"},
                           headers={"Idempotency-Key": "k1"})
    assert replayed.headers["Idempotent-Replayed"] == "true"
    access = [line for line in log_lines() if line["logger"] == "cardroom.access"]
    assert [line["table_id"] for line in access] == [
        made.json["table_id"], again.json["table_id"], again.json["table_id"]]


def test_a_line_separator_in_a_path_stays_within_its_line(client, log_lines):
    client.get("/v1/tables/a\u2028b\u2029c")
    (line,) = [line for line in log_lines() if line["logger"] == "cardroom.access"]
    assert line["path"] == "/v1/tables/a\u2028b\u2029c"


def test_a_path_no_route_matches_is_logged_without_a_table(client, log_lines):
    client.get("/v1/tables/x/y/z?token=secret-in-the-query")
    (line,) = [line for line in log_lines() if line["logger"] == "cardroom.access"]
    assert line["route"] == "unmatched" and line["status"] == 404 and line["table_id"] is None
    assert "secret-in-the-query" not in json.dumps(line)


def test_an_error_logged_while_answering_carries_the_request_id(log_lines):
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    client = create_app(backend=Backend.from_config(Config(redis_url=nowhere))).test_client()
    answer = client.get("/healthz", headers={"X-Request-Id": "outage-1"})
    assert answer.status_code == 503
    errors = [line for line in log_lines() if line["level"] == "ERROR"]
    assert errors and "event store is unavailable" in errors[0]["message"], log_lines()
    assert errors[0]["request_id"] == "outage-1"


def test_a_line_outside_a_request_has_no_request_id_and_keeps_its_traceback(log_lines):
    try:
        raise ValueError("bad value")
    except ValueError:
        logging.getLogger("cardroom.test").exception("the sweeper failed")
    (line,) = log_lines()
    assert line["message"] == "the sweeper failed" and "request_id" not in line
    assert "ValueError: bad value" in line["exception"]


def test_gunicorns_own_lines_are_json_too(capsys):
    """A request gunicorn refuses before the app sees it is logged by gunicorn itself."""
    from gunicorn.config import Config as GunicornConfig

    from service.cli import gunicorn_options
    from service.logs import GunicornLogger
    config = GunicornConfig()
    for name, value in gunicorn_options("127.0.0.1", 8000, 1, 1).items():
        config.set(name, value)
    assert config.logger_class is GunicornLogger
    GunicornLogger(config).warning("Worker with pid %s was terminated", 7)
    line = json.loads(capsys.readouterr().err.splitlines()[-1])
    assert (line["logger"], line["level"]) == ("gunicorn.error", "WARNING")
    assert line["message"] == "Worker with pid 7 was terminated"


def test_gunicorns_line_of_a_refused_request_does_not_quote_it(capsys):
    from gunicorn.config import Config as GunicornConfig

    from service.logs import GunicornLogger
    GunicornLogger(GunicornConfig()).warning(  # as gunicorn writes it, formatted already
        "Invalid request from ip=::1: Invalid HTTP Header: 'Authorization Bearer s3cret'")
    line = json.loads(capsys.readouterr().err.splitlines()[-1])
    assert line["message"] == "Invalid request from ip=::1 (its line is not logged)"
