"""The live event stream over real HTTP: ``cardroom serve`` under gunicorn, on a real Redis
with a separate ``cardroom worker``, and on the embedded default."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from urllib.parse import urlsplit

import pytest

from .client import Table, check_player_events_before_end, choose_action, create_table
from .conftest import Server

WAIT = 30.0  # seconds a test waits for what it needs before it fails


class Stream:
    """A text/event-stream read with ``http.client``, message by message."""

    def __init__(self, base_url: str, path: str, token: str, last_event_id: int | None = None):
        url = urlsplit(base_url)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=WAIT)
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()

    def messages(self):
        fields: dict[str, str] = {}
        while line := self.response.readline():
            line = line.decode().rstrip("\r\n")
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
            elif fields:
                yield {"id": int(fields["id"]), "event": fields["event"], "data": fields["data"]}
                fields = {}

    def close(self) -> None:
        self.conn.close()


class Reader(threading.Thread):
    """Reads a stream in the background until its end, or until ``stop(messages)`` holds;
    then closes the connection."""

    def __init__(self, stream: Stream, stop=lambda messages: False):
        super().__init__(daemon=True)
        self.stream, self.stop, self.messages = stream, stop, []
        self.start()

    def run(self):
        try:
            for message in self.stream.messages():
                self.messages.append(message)
                if message["event"] == "end" or self.stop(self.messages):
                    break
        finally:
            self.stream.close()

    def result(self) -> list[dict]:
        self.join(WAIT)
        assert not self.is_alive(), f"the stream did not end; it sent {self.messages}"
        return self.messages


def play(table: Table, hand_no: int, rng: random.Random, moves: int | None = None) -> None:
    """Random legal moves (no folds), ``moves`` of them or until nobody is awaited."""
    while moves is None or moves > 0:
        admin = table.hand(hand_no)
        if admin["status"] in ("showdown_pending", "ended"):
            return
        seat = (admin.get("awaiting") or [admin["to_act"]])[0]
        me = table.hand(hand_no, table.tokens[seat])
        move = choose_action(rng, me, seat, allow_fold=False)
        answer = table.act(hand_no, seat, {**move, "expected_version": me["version"]})
        assert answer.status == 201, answer
        moves = None if moves is None else moves - 1


@pytest.fixture(params=["gunicorn-redis", "embedded"])
def server(request, worker_process):
    """``cardroom serve`` under gunicorn: with 2 processes on a real Redis and a separate
    ``cardroom worker``, or on the embedded default."""
    if request.param == "embedded":
        return request.getfixturevalue("embedded_server")
    request.getfixturevalue("redis_db")  # a flushed DB
    worker_process(request.getfixturevalue("integration_redis_url"))
    return request.getfixturevalue("live_server")


def test_every_event_arrives_once_in_order_and_a_resumed_stream_continues_exactly(server):
    table = create_table(server.api, 3)
    hand_no = table.start_hand()
    path = table.hand_path(hand_no) + "/events/stream"
    whole = Reader(Stream(server.url, path, table.tokens[1]))
    cut = Reader(Stream(server.url, path, table.tokens[2]),
                 stop=lambda messages: len(messages) == 3)  # the snapshot and two events
    rng = random.Random(20261122)
    play(table, hand_no, rng, moves=3)
    first_part = cut.result()
    resumed = Reader(Stream(server.url, path, table.tokens[2], first_part[-1]["id"]))
    play(table, hand_no, rng)
    sent, rest = whole.result(), resumed.result()

    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended")
    # Seat 1: the hand as it stood, every later event once, in order, each as seat 1 reads
    # it, then the end.
    snapshot, *events, end = sent
    assert snapshot["event"] == "snapshot" and snapshot["id"] >= 1
    assert [m["id"] for m in events] == list(range(snapshot["id"] + 1, final["version"] + 1))
    assert {m["event"] for m in events} == {"event"}
    assert (end["event"], end["id"]) == ("end", final["version"])
    check_as_seen_then(events, table.events(hand_no, table.tokens[1]), seat=1)
    # Seat 2 dropped its stream and resumed from its Last-Event-ID: no snapshot, nothing
    # missed, nothing twice.
    assert first_part[0]["event"] == "snapshot" and rest[0]["event"] == "event"
    got = [m["id"] for m in first_part[1:] + rest[:-1]]
    assert got == list(range(first_part[0]["id"] + 1, final["version"] + 1))
    assert rest[-1]["event"] == "end"
    check_as_seen_then(first_part[1:] + rest[:-1], table.events(hand_no, table.tokens[2]),
                       seat=2)


def check_as_seen_then(messages: list[dict], polled: list[dict], seat: int) -> None:
    """The streamed events are the stored ones, as ``seat`` could read them then: nothing of
    another's down cards before the showdown, and never more than ``polled`` (the events
    read after the end, when the showdown has opened the hands it showed)."""
    after_end = {e["version"]: e for e in polled}
    streamed = [json.loads(m["data"]) for m in messages]
    for event in streamed:
        state, polled_event = event.pop("state"), after_end[event["version"]]
        assert state["version"] == event["version"]
        assert {**event, "openings": {}} == {**polled_event, "openings": {}}
        assert event["openings"].items() <= polled_event["openings"].items()
    showdown = next(i for i, e in enumerate(streamed)
                    if e["type"] in ("ShowdownEvaluated", "PotAwarded", "HandEnded"))
    check_player_events_before_end(streamed[:showdown], seat)
    assert showdown >= 3


# A hung-up stream is noticed at a heartbeat's write or at a look at its socket; with the
# heartbeat an hour away, only the look can free the slot in time.
@pytest.mark.parametrize("heartbeat", ["0.2", "3600"])
def test_past_its_bound_a_server_answers_503_and_keeps_serving(tmp_path, heartbeat):
    server = Server(tmp_path / "serve.log", None, workers=1, CARDROOM_MAX_STREAMS="1",
                    CARDROOM_SSE_HEARTBEAT=heartbeat)
    try:
        table = create_table(server.api, 2)
        hand_no = table.start_hand()
        path = table.hand_path(hand_no) + "/events/stream"
        first = Stream(server.url, path, table.admin)
        assert first.response.status == 200
        assert next(first.messages())["event"] == "snapshot"
        refused = server.api.get(path, token=table.admin)
        assert refused.status == 503 and refused.json["code"] == "too_many_streams", refused
        assert int(refused.headers["retry-after"]) >= 1
        assert server.api.get("/healthz").status == 200  # no worker thread hangs on it
        first.close()  # the server notices that it hung up and frees the slot
        deadline = time.monotonic() + WAIT
        while (again := Stream(server.url, path, table.admin)).response.status != 200:
            again.close()
            assert time.monotonic() < deadline, "the closed stream's slot was never freed"
            time.sleep(0.1)
        assert next(again.messages())["event"] == "snapshot"
        again.close()
    finally:
        server.stop()
