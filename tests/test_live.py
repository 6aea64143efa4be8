"""The live event stream (GET .../events/stream) through the Flask test client on fakeredis:
what it sends, in what order, to whom, how it resumes, and its bound per process."""

from __future__ import annotations

import json
import socket
import threading

import pytest
import redis

from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.live import CLIENT_CHECK, LONGEST_WAIT, STOPPING, Paced, _gone
from tests.test_api import assert_problem, hand_url, play_to_showdown, start_hand


def parse(text: str) -> list[dict]:
    """The messages of a text/event-stream (comments as ``{"comment": ...}``)."""
    messages = []
    for block in text.split("\n\n"):
        if not block:
            continue
        if block.startswith(":"):
            messages.append({"comment": block[1:].strip()})
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        messages.append({"id": int(fields["id"]), "event": fields["event"],
                         "data": json.loads(fields["data"])})
    return messages


def stream(client, table, hand_no, who, **headers):
    return client.get(hand_url(table, hand_no, "/events/stream"), buffered=False,
                      headers={**who, **headers})


def read_all(response) -> list[dict]:
    return parse("".join(chunk.decode() for chunk in response.response))


class Follower(threading.Thread):
    """Reads a stream to its end in the background."""

    def __init__(self, response):
        super().__init__(daemon=True)
        self.response, self.messages = response, None
        self.start()

    def run(self):
        self.messages = read_all(self.response)

    def result(self) -> list[dict]:
        self.join(30)
        assert not self.is_alive(), "the stream did not end after the hand ended"
        return self.messages


def moves_and_showdown(client, backend, table, hand_no):
    play_to_showdown(client, table, hand_no)
    assert backend.run_jobs()  # the showdown job, as the worker would run it


def test_a_live_stream_sends_the_hand_then_every_event_once_in_order_then_the_end(
        client, fake_backend, table):
    hand_no = start_hand(client, table)
    opened_at = client.get(hand_url(table, hand_no), headers=table["players"][1]).json
    response = stream(client, table, hand_no, table["players"][1])
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    follower = Follower(response)
    moves_and_showdown(client, fake_backend, table, hand_no)
    messages = [m for m in follower.result() if "comment" not in m]

    snapshot, *events, end = messages
    assert snapshot == {"id": opened_at["version"], "event": "snapshot", "data": opened_at}
    final = client.get(hand_url(table, hand_no, "/events"), headers=table["players"][1]).json
    assert [m["id"] for m in events] == list(range(opened_at["version"] + 1,
                                                   final["events"][-1]["version"] + 1))
    assert all(m["event"] == "event" and m["data"]["version"] == m["id"] for m in events)
    assert end == {"id": events[-1]["id"], "event": "end", "data": {"version": events[-1]["id"]}}
    # Each event as the player could read it then, with the hand just after it: what the
    # showdown opened since (the hands shown, as their draws held them) aside.
    polled = {e["version"]: e for e in final["events"]}
    for message in events:
        event = dict(message["data"])
        state = event.pop("state")
        later = polled[message["id"]]
        assert {**event, "openings": later["openings"]} == later
        assert event["openings"].items() <= later["openings"].items()
        assert state == client.get(hand_url(table, hand_no) + f"?at={message['id']}",
                                   headers=table["players"][1]).json


def test_a_player_never_receives_an_opponents_down_cards_before_the_showdown(
        client, fake_backend, table):
    hand_no = start_hand(client, table)
    follower = Follower(stream(client, table, hand_no, table["players"][2]))
    moves_and_showdown(client, fake_backend, table, hand_no)
    messages = [m for m in follower.result() if m.get("event") in ("snapshot", "event")]
    auditor = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    opponents = {card for e in auditor["events"] for seat in e["state"]["seats"]
                 if seat["seat"] != 2 for card in seat["cards"] if card != "??"}
    assert opponents
    showdown = next(i for i, m in enumerate(messages)
                    if m["data"].get("type") == "ShowdownEvaluated")
    before_showdown = messages[:showdown]
    assert len(before_showdown) > 10
    for message in before_showdown:
        assert not opponents & set(json.dumps(message["data"]).replace('"', " ").split()), (
            f"an opponent's card reached seat 2 at version {message['id']}")


