"""Redis round trips per request (issue 9): a hand read makes one (one script reads the
table and the hand streams); an action one when its process holds the table and the hand
as they stand (the script that checks their versions and the Idempotency-Key and
appends), and two when it does not (that script, refused, answers what the process
missed; or a read first), on fakeredis and on a real Redis."""

from __future__ import annotations

import uuid

import pytest
from redis.connection import AbstractConnection

from service.app import create_app


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.redis)])
def app_client(request):
    backend = request.getfixturevalue(f"{request.param}_backend")
    return create_app(backend=backend).test_client()


class RoundTrips:
    """Counts what the Redis clients send: one command, or one pipeline, is one round trip."""

    def __init__(self, monkeypatch):
        self.count = 0
        send = AbstractConnection.send_packed_command

        def counted(connection, command, check_health=True):
            self.count += 1
            return send(connection, command, check_health)
        monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)

    def during(self, call):
        before = self.count
        result = call()
        return result, self.count - before


def _hand(client, players=("ann", "bob", "cy")):
    created = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    table_id = created["table_id"]
    tokens = {}
    for name in players:
        joined = client.post(f"/v1/tables/{table_id}/players", json={"name": name, "buy_in": 500})
        tokens[joined.json["seat"]] = {"Authorization": f"Bearer {joined.json['token']}"}
    started = client.post(f"/v1/tables/{table_id}/hands",
                          headers={"Authorization": f"Bearer {created['admin_token']}"})
    return f"/v1/tables/{table_id}/hands/{started.json['hand_no']}", tokens


def _next_move(client, hand, tokens, key=None) -> dict:
    """The next move's request, decided by reading the hand through ``client``."""
    seat = client.get(hand, headers=tokens[1]).json["awaiting"][0]
    kinds = {a["type"] for a in client.get(hand, headers=tokens[seat]).json["legal_actions"]}
    action = ({"type": "draw", "cards": []} if "draw" in kinds else
              {"type": "call"} if "call" in kinds else {"type": "bet", "amount": 25})
    return {"path": f"{hand}/actions", "json": action,
            "headers": {**tokens[seat], "Idempotency-Key": key or uuid.uuid4().hex}}


def _act(client, hand, tokens, key=None):
    move = _next_move(client, hand, tokens, key)
    return lambda: client.post(**move)


