"""Several API processes on one store, each with the replay cache of its own: a move is
decided on the table and hand as its process holds them, and its append refuses it if
either has moved on since (answering what was missed, on which it is decided again). So
whichever processes the moves, joins and reads go through, the hand is the one a single
process would have played, and every refusal is the one a fresh read would give."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.commands import Act
from domain.views import Viewer
from service import auth
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.reads import Snapshot
from service.room import NotSeated
from service.retention import archive_ended_hands

EXAMPLES = int(os.environ.get("CARDROOM_PROCESS_EXAMPLES", "25"))
PROCESSES = 3


def _bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


class Club:
    """One table on one store, reached through ``PROCESSES`` apps of their own."""

    def __init__(self, data):
        self.data = data
        backend = Backend.from_config(Config())
        self.apps = [create_app(backend=backend) for _ in range(PROCESSES)]
        self.clients = [app.test_client() for app in self.apps]
        created = self.any().post("/v1/tables", json={"game": "five-card-draw"}).json
        self.table, self.admin = f"/v1/tables/{created['table_id']}", _bearer(
            created["admin_token"])
        self.tokens: dict[int, dict] = {}
        for name in ("ann", "bob", "cy"):
            self.join(name)
        started = self.any().post(f"{self.table}/hands", headers=self.admin)
        assert started.status_code == 201, started.json
        self.hand = f"{self.table}/hands/{started.json['hand_no']}"

    def any(self):
        return self.clients[self.data.draw(st.integers(0, PROCESSES - 1), label="process")]

    def join(self, name: str) -> None:
        joined = self.any().post(f"{self.table}/players", json={"name": name, "buy_in": 500})
        assert joined.status_code == 201, joined.json
        self.tokens[joined.json["seat"]] = _bearer(joined.json["token"])

    def read(self, client=None, seat: int | None = None) -> dict:
        headers = self.admin if seat is None else self.tokens[seat]
        response = (client or self.any()).get(self.hand, headers=headers)
        assert response.status_code == 200, response.json
        return response.json

    def events(self, client) -> list[dict]:
        return client.get(f"{self.hand}/events", headers=self.admin).json["events"]


def _move(data, legal: list[dict]) -> dict:
    chosen = data.draw(st.sampled_from(legal), label="move")
    move = {"type": chosen["type"]}
    if "min" in chosen:
        move["amount"] = data.draw(st.sampled_from([chosen["min"], chosen["max"]]))
    if chosen["type"] == "draw":
        move["cards"] = []
    return move


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_moves_through_any_process_play_the_hand_one_process_would(data):
    club = Club(data)
    while True:
        now = club.read()  # through any process: the others may stay behind
        if not now["awaiting"]:
            break
        seat = now["awaiting"][0]
        legal = club.read(seat=seat)["legal_actions"]
        if data.draw(st.booleans(), label="someone joins first") and len(club.tokens) < 6:
            club.join(f"late{len(club.tokens)}")
        move = _move(data, legal)
        pin = data.draw(st.sampled_from([None, "current", "stale"]), label="expected_version")
        if pin is not None:
            move["expected_version"] = now["version"] - (pin == "stale")
        answer = club.any().post(f"{club.hand}/actions", json=move, headers=club.tokens[seat])
        if pin == "stale":
            assert answer.status_code == 409, answer.json
            assert answer.json["current_version"] == now["version"]
            continue
        assert answer.status_code == 201, (move, answer.json)
        assert answer.json["version"] > now["version"]
        late = [s for s in club.tokens if s not in {x["seat"] for x in now["seats"]}]
        if late:  # a player who sat down during the hand cannot move in it, in any process
            refused = club.any().post(f"{club.hand}/actions", json={"type": "fold"},
                                      headers=club.tokens[late[0]])
            assert refused.status_code in (403, 409, 422), refused.json
    fresh = create_app(backend=club.apps[0].extensions["backend"]).test_client()
    everything = club.events(fresh)
    assert everything and [e["version"] for e in everything] == list(
        range(1, len(everything) + 1))
    for client in club.clients:  # each process, caught up, holds what a new one reads
        assert club.events(client) == everything
        assert club.read(client) == club.read(fresh)


def _two_processes(**config):
    backend = Backend.from_config(Config(**config))
    return [create_app(backend=backend).test_client() for _ in range(2)]


def _table(client, names=("ann", "bob", "cy")) -> tuple[str, str, dict[int, dict]]:
    created = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    table, players = f"/v1/tables/{created['table_id']}", {}
    for name in names:
        players[name] = client.post(f"{table}/players", json={"name": name, "buy_in": 500}).json
    return table, _bearer(created["admin_token"]), players


def _fold_to_the_end(client, hand: str, admin: dict, tokens: dict[int, dict]) -> dict:
    """Every seat to act folds until the hand ends; the key each fold was sent with."""
    keys = {}
    while awaiting := client.get(hand, headers=admin).json["awaiting"]:
        keys[awaiting[0]] = f"fold-{awaiting[0]}"
        folded = client.post(f"{hand}/actions", json={"type": "fold"}, headers={
            **tokens[awaiting[0]], "Idempotency-Key": keys[awaiting[0]]})
        assert folded.status_code == 201, folded.json
    return keys


@pytest.mark.parametrize("move, headers", [
    ({"type": "check"}, {"Idempotency-Key": "fold-{gone}"}),  # its key, reused,
    ({"type": "fold"}, {"Idempotency-Key": "fold-again"}),  # a fold anew, with a key,
    ({"type": "fold"}, {}),  # a fold anew,
    ({"type": "nonsense"}, {}), ({"bogus": 1}, {}),  # no move at all,
    ({"type": "check"}, {"If-Match": '"x"'}),  # a bad version,
    ({"type": "check"}, {"Idempotency-Key": "k" * 201}),  # or a bad key
])
def test_a_player_who_left_is_refused_by_a_process_holding_the_table_from_before(move,
                                                                                 headers):
    """403 from the process that holds the table from before the player left as from one
    that reads it, and the token counts as not recognised (rate limits: by address)."""
    one, other = _two_processes()
    recognised = []
    for process in (one, other):
        process.application.after_request(lambda answer: recognised.append(
            auth.recognised()) or answer)
    table, admin, players = _table(one)
    tokens = {p["seat"]: _bearer(p["token"]) for p in players.values()}
    hand = f"{table}/hands/{one.post(f'{table}/hands', headers=admin).json['hand_no']}"
    gone = next(iter(_fold_to_the_end(one, hand, admin, tokens)))
    assert other.delete(f"{table}/players/{gone}", headers=admin).status_code == 200
    headers = {name: value.format(gone=gone) for name, value in headers.items()}
    for process in (one, other):  # holding the table from before, or reading it
        recognised.clear()
        refused = process.post(f"{hand}/actions", json=move, headers={**tokens[gone], **headers})
        assert refused.status_code == 403 and refused.json["code"] == "forbidden", refused.json
        assert recognised == [False]


def test_a_player_who_left_is_answered_a_retry_of_their_move_by_either_process():
    """Whichever process answers, and whether it holds the table from before or reads it,
    the first answer again (the token recognised: it was dealt into the hand)."""
    one, other = _two_processes()
    table, admin, players = _table(one)
    tokens = {p["seat"]: _bearer(p["token"]) for p in players.values()}
    hand = f"{table}/hands/{one.post(f'{table}/hands', headers=admin).json['hand_no']}"
    keys = _fold_to_the_end(one, hand, admin, tokens)
    gone = next(iter(keys))
    first = one.get(f"{hand}/events", headers=admin).json["events"]
    assert other.delete(f"{table}/players/{gone}", headers=admin).status_code == 200
    for process in (one, other):
        again = process.post(f"{hand}/actions", json={"type": "fold"}, headers={
            **tokens[gone], "Idempotency-Key": keys[gone]})
        assert again.status_code == 201, again.json
        assert again.headers["Idempotent-Replayed"] == "true"
        folded = next(e for e in first if e["type"] == "PlayerFolded")
        assert again.json["events"][0]["event_id"] == folded["event_id"]


def test_a_move_decided_on_a_table_held_from_before_its_seat_changed_hands_is_refused():
    """The process holds the hand as it stands but a table from before a player left and
    another took the seat (a held table may be older than the hand beside it: a thread
    that read earlier stored it last, or Redis came back from an older snapshot)."""
    client = _two_processes()[0]
    room = client.application.extensions["cardroom"]
    table, admin, players = _table(client)
    table_id = table.rsplit("/", 1)[1]
    tokens = {p["seat"]: _bearer(p["token"]) for p in players.values()}
    first = f"{table}/hands/{client.post(f'{table}/hands', headers=admin).json['hand_no']}"
    _fold_to_the_end(client, first, admin, tokens)
    before = room.table(table_id)  # bob in seat 2
    assert client.delete(f"{table}/players/2", headers=admin).status_code == 200
    dan = client.post(f"{table}/players", json={"name": "dan", "buy_in": 500}).json
    assert dan["seat"] == 2
    tokens[2] = _bearer(dan["token"])
    hand_no = client.post(f"{table}/hands", headers=admin).json["hand_no"]
    hand = f"{table}/hands/{hand_no}"
    while (awaiting := client.get(hand, headers=admin).json["awaiting"]) != [2]:
        moved = client.post(f"{hand}/actions", json={"type": "check"},
                            headers=tokens[awaiting[0]])
        assert moved.status_code == 201, moved.json
    held = Snapshot(table_id, before, hand_no, room.hand(table_id, hand_no), held=True)
    bob = Viewer("player", 2, players["bob"]["player_id"])
    with pytest.raises(NotSeated):
        room.act(table_id, hand_no, bob, Act(seat=2, type="fold", amount=None, cards=()),
                 None, None, held)
    assert client.get(hand, headers=admin).json["awaiting"] == [2]  # dan's turn still


def test_a_pinned_move_on_a_hand_archived_since_is_told_the_hands_version():
    one, other = _two_processes(archive_after=0.0)
    table, admin, players = _table(one)
    tokens = {p["seat"]: _bearer(p["token"]) for p in players.values()}
    hand = f"{table}/hands/{one.post(f'{table}/hands', headers=admin).json['hand_no']}"
    held = one.get(hand, headers=admin).json
    _fold_to_the_end(other, hand, admin, tokens)
    ended = other.get(hand, headers=admin).json["version"]
    store = other.application.extensions["cardroom"].store
    assert archive_ended_hands(store, 0.0) == 1
    stale = one.post(f"{hand}/actions", headers=tokens[held["awaiting"][0]],
                     json={"type": "fold", "expected_version": held["version"]})
    assert stale.status_code == 409 and stale.json["current_version"] == ended, stale.json


@pytest.mark.parametrize("method, path, body", [
    ("put", "/seed", {"client_seed": "bob's"}), ("delete", "", None)])
def test_a_players_command_decided_again_after_their_seat_changed_hands_is_refused(
        method, path, body):
    """Bob's command is refused by its append (the table moved on) and decided again on
    a table where bob has left and dan has taken his seat: it is refused, not applied to
    dan's seat (a seed dan did not choose, or dan cashed out by bob's token)."""
    one, other = _two_processes()
    table, admin, players = _table(one)
    store = one.application.extensions["cardroom"].store
    append, racing = store.append, []

    def bob_leaves_and_dan_sits_down_first(*args, **kwargs):
        if not racing:
            racing.append(other.delete(f"{table}/players/2", headers=admin).status_code)
            racing.append(other.post(f"{table}/players",
                                     json={"name": "dan", "buy_in": 700}).json["seat"])
        return append(*args, **kwargs)
    store.append = bob_leaves_and_dan_sits_down_first
    refused = getattr(one, method)(f"{table}/players/2{path}", json=body,
                                   headers=_bearer(players["bob"]["token"]))
    assert racing == [200, 2]
    assert refused.status_code == 403 and refused.json["code"] == "forbidden", refused.json
    dan = next(s for s in other.get(table, headers=admin).json["seats"] if s["seat"] == 2)
    assert (dan["name"], dan["stack"], dan["client_seed"]) == ("dan", 700, "")


def test_a_leave_whose_copy_with_the_same_key_landed_first_gets_its_answer():
    """Two copies of bob's leave with one Idempotency-Key: the one that finds bob gone
    (its copy freed the seat) is answered the first one's answer, not 403."""
    one, other = _two_processes()
    table, admin, players = _table(one)
    leave = {**_bearer(players["bob"]["token"]), "Idempotency-Key": "bob-leaves"}
    room = one.application.extensions["cardroom"]
    read, first = room.table, []

    def the_other_copy_lands_after_the_routes_read(table_id):
        if len(first) == 1:  # the route has read the table: bob is seated there
            first.append(other.delete(f"{table}/players/2", headers=leave))
        first.append(None)
        return read(table_id)
    room.table = the_other_copy_lands_after_the_routes_read
    second = one.delete(f"{table}/players/2", headers=leave)
    landed = first[1]
    assert landed.status_code == 200 and landed.json == {"seat": 2, "cashed_out": 500}
    assert second.status_code == 200 and second.json == landed.json, second.json
    assert second.headers["Idempotent-Replayed"] == "true"