def test_a_resumed_stream_continues_exactly_after_its_last_event_id(client, fake_backend, table):
    hand_no = start_hand(client, table)
    whole = Follower(stream(client, table, hand_no, table["auditor"]))
    moves_and_showdown(client, fake_backend, table, hand_no)
    events = [m for m in whole.result() if m.get("event") == "event"]
    cut = events[len(events) // 2]["id"]

    resumed = read_all(stream(client, table, hand_no, table["auditor"],
                              **{"Last-Event-ID": str(cut)}))
    by_query = read_all(client.get(hand_url(table, hand_no, f"/events/stream?last_event_id={cut}"),
                                   headers=table["auditor"], buffered=False))
    sent = [m for m in resumed if "comment" not in m]
    assert [m["id"] for m in sent[:-1]] == [m["id"] for m in events if m["id"] > cut]
    assert all(m["event"] == "event" for m in sent[:-1]) and sent[-1]["event"] == "end"
    assert [m for m in by_query if "comment" not in m] == sent
    # The auditor saw the hand live; after the end the reveal applies to every version.
    assert [m["data"]["hash"] for m in sent[:-1]] == [
        m["data"]["hash"] for m in events if m["id"] > cut]


def test_a_stream_of_an_ended_hand_is_its_snapshot_and_the_end(client, fake_backend, table):
    hand_no = start_hand(client, table)
    moves_and_showdown(client, fake_backend, table, hand_no)
    hand = client.get(hand_url(table, hand_no), headers=table["admin"]).json
    sent = [m for m in read_all(stream(client, table, hand_no, table["admin"]))
            if "comment" not in m]
    assert sent == [{"id": hand["version"], "event": "snapshot", "data": hand},
                    {"id": hand["version"], "event": "end", "data": {"version": hand["version"]}}]


@pytest.mark.parametrize("last_event_id", ["abc", "-1", "1.5", "", "999"])
def test_a_bad_last_event_id_is_refused(client, table, last_event_id):
    hand_no = start_hand(client, table)
    response = stream(client, table, hand_no, table["players"][1],
                      **{"Last-Event-ID": last_event_id})
    assert_problem(response, 422, "invalid_last_event_id")
    assert "Last-Event-ID" in response.json["detail"]


@pytest.mark.parametrize("last_event_id", ["abc", "-1"])
def test_a_bad_last_event_id_parameter_is_named_as_the_query_parameter(
        client, table, last_event_id):
    hand_no = start_hand(client, table)
    response = client.get(hand_url(table, hand_no, f"/events/stream?last_event_id={last_event_id}"),
                          buffered=False, headers=table["players"][1])
    assert_problem(response, 422, "invalid_last_event_id")
    assert "query parameter last_event_id" in response.json["detail"], response.json


def test_streams_are_for_the_tables_tokens_and_its_hands(client, table):
    hand_no = start_hand(client, table)
    assert_problem(client.get(hand_url(table, hand_no, "/events/stream")), 401, "unauthorized")
    assert_problem(stream(client, table, hand_no + 1, table["players"][1]), 404, "hand_not_found")


def test_past_the_bound_a_client_gets_503_with_retry_after_until_a_stream_closes(table_for):
    client, table = table_for(Config(max_streams=2))
    hand_no = start_hand(client, table)
    open_ones = [stream(client, table, hand_no, table["players"][seat]) for seat in (1, 2)]
    refused = stream(client, table, hand_no, table["players"][3])
    assert_problem(refused, 503, "too_many_streams")
    assert int(refused.headers["Retry-After"]) >= 1
    open_ones[0].close()
    again = stream(client, table, hand_no, table["players"][3])
    assert again.status_code == 200
    # Refusals before a slot is taken leave the slots alone.
    assert_problem(stream(client, table, hand_no, table["players"][1],
                          **{"Last-Event-ID": "x"}), 422, "invalid_last_event_id")
    again.close()
    assert stream(client, table, hand_no, table["players"][3]).status_code == 200


def test_one_address_cannot_hold_every_stream(table_for):
    client, table = table_for(Config(max_streams=4, max_streams_per_address=2))
    hand_no = start_hand(client, table)
    players = table["players"]
    from_here = [stream(client, table, hand_no, players[seat]) for seat in (1, 2)]
    assert [r.status_code for r in from_here] == [200, 200]
    refused = stream(client, table, hand_no, players[3])
    assert_problem(refused, 429, "too_many_streams_from_address")
    assert refused.json["max_streams_per_address"] == 2
    assert int(refused.headers["Retry-After"]) >= 1
    elsewhere = client.get(hand_url(table, hand_no, "/events/stream"), buffered=False,
                           headers=players[3], environ_overrides={"REMOTE_ADDR": "10.0.0.9"})
    assert elsewhere.status_code == 200
    from_here[0].close()
    again = stream(client, table, hand_no, players[3])
    assert again.status_code == 200
    for response in (again, from_here[1], elsewhere):
        response.close()


def test_no_streams_at_all_with_a_bound_of_zero(table_for):
    client, table = table_for(Config(max_streams=0))
    assert_problem(stream(client, table, start_hand(client, table), table["admin"]), 503,
                   "too_many_streams")


class FakeStore:
    """Waits by moving a fake clock, as a blocking read that times out would."""

    def __init__(self, clock):
        self.clock, self.waits = clock, []

    def wait(self, stream, version, timeout):
        self.waits.append(timeout)
        self.clock.now += timeout
        return []


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_a_heartbeat_is_sent_after_each_silence_of_the_heartbeat_interval():
    clock = Clock()
    store = FakeStore(clock)
    paced = Paced(store, heartbeat=10.0, clock=clock)

    def idle():
        for _ in range(8):
            yield "idle", 3, paced.wait("s", 3)

    sent = [(clock.now, text) for text in paced.messages(idle())]
    assert sent[0] == (0.0, ": open\n\n")
    assert sent[1:] == [(pytest.approx(10.0), ": heartbeat\n\n"),
                        (pytest.approx(20.0), ": heartbeat\n\n")]
    assert max(store.waits) <= LONGEST_WAIT  # never past the Redis client's socket timeout


def test_a_stream_ends_within_a_client_check_of_its_client_closing_the_connection():
    clock = Clock()
    store = FakeStore(clock)
    ours, theirs = socket.socketpair()
    paced = Paced(store, heartbeat=3600.0, clock=clock, client_gone=_gone(ours))

    def idle():
        while True:
            if clock.now >= 5.0:
                theirs.close()
            yield "idle", 3, paced.wait("s", 3)

    try:
        assert list(paced.messages(idle())) == [": open\n\n"]  # it ended: no heartbeat
        assert clock.now <= 5.0 + 2 * CLIENT_CHECK and max(store.waits) <= CLIENT_CHECK
    finally:
        ours.close()


def test_a_stream_ends_within_a_client_check_of_its_process_beginning_to_stop():
    clock = Clock()
    store = FakeStore(clock)
    ours, theirs = socket.socketpair()  # a client that stays
    paced = Paced(store, heartbeat=3600.0, clock=clock, client_gone=_gone(ours))

    def idle():
        while True:
            if clock.now >= 5.0:
                STOPPING.set()  # as gunicorn's SIGTERM sets it (refusals.ProblemThreadWorker)
            yield "idle", 3, paced.wait("s", 3)

    try:
        assert list(paced.messages(idle())) == [": open\n\n"]  # it ended: no heartbeat
        assert clock.now <= 5.0 + 2 * CLIENT_CHECK
    finally:
        STOPPING.clear()
        ours.close()
        theirs.close()


def test_a_store_that_fails_mid_stream_closes_it_and_a_bug_still_raises():
    def failing(error):
        yield "event", 1, {"version": 1}
        raise error

    sent = list(Paced(None, 10.0).messages(failing(redis.exceptions.ConnectionError("down"))))
    assert [parse(s)[0].get("id") for s in sent] == [None, 1]
    with pytest.raises(KeyError):
        list(Paced(None, 10.0).messages(failing(KeyError("bug"))))


def test_the_addresses_of_one_ipv6_slash_64_hold_its_streams_together(table_for):
    client, table = table_for(Config(max_streams=8, max_streams_per_address=2))
    hand_no = start_hand(client, table)

    def from_address(seat, address):
        return client.get(hand_url(table, hand_no, "/events/stream"), buffered=False,
                          headers=table["players"][seat],
                          environ_overrides={"REMOTE_ADDR": address})
    held = [from_address(1, "2001:db8:7:7::1"), from_address(2, "2001:db8:7:7:8::2")]
    refused = from_address(3, "2001:db8:7:7::3")
    other = from_address(3, "2001:db8:7:8::3")
    assert [r.status_code for r in (*held, refused, other)] == [200, 200, 429, 200]
    for response in (*held, other):
        response.close()


@pytest.fixture
def table_for():
    """Factory: an embedded app with ``config`` and a five card draw table of three."""
    backends = []

    def make(config: Config):
        backend = Backend.from_config(config)
        backends.append(backend)
        client = create_app(backend=backend).test_client()
        created = client.post("/v1/tables", json={"game": "five-card-draw"}).json
        players = {}
        for name in ("ann", "bob", "cy"):
            joined = client.post(f"/v1/tables/{created['table_id']}/players",
                                 json={"name": name, "buy_in": 1000}).json
            players[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
        return client, {"id": created["table_id"], "players": players,
                        "admin": {"Authorization": f"Bearer {created['admin_token']}"}}

    yield make
    for backend in backends:
        backend.stop_worker_thread()


def test_the_bound_and_the_heartbeat_are_read_from_the_environment():
    config = Config.from_env({"CARDROOM_MAX_STREAMS": "3", "CARDROOM_SSE_HEARTBEAT": "2.5",
                              "CARDROOM_MAX_STREAMS_PER_ADDRESS": "0"})
    assert (config.max_streams, config.sse_heartbeat, config.max_streams_per_address) == (3, 2.5, 0)
    assert Config.from_env({}).max_streams_per_address == 8
    assert (Config.from_env({}).max_streams, Config.from_env({}).sse_heartbeat) == (32, 10.0)
    for bad in ({"CARDROOM_SSE_HEARTBEAT": "0"}, {"CARDROOM_MAX_STREAMS": "many"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Config.from_env(bad)