def test_a_hand_read_is_one_round_trip(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    trips = RoundTrips(monkeypatch)
    for seat, headers in tokens.items():
        response, count = trips.during(lambda: app_client.get(hand, headers=headers))
        assert response.status_code == 200 and response.json["version"] > 0
        assert count == 1, f"seat {seat}'s hand read made {count} round trips"


def test_an_action_is_one_round_trip_when_its_process_holds_the_hand(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    _act(app_client, hand, tokens)()  # the first append loads the script into Redis
    trips = RoundTrips(monkeypatch)
    for _ in range(4):  # call, call and two draws: none of them the last
        act = _act(app_client, hand, tokens)
        response, count = trips.during(act)
        assert response.status_code == 201, response.json
        assert count == 1, f"an action made {count} round trips"


@pytest.fixture
def two_processes(app_client):
    """A second app on the same store: a process with a replay cache of its own."""
    backend = app_client.application.extensions["backend"]
    return app_client, create_app(backend=backend).test_client()


def _seat_to_act(client, hand, tokens) -> int:
    return client.get(hand, headers=next(iter(tokens.values()))).json["awaiting"][0]


def test_an_action_through_a_process_that_is_behind_is_two_round_trips(two_processes,
                                                                       monkeypatch):
    """Each move goes through the process that did not make the one before: its append is
    refused, answers what the process missed, and is sent again decided on that."""
    one, other = two_processes
    hand, tokens = _hand(one)
    other.get(hand, headers=tokens[1])
    _act(one, hand, tokens)()  # the other process holds the hand as it was before this
    trips = RoundTrips(monkeypatch)
    for client, ahead in ((other, one), (one, other), (other, one), (one, other)):
        move = _next_move(ahead, hand, tokens)  # read through the other process
        response, count = trips.during(lambda: client.post(**move))
        assert response.status_code == 201, response.json
        assert count == 2, f"an action made {count} round trips"
    assert one.get(hand, headers=tokens[1]).json == other.get(hand, headers=tokens[1]).json


@pytest.mark.parametrize("behind", ["new to the hand", "behind on the table"])
def test_an_action_through_a_process_new_to_the_hand_or_behind_on_the_table_is_two_round_trips(
        two_processes, monkeypatch, behind):
    """New to the hand: a read, then the append. Behind on the table only (a player sat
    down through the other process): a move is never written as decided on a table that
    has moved on (its append checks the table's stream too), so it is decided again on
    what the refused append answered."""
    one, other = two_processes
    hand, tokens = _hand(one)
    _act(one, hand, tokens)()  # the script is loaded; this process holds the hand
    acting, reading = (other, one) if behind == "new to the hand" else (one, other)
    if behind == "behind on the table":
        table = hand.rsplit("/hands/", 1)[0]
        joined = other.post(f"{table}/players", json={"name": "dee", "buy_in": 500})
        assert joined.status_code == 201
    move = _next_move(reading, hand, tokens)
    trips = RoundTrips(monkeypatch)
    response, count = trips.during(lambda: acting.post(**move))
    assert response.status_code == 201 and count == 2, (response.json, count)


def test_the_move_that_ends_a_hand_is_two_round_trips_when_table_and_hand_moved_on(
        two_processes, monkeypatch):
    """The process is behind on the hand (a fold through the other) and on the table (a
    player sat down through the other): the refused append answers both, so the hand's
    end and the table's settlement are written by the second round trip, not a third."""
    one, other = two_processes
    hand, tokens = _hand(one, ("ann", "bob", "cy", "dee"))
    table = hand.rsplit("/hands/", 1)[0]
    one.get(hand, headers=tokens[1])
    fold = {"type": "fold"}
    assert one.post(f"{hand}/actions", json=fold,
                    headers=tokens[_seat_to_act(one, hand, tokens)]).status_code == 201
    seat = _seat_to_act(other, hand, tokens)
    assert other.post(f"{hand}/actions", json=fold, headers=tokens[seat]).status_code == 201
    assert other.post(f"{table}/players", json={"name": "eve", "buy_in": 500}).status_code == 201
    last = _seat_to_act(other, hand, tokens)
    trips = RoundTrips(monkeypatch)
    response, count = trips.during(lambda: one.post(f"{hand}/actions", json=fold,
                                                    headers=tokens[last]))
    assert response.status_code == 201, response.json
    assert [e["type"] for e in response.json["events"]][-1] == "HandEnded"
    assert count == 2, f"the last move made {count} round trips"
    assert one.get(table, headers=tokens[1]).json == other.get(table, headers=tokens[1]).json


def test_a_poll_with_events_to_send_is_two_round_trips(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    trips = RoundTrips(monkeypatch)
    response, count = trips.during(lambda: app_client.get(f"{hand}/events?after=1",
                                                          headers=tokens[1]))
    assert response.status_code == 200 and response.json["events"]
    assert count == 2


def test_a_poll_with_nothing_new_is_one_round_trip(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    version = app_client.get(hand, headers=tokens[1]).json["version"]
    trips = RoundTrips(monkeypatch)
    for after, status in ((version, 200), (version + 5, 422)):  # past the end: refused
        response, count = trips.during(lambda: app_client.get(f"{hand}/events?after={after}",
                                                              headers=tokens[1]))
        assert response.status_code == status and response.json.get("events", []) == []
        assert count == 1


def test_an_audit_is_two_round_trips(app_client, monkeypatch):
    """The snapshot that tells the caller's role and whether the hand exists, then one
    pipeline: the hand's events, its table's and its receipt, all read afresh."""
    created = app_client.post("/v1/tables", json={"game": "five-card-draw"}).json
    table_id = created["table_id"]
    for name in ("ann", "bob"):
        app_client.post(f"/v1/tables/{table_id}/players", json={"name": name, "buy_in": 500})
    started = app_client.post(f"/v1/tables/{table_id}/hands",
                              headers={"Authorization": f"Bearer {created['admin_token']}"})
    audit = f"/v1/tables/{table_id}/hands/{started.json['hand_no']}/audit"
    auditor = {"Authorization": f"Bearer {created['auditor_token']}"}
    trips = RoundTrips(monkeypatch)
    response, count = trips.during(lambda: app_client.get(audit, headers=auditor))
    assert response.status_code == 200 and response.json["valid"], response.json
    assert count == 2


def test_a_seat_and_a_hand_start_are_two_round_trips_a_read_and_the_append(app_client,
                                                                           monkeypatch):
    created = app_client.post("/v1/tables", json={"game": "five-card-draw"}).json
    table = f"/v1/tables/{created['table_id']}"
    app_client.post(f"{table}/players", json={"name": "ann", "buy_in": 500})  # script loaded
    trips = RoundTrips(monkeypatch)
    joined, count = trips.during(lambda: app_client.post(
        f"{table}/players", json={"name": "bob", "buy_in": 500},
        headers={"Idempotency-Key": "bob-joins"}))
    assert joined.status_code == 201 and count == 2, (joined.json, count)
    admin = {"Authorization": f"Bearer {created['admin_token']}"}
    started, count = trips.during(lambda: app_client.post(f"{table}/hands", headers=admin))
    assert started.status_code == 201 and count == 2, (started.json, count)


def test_the_move_that_leads_to_the_showdown_is_one_round_trip_and_its_job(app_client,
                                                                          monkeypatch):
    """Its append also owes the showdown job and indexes the table as owing it (in the
    script, on one server), then the job is enqueued (RQ's round trips, not counted)."""
    hand, tokens = _hand(app_client)
    room = app_client.application.extensions["cardroom"]
    enqueued = []
    monkeypatch.setattr(room, "enqueue_showdown", lambda *job: enqueued.append(job))
    trips = RoundTrips(monkeypatch)
    while not enqueued:
        act = _act(app_client, hand, tokens)
        response, count = trips.during(act)
        assert response.status_code == 201, response.json
        assert count == 1, f"an action made {count} round trips"
    assert enqueued == [(hand.split("/")[3], 1)]
