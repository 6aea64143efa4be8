"""Redis round trips per request (issue 9): a hand read makes one (one script reads the
table and the hand streams), an action two (that read, then the one script that checks
the version and the Idempotency-Key and appends), on fakeredis and on a real Redis."""

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


def _hand(client):
    created = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    table_id = created["table_id"]
    tokens = {}
    for name in ("ann", "bob", "cy"):
        joined = client.post(f"/v1/tables/{table_id}/players", json={"name": name, "buy_in": 500})
        tokens[joined.json["seat"]] = {"Authorization": f"Bearer {joined.json['token']}"}
    started = client.post(f"/v1/tables/{table_id}/hands",
                          headers={"Authorization": f"Bearer {created['admin_token']}"})
    return f"/v1/tables/{table_id}/hands/{started.json['hand_no']}", tokens


def _act(client, hand, tokens, key=None):
    view = client.get(hand, headers=tokens[1]).json
    seat = view["awaiting"][0]
    kinds = {a["type"] for a in client.get(hand, headers=tokens[seat]).json["legal_actions"]}
    action = ({"type": "draw", "cards": []} if "draw" in kinds else
              {"type": "call"} if "call" in kinds else {"type": "bet", "amount": 25})
    headers = {**tokens[seat], "Idempotency-Key": key or uuid.uuid4().hex}
    return lambda: client.post(f"{hand}/actions", json=action, headers=headers)


def test_a_hand_read_is_one_round_trip(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    trips = RoundTrips(monkeypatch)
    for seat, headers in tokens.items():
        response, count = trips.during(lambda: app_client.get(hand, headers=headers))
        assert response.status_code == 200 and response.json["version"] > 0
        assert count == 1, f"seat {seat}'s hand read made {count} round trips"


def test_an_action_is_two_round_trips_a_read_and_the_append_script(app_client, monkeypatch):
    hand, tokens = _hand(app_client)
    _act(app_client, hand, tokens)()  # the first append loads the script into Redis
    trips = RoundTrips(monkeypatch)
    for _ in range(4):  # call, call and two draws: none of them the last
        act = _act(app_client, hand, tokens)
        response, count = trips.during(act)
        assert response.status_code == 201, response.json
        assert count == 2, f"an action made {count} round trips"


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
    for after in (version, version + 5):
        response, count = trips.during(lambda: app_client.get(f"{hand}/events?after={after}",
                                                              headers=tokens[1]))
        assert response.status_code == 200 and response.json["events"] == []
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
