"""The HTTP contract through the Flask test client on embedded fakeredis."""

import tomllib

import pytest
from pokerkit import HandHistory

from domain.fairness import unseal
from service.store import hand_stream, table_stream


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def start_hand(client, table):
    response = client.post(f"/v1/tables/{table['id']}/hands", headers=table["admin"])
    assert response.status_code == 201, response.json
    return response.json["hand_no"]


def hand_url(table, hand_no, suffix=""):
    return f"/v1/tables/{table['id']}/hands/{hand_no}{suffix}"


def read(client, table, hand_no, seat=1):
    return client.get(hand_url(table, hand_no), headers=table["players"][seat]).json


def act(client, table, hand_no, seat, **body):
    return client.post(hand_url(table, hand_no, "/actions"), json=body,
                       headers=table["players"][seat])


def readable(event, field):
    """The cards of ``event``'s ``field`` as the receiver can read them (None: a commitment)."""
    data = unseal(event["data"], event["openings"])
    return [None if isinstance(card, dict) else card for card in data[field]]


def assert_problem(response, status, code):
    assert response.status_code == status, response.json
    assert response.mimetype == "application/problem+json"
    assert response.json["code"] == code and response.json["status"] == status


def play_to_showdown(client, table, hand_no):
    """Seat 2 (left of the button, seat 1) bets, all call, all stand pat, all check."""
    for seat, body in ((2, {"type": "bet", "amount": 25}), (3, {"type": "call"}),
                       (1, {"type": "call"})):
        assert act(client, table, hand_no, seat, **body).status_code == 201
    for seat in (2, 3, 1):
        assert act(client, table, hand_no, seat, type="draw", cards=[]).status_code == 201
    for seat in (2, 3, 1):
        assert act(client, table, hand_no, seat, type="check").status_code == 201


def test_games_catalog_lists_every_variant_with_its_options(client):
    games = {g["id"]: g for g in client.get("/v1/games").json["games"]}
    assert set(games) == {"five-card-draw", "seven-card-stud", "five-card-stud", "texas-holdem",
                          "omaha", "omaha-hi-lo"}
    draw = games["five-card-draw"]
    assert (draw["min_players"], draw["max_players"]) == (2, 6)
    options = {o["name"]: o for o in draw["options"]}
    assert options["ante"]["default"] == 25 and options["max_raises"]["default"] == 3
    assert options["max_discard"]["default"] == 3
    assert options["rules"]["sets"]["casino"]["structure"] == "fixed-limit"
    assert options["small_blind"]["derived_default"] == "half the big blind"


def test_a_hand_plays_to_a_showdown_settled_by_the_worker(client, fake_backend, table):
    hand_no = start_hand(client, table)
    hand = read(client, table, hand_no)
    assert hand["status"] == "betting" and hand["to_act"] == 2 and hand["pot"] == 75
    play_to_showdown(client, table, hand_no)
    assert read(client, table, hand_no)["status"] == "showdown_pending"
    fake_backend.run_jobs()
    hand = read(client, table, hand_no)
    assert hand["status"] == "ended" and hand["server_seed"] is None  # reveal: auditor
    assert sum(hand["result"]["net"].values()) == 0
    assert all(None not in s["cards"] for s in hand["seats"])  # all shown at showdown
    stacks = [s["stack"] for s in client.get(f"/v1/tables/{table['id']}",
                                             headers=table["admin"]).json["seats"]]
    assert sum(stacks) == 3000 and stacks != [1000, 1000, 1000]
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert audit["valid"], audit


def test_a_player_sees_only_their_own_cards(client, table):
    hand_no = start_hand(client, table)
    hand = read(client, table, hand_no, seat=2)
    cards = {s["seat"]: s["cards"] for s in hand["seats"]}
    assert None not in cards[2] and cards[1] == [None] * 5 and cards[3] == [None] * 5
    assert hand["server_seed"] is None
    events = client.get(hand_url(table, hand_no, "/events"), headers=table["players"][2]).json
    dealt = {e["data"]["seat"]: readable(e, "cards") for e in events["events"]
             if e["type"] == "CardsDealt"}
    assert dealt[2] == cards[2] and dealt[1] == [None] * 5
    started = events["events"][0]
    assert started["type"] == "HandStarted" and set(started["data"]["deck"]) == {"commitment"}
    assert started["openings"] == {} and "seed" not in started["data"]


def test_legal_actions_are_for_the_caller_only(client, table):
    hand_no = start_hand(client, table)
    assert read(client, table, hand_no, seat=1)["legal_actions"] == []
    legal = read(client, table, hand_no, seat=2)["legal_actions"]
    assert {"type": "bet", "min": 25, "max": 25, "step": 25} in legal


HAND_ROUTES = [("GET", ""), ("GET", "?at=1"), ("GET", "/events"), ("GET", "/events/stream"),
               ("GET", "/history"), ("GET", "/history?format=phh"), ("GET", "/receipt"),
               ("GET", "/audit"), ("POST", "/actions")]


@pytest.mark.parametrize("method, suffix", HAND_ROUTES)
def test_a_token_of_another_table_learns_not_whether_a_hand_exists(client, table, method,
                                                                    suffix):
    """Every token of another table gets the same 403 for a hand being played as for one
    that does not exist: the table's token is checked before its hand is looked for."""
    hand_no = start_hand(client, table)
    created = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    joined = client.post(f"/v1/tables/{created['table_id']}/players",
                         json={"name": "eve", "buy_in": 1000}).json
    for token in (joined["token"], created["admin_token"], created["auditor_token"]):
        answers = []
        for number in (hand_no, hand_no + 1, 0):
            answer = client.open(hand_url(table, number, suffix), method=method,
                                 json={"type": "fold"} if method == "POST" else None,
                                 headers=auth(token))
            assert_problem(answer, 403, "forbidden")
            answers.append({k: v for k, v in answer.json.items() if k != "request_id"})
        assert answers[0] == answers[1] == answers[2]


def test_illegal_moves_get_their_codes_and_write_nothing(client, table):
    hand_no = start_hand(client, table)
    version = read(client, table, hand_no)["version"]
    assert_problem(act(client, table, hand_no, 1, type="check"), 403, "not_your_turn")
    assert_problem(act(client, table, hand_no, 2, type="bet", amount=100), 422,
                   "amount_out_of_range")
    assert_problem(act(client, table, hand_no, 2, type="call"), 422, "illegal_action")
    assert_problem(act(client, table, hand_no, 2, type="draw", cards=["As"]), 422,
                   "illegal_action")
    assert_problem(act(client, table, hand_no, 2, type="shove"), 422, "invalid_request")
    assert_problem(act(client, table, hand_no, 2, type="bet", amount=-25), 422, "invalid_request")
    assert_problem(act(client, table, hand_no, 2, type="bet", amount="25"), 422,
                   "invalid_request")
    assert_problem(act(client, table, hand_no, 2, type="bet", amount=10**12), 422,
                   "amount_out_of_range")  # more than the stack, less than a stack may be
    assert_problem(act(client, table, hand_no, 2, type="bet", amount=2**53), 422,
                   "invalid_request")
    assert_problem(act(client, table, hand_no, 2, type="draw", cards=["Zz"]), 422,
                   "invalid_request")
    assert_problem(act(client, table, hand_no, 2, type="check", extra=1), 422, "invalid_request")
    assert read(client, table, hand_no)["version"] == version


def test_a_draw_of_cards_not_held_is_refused(client, table):
    hand_no = start_hand(client, table)
    for seat in (2, 3, 1):
        act(client, table, hand_no, seat, type="check")
    mine = read(client, table, hand_no, seat=2)["seats"][1]["cards"]
    theirs = [c for c in ("As", "Kd", "2c", "7h", "9s", "Tc") if c not in mine][:1]
    assert_problem(act(client, table, hand_no, 2, type="draw", cards=theirs), 422,
                   "card_not_in_hand")
    assert_problem(act(client, table, hand_no, 2, type="draw", cards=mine[:4]), 422,
                   "too_many_discards")


def test_tokens_are_checked(client, table):
    hand_no = start_hand(client, table)
    url = hand_url(table, hand_no)
    assert_problem(client.get(url), 401, "unauthorized")
    assert_problem(client.get(url, headers=auth("nope")), 403, "forbidden")
    twice = [("Authorization", table["admin"]["Authorization"])] * 2  # arrives comma-joined
    refused = client.get(url, headers=twice)
    assert_problem(refused, 401, "unauthorized")
    assert "one Authorization header" in refused.json["detail"]
    other = client.post("/v1/tables", json={"game": "five-card-draw"}).json
    assert_problem(client.get(url, headers=auth(other["admin_token"])), 403, "forbidden")
    assert_problem(client.post(f"/v1/tables/{table['id']}/hands", headers=table["players"][1]),
                   403, "forbidden")
    assert_problem(client.post(url + "/actions", json={"type": "check"}, headers=table["admin"]),
                   403, "forbidden")
    assert_problem(client.get(url + "/audit", headers=table["players"][1]), 403, "forbidden")
    assert_problem(client.get(url + "/history", headers=table["players"][1]), 409,
                   "hand_not_ended")
    assert_problem(client.post(f"/v1/tables/{table['id']}/players/2/chips", json={"amount": 5},
                               headers=table["players"][1]), 403, "not_your_seat")


def test_unknown_tables_hands_and_bad_bodies(client, table):
    assert_problem(client.get("/v1/tables/nope", headers=table["admin"]), 404, "table_not_found")
    assert_problem(client.get(hand_url(table, 9), headers=table["admin"]), 404, "hand_not_found")
    assert_problem(client.post("/v1/tables", data="{", content_type="application/json"), 400,
                   "malformed_json")
    assert_problem(client.post("/v1/tables", json=[1]), 422, "invalid_request")
    assert_problem(client.post("/v1/tables", json={"game": "go-fish"}), 422, "unknown_game")
    assert_problem(client.post("/v1/tables", json={"game": "five-card-draw",
                                                   "options": {"antes": 5}}), 422,
                   "unknown_option")
    assert_problem(client.post("/v1/tables", json={"game": "five-card-draw",
                                                   "options": {"max_discard": 6}}), 422,
                   "invalid_option")
    assert_problem(client.post("/v1/tables", json={"game": "five-card-draw", "max_seats": 9}),
                   422, "invalid_max_seats")
    for value, shown in ((None, "null"), (True, "true"), (["full"], '["full"]')):
        refused = client.post("/v1/tables", json={"game": "texas-holdem",
                                                  "options": {"short_forced_bet": value}})
        assert_problem(refused, 422, "invalid_option")  # the value as the client wrote it
        assert refused.json["detail"].endswith(f"must be a string, not {shown}")
    assert_problem(client.post(f"/v1/tables/{table['id']}/players",
                               json={"name": "dee", "buy_in": 0}), 422, "invalid_request")


def test_house_stud_seats_two_to_six_players_as_its_rule_book_says(client):
    """000: Seven Card Stud, "2-6 Players"; 003's cardroom stud seats eight (it deals a
    community river when the deck runs short)."""
    def created(**asked):
        return client.post("/v1/tables", json={"game": "seven-card-stud", **asked})
    games = {game["id"]: game for game in client.get("/v1/games").json["games"]}
    assert games["seven-card-stud"]["max_players_by_rules"] == {"house": 6}
    assert "max_players_by_rules" not in games["five-card-stud"]
    assert created(options={"rules": "house"}).json["max_seats"] == 6
    refused = created(options={"rules": "house"}, max_seats=7)
    assert_problem(refused, 422, "invalid_max_seats")
    assert "2 to 6 players under rules house" in refused.json["detail"]
    assert created(options={"rules": "house"}, max_seats=2).json["max_seats"] == 2
    assert created().json["max_seats"] == created(options={"rules": "cardroom"},
                                                  max_seats=8).json["max_seats"] == 8


def test_a_stale_expected_version_gets_409_with_the_current_version(client, table):
    hand_no = start_hand(client, table)
    version = read(client, table, hand_no)["version"]
    first = act(client, table, hand_no, 2, type="check", expected_version=version)
    assert first.status_code == 201 and first.json["version"] > version
    stale = act(client, table, hand_no, 3, type="check", expected_version=version)
    assert_problem(stale, 409, "version_conflict")
    assert stale.json["current_version"] == first.json["version"]
    etag = client.get(hand_url(table, hand_no), headers=table["players"][3]).headers["ETag"]
    matched = client.post(hand_url(table, hand_no, "/actions"), json={"type": "check"},
                          headers={**table["players"][3], "If-Match": etag})
    assert matched.status_code == 201


def test_a_read_at_an_earlier_version_is_tagged_with_that_version(client, table):
    """The ETag is the version of the hand as answered: an ``If-Match`` with it is stale."""
    hand_no = start_hand(client, table)
    assert act(client, table, hand_no, 2, type="check").status_code == 201
    past = client.get(hand_url(table, hand_no) + "?at=2", headers=table["players"][3])
    assert past.json["version"] == 2 and past.headers["ETag"] == '"2"'
    stale = client.post(hand_url(table, hand_no, "/actions"), json={"type": "check"},
                        headers={**table["players"][3], "If-Match": past.headers["ETag"]})
    assert_problem(stale, 409, "version_conflict")


def test_if_match_star_pins_no_version(client, table):
    """``*`` is any version (RFC 9110): the move is made on the hand as it stands."""
    hand_no = start_hand(client, table)
    moved = act(client, table, hand_no, 2, type="check")
    assert moved.status_code == 201
    matched = client.post(hand_url(table, hand_no, "/actions"), json={"type": "check"},
                          headers={**table["players"][3], "If-Match": " * "})
    assert matched.status_code == 201 and matched.json["version"] > moved.json["version"]
    assert_problem(client.post(hand_url(table, hand_no, "/actions"), json={"type": "check"},
                               headers={**table["players"][1], "If-Match": "*, \"3\""}),
                   422, "invalid_if_match")


@pytest.mark.parametrize("tag", ['W/"{v}"', "{v}", '"0{v}"', '"{v}'])
def test_if_match_takes_only_the_tag_a_read_answers(client, table, tag):
    """If-Match compares strongly (RFC 9110): a weak tag never matches, and an unquoted or
    zero-padded version is not the tag a read gives. Each is refused, and no move is made."""
    hand_no = start_hand(client, table)
    etag = client.get(hand_url(table, hand_no), headers=table["players"][2]).headers["ETag"]
    version = int(etag.strip('"'))
    refused = client.post(hand_url(table, hand_no, "/actions"), json={"type": "check"},
                          headers={**table["players"][2], "If-Match": tag.format(v=version)})
    assert_problem(refused, 422, "invalid_if_match")
    assert read(client, table, hand_no)["version"] == version


def test_a_retried_action_with_the_same_idempotency_key_applies_once(client, fake_backend, table):
    hand_no = start_hand(client, table)
    headers = {**table["players"][2], "Idempotency-Key": "k-1"}
    first = client.post(hand_url(table, hand_no, "/actions"),
                        json={"type": "bet", "amount": 25}, headers=headers)
    again = client.post(hand_url(table, hand_no, "/actions"),
                        json={"type": "bet", "amount": 25}, headers=headers)
    assert first.status_code == again.status_code == 201 and first.json == again.json
    events = fake_backend.redis.xlen(hand_stream(table["id"], hand_no))
    assert events == first.json["version"]


def test_a_keys_request_pins_its_version_by_if_match_or_the_body_alike(client, table):
    """``If-Match: "v"`` and ``expected_version: v`` are one pin: a retry may move it from
    one to the other, but not drop it or change it."""
    hand_no = start_hand(client, table)
    version = read(client, table, hand_no, seat=2)["version"]
    url, key = hand_url(table, hand_no, "/actions"), {"Idempotency-Key": "k-pin"}
    first = client.post(url, json={"type": "bet", "amount": 25},
                        headers={**table["players"][2], **key, "If-Match": f'"{version}"'})
    moved = client.post(url, json={"type": "bet", "amount": 25, "expected_version": version},
                        headers={**table["players"][2], **key})
    assert first.status_code == moved.status_code == 201 and moved.json == first.json
    assert moved.headers["Idempotent-Replayed"] == "true"
    for headers in ({}, {"If-Match": f'"{version + 5}"'}):
        dropped = client.post(url, json={"type": "bet", "amount": 25},
                              headers={**table["players"][2], **key, **headers})
        assert_problem(dropped, 422, "idempotency_key_reused")


def test_a_key_is_the_players_own_not_the_seats(client, table):
    """A player who takes a seat after another left it may use the keys the other used:
    their chips are added and their move is judged, not answered with the other's."""
    url = f"/v1/tables/{table['id']}/players"
    key = {"Idempotency-Key": "add-100"}
    assert client.post(f"{url}/1/chips", json={"amount": 100},
                       headers={**table["players"][1], **key}).json["stack"] == 1100
    hand_no = start_hand(client, table)
    fold = {**table["players"][2], "Idempotency-Key": "fold"}
    assert client.post(hand_url(table, hand_no, "/actions"), json={"type": "fold"},
                       headers=fold).status_code == 201
    act(client, table, hand_no, 3, type="fold")  # the hand is over
    for seat in (1, 2):
        client.delete(f"{url}/{seat}", headers=table["admin"])
    newcomers = {}
    for name in ("dee", "eve"):
        joined = client.post(url, json={"name": name, "buy_in": 500}).json
        newcomers[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
    assert sorted(newcomers) == [1, 2]
    added = client.post(f"{url}/1/chips", json={"amount": 100}, headers={**newcomers[1], **key})
    assert added.status_code == 201 and added.json == {"seat": 1, "stack": 600}
    assert "Idempotent-Replayed" not in added.headers
    old_hand = client.post(hand_url(table, hand_no, "/actions"), json={"type": "fold"},
                           headers={**newcomers[2], "Idempotency-Key": "fold"})
    assert_problem(old_hand, 422, "hand_over")


def test_a_retry_after_the_hand_ended_gets_the_first_answer(client, fake_backend):
    """Seven Card Stud: a call that closes sixth street deals every player a down card; a
    retry of it after the showdown is answered as it was, not with the cards shown since."""
    created = client.post("/v1/tables", json={"game": "seven-card-stud"}).json
    table = f"/v1/tables/{created['table_id']}"
    admin = {"Authorization": f"Bearer {created['admin_token']}"}
    tokens = {}
    for name in ("ann", "bob", "cy"):
        joined = client.post(f"{table}/players", json={"name": name, "buy_in": 1000}).json
        tokens[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
    hand = f"{table}/hands/{client.post(f'{table}/hands', headers=admin).json['hand_no']}"
    sent = []
    while (view := client.get(hand, headers=admin).json)["awaiting"]:
        seat = view["awaiting"][0]
        kinds = {a["type"] for a in client.get(hand, headers=tokens[seat]).json["legal_actions"]}
        move = {"type": next(k for k in ("check", "call", "bring_in") if k in kinds)}
        headers = {**tokens[seat], "Idempotency-Key": f"move-{view['version']}"}
        first = client.post(f"{hand}/actions", json=move, headers=headers)
        assert first.status_code == 201, first.json
        sent.append((move, headers, first.json))
    fake_backend.run_jobs()
    assert client.get(hand, headers=admin).json["status"] == "ended"
    for move, headers, first in sent:
        again = client.post(f"{hand}/actions", json=move, headers=headers)
        assert again.headers["Idempotent-Replayed"] == "true" and again.json == first


def test_a_retried_join_seats_the_player_once(client, fake_backend, table):
    url = f"/v1/tables/{table['id']}/players"
    first = client.post(url, json={"name": "dee", "buy_in": 500}, headers={"Idempotency-Key": "j"})
    again = client.post(url, json={"name": "dee", "buy_in": 500}, headers={"Idempotency-Key": "j"})
    assert first.json == again.json
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).json["seats"]
    assert [s["name"] for s in seats].count("dee") == 1


def test_chips_are_added_and_players_leave_only_between_hands(client, fake_backend, table):
    url = f"/v1/tables/{table['id']}/players"
    hand_no = start_hand(client, table)
    assert_problem(client.post(f"{url}/1/chips", json={"amount": 100},
                               headers=table["players"][1]), 409, "hand_in_progress")
    assert_problem(client.delete(f"{url}/1", headers=table["players"][1]), 409, "hand_in_progress")
    for seat in (2, 3):
        act(client, table, hand_no, seat, type="bet" if seat == 2 else "fold",
            **({"amount": 25} if seat == 2 else {}))
    act(client, table, hand_no, 1, type="fold")
    assert client.post(f"{url}/1/chips", json={"amount": 100},
                       headers=table["players"][1]).json == {"seat": 1, "stack": 1075}
    left = client.delete(f"{url}/3", headers=table["admin"])
    assert left.status_code == 200 and left.json == {"seat": 3, "cashed_out": 975}
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).json["seats"]
    assert {s["seat"]: s["stack"] for s in seats} == {1: 1075, 2: 1050}


def test_a_player_who_left_reads_only_the_hands_they_were_dealt_into(client, fake_backend,
                                                                   table):
    """Their receipt above all: a signed receipt a player cannot fetch proves nothing to them."""
    url, cy = f"/v1/tables/{table['id']}", table["players"][3]
    first = start_hand(client, table)
    for seat, move in ((2, {"type": "bet", "amount": 25}), (3, {"type": "fold"}),
                       (1, {"type": "fold"})):
        assert act(client, table, first, seat, **move).status_code == 201
    fake_backend.run_jobs()
    own_cards = read(client, table, first, seat=3)["seats"][2]["cards"]
    assert None not in own_cards and read(client, table, first)["seats"][2]["cards"] == [None] * 5
    assert client.delete(f"{url}/players/3", headers=cy).status_code == 200

    assert client.get(hand_url(table, first), headers=cy).json["seats"][2]["cards"] == own_cards
    receipt = client.get(hand_url(table, first, "/receipt"), headers=cy)
    assert receipt.status_code == 200 and receipt.json["signature"]
    assert client.get(hand_url(table, first, "/history"), headers=cy).status_code == 200
    assert client.get(hand_url(table, first, "/events"), headers=cy).status_code == 200
    assert_problem(client.get(url, headers=cy), 403, "forbidden")
    assert_problem(client.post(f"{url}/players/3/chips", json={"amount": 5}, headers=cy),
                   403, "forbidden")

    assert_problem(client.get(hand_url(table, 99), headers=cy), 403, "forbidden")  # not 404
    dee = client.post(f"{url}/players", json={"name": "dee", "buy_in": 1000}).json
    assert dee["seat"] == 3
    second = start_hand(client, table)
    for path in ("", "/events", "/receipt", "/history"):
        assert_problem(client.get(hand_url(table, second, path), headers=cy), 403, "forbidden")
    assert_problem(client.post(hand_url(table, second, "/actions"), json={"type": "fold"},
                               headers=cy), 403, "forbidden")


def test_a_dealers_choice_game_whose_amounts_contradict_is_not_dealt_and_says_why(client):
    """Five card draw's house structure leaves big_bet unused; fixed-limit stud would bet
    less in its upper rounds than in its lower ones."""
    table = client.post("/v1/tables", json={"game": "five-card-draw", "options": {
        "dealers_choice": True, "big_bet": 10}}).json
    for name in ("ann", "bob"):
        client.post(f"/v1/tables/{table['table_id']}/players", json={"name": name,
                                                                     "buy_in": 1000})
    hands = f"/v1/tables/{table['table_id']}/hands"
    admin = auth(table["admin_token"])
    refused = client.post(hands, json={"game": "seven-card-stud"}, headers=admin)
    assert_problem(refused, 422, "invalid_option")
    assert refused.json["detail"].startswith("Seven Card Stud cannot be dealt at this table")
    assert client.post(hands, json={}, headers=admin).status_code == 201  # its own game is


def test_the_button_moves_one_seat_left_after_each_hand(client, table):
    buttons = []
    for _ in range(3):
        hand_no = start_hand(client, table)
        hand = read(client, table, hand_no)
        buttons.append(hand["button"])
        first, second = hand["to_act"], hand["to_act"] % 3 + 1
        act(client, table, hand_no, first, type="bet", amount=25)
        act(client, table, hand_no, second, type="fold")
        act(client, table, hand_no, second % 3 + 1, type="fold")
    assert buttons == [1, 2, 3]


def test_a_big_blind_that_leaves_leaves_a_dead_small_blind_and_the_hand_audits(client):
    """``dead_button``: seat 3 posts the big blind and leaves; in the next hand its seat
    holds the small blind, which nobody posts, and seat 4 posts the big one (it does not
    skip it). The hand audits valid, and PokerKit replays its PHH export."""
    created = client.post("/v1/tables", json={"game": "texas-holdem"}).json
    table = {"id": created["table_id"], "admin": auth(created["admin_token"]), "players": {}}
    for name in ("ann", "bob", "cy", "di"):
        seated = client.post(f"/v1/tables/{table['id']}/players",
                             json={"name": name, "buy_in": 1000}).json
        table["players"][seated["seat"]] = auth(seated["token"])
    first = start_hand(client, table)
    for seat in (4, 1, 2):
        assert act(client, table, first, seat, type="fold").status_code == 201
    left = client.delete(f"/v1/tables/{table['id']}/players/3", headers=table["players"][3])
    assert left.status_code == 200, left.json
    second = start_hand(client, table)
    hand = read(client, table, second)
    assert hand["button"] == 2 and hand["to_act"] == 1
    assert {s["seat"]: s["bet"] for s in hand["seats"]} == {1: 0, 2: 0, 4: 50}
    for seat in (1, 2):
        assert act(client, table, second, seat, type="fold").status_code == 201
    auditor = auth(created["auditor_token"])
    assert client.get(hand_url(table, second, "/audit"), headers=auditor).json["valid"]
    text = client.get(hand_url(table, second, "/history?format=phh"), headers=auditor).text
    *_, state = HandHistory.loads(text)
    assert list(state.stacks) == tomllib.loads(text)["finishing_stacks"] == [1000, 1000, 975]


def test_history_and_audit_after_an_uncontested_hand(client, fake_backend, table):
    hand_no = start_hand(client, table)
    act(client, table, hand_no, 2, type="bet", amount=25)
    act(client, table, hand_no, 3, type="fold")
    act(client, table, hand_no, 1, type="fold")
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][3]).json
    assert history["events"][-1]["type"] == "HandEnded" and history["server_seed"] is None
    dealt = [e for e in history["events"] if e["type"] == "CardsDealt"]
    assert {e["data"]["seat"]: None in readable(e, "cards") for e in dealt} == {
        1: True, 2: True, 3: False}
    full = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    assert all(None not in readable(e, "cards") for e in full["events"] if e["type"] == "CardsDealt")
    assert full["server_seed"] and full["receipt"] == history["receipt"] is not None
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert audit["valid"] and audit["status"] == "ended"
    assert [c["name"] for c in audit["checks"]] == [
        "hash_chain", "commitments", "shown_hands", "seed_commitment", "deck", "receipt",
        "table_chain", "table_signed", "completeness", "table_start", "table_settlement",
        "replay_legality", "chip_conservation"]
    assert fake_backend.redis.xlen(table_stream(table["id"])) == 6  # created, 3 seated, opened, settled


def test_the_audit_detects_an_edited_event(client, fake_backend, table):
    hand_no = start_hand(client, table)
    act(client, table, hand_no, 2, type="bet", amount=25)
    act(client, table, hand_no, 3, type="fold")
    act(client, table, hand_no, 1, type="fold")
    stream = hand_stream(table["id"], hand_no)
    entries = fake_backend.redis.xrange(stream)
    fake_backend.redis.delete(stream)
    for entry_id, entry in entries:
        data = {k.decode(): v.decode() for k, v in entry.items()}
        if data["type"] == "BetPlaced":
            assert '"to":25' in data["data"]
            data["data"] = data["data"].replace('"to":25', '"to":50')
        fake_backend.redis.xadd(stream, data, id=entry_id)
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert not audit["valid"]
    assert not next(c for c in audit["checks"] if c["name"] == "hash_chain")["ok"]


def test_health_and_docs_are_served(client):
    assert client.get("/healthz").json == {"status": "ok"}
    assert client.get("/openapi.yaml").status_code == 200
    for page in ("/docs", "/replay/t/1"):  # neither framed elsewhere nor sniffed
        headers = client.get(page).headers
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], page
        assert "unsafe-inline" not in headers["Content-Security-Policy"], page
        assert headers["X-Content-Type-Options"] == "nosniff", page


def test_a_table_id_with_braces_is_simply_not_found(client, table):
    assert_problem(client.get("/v1/tables/a{b}c", headers=table["admin"]), 404, "table_not_found")


@pytest.mark.parametrize("path", ["/v1/tables/{id}", "/v1/tables/{id}/hands/1"])
def test_a_long_table_id_is_not_found_and_repeated_only_in_part(client, table, path):
    """A made-up id of 3,000 characters is answered by its first 64, not echoed whole."""
    made_up = "q" * 3000
    response = client.get(path.format(id=made_up), headers=table["admin"])
    assert_problem(response, 404, "table_not_found")
    assert response.json["detail"] == f"no table {made_up[:64]}..."


def test_a_fixed_limit_all_in_bet_of_less_than_half_a_bet_is_completed(client, fake_backend):
    """``half_bet_rule``: seat 2 bets its last 4 chips on the flop, less than half the bet of
    10; seat 3 is offered to call or complete to 10, completes, seat 1 raises a full bet
    over the completion, and the hand audits valid."""
    created = client.post("/v1/tables", json={"game": "texas-holdem", "options": {
        "structure": "fixed-limit", "big_blind": 10, "half_bet_rule": True}}).json
    table = {"id": created["table_id"], "admin": auth(created["admin_token"]),
             "auditor": auth(created["auditor_token"]), "players": {}}
    for name, buy_in in (("ann", 1000), ("bob", 14), ("cy", 1000)):
        joined = client.post(f"/v1/tables/{table['id']}/players",
                             json={"name": name, "buy_in": buy_in}).json
        table["players"][joined["seat"]] = auth(joined["token"])
    hand_no = start_hand(client, table)
    for seat, body in ((1, {"type": "call"}), (2, {"type": "call"}), (3, {"type": "check"}),
                       (2, {"type": "bet", "amount": 4})):
        assert act(client, table, hand_no, seat, **body).status_code == 201
    assert read(client, table, hand_no, seat=3)["legal_actions"] == [
        {"type": "call", "amount": 4}, {"type": "complete", "amount": 10}, {"type": "fold"}]
    assert_problem(act(client, table, hand_no, 3, type="raise", amount=14), 422,
                   "illegal_action")
    assert act(client, table, hand_no, 3, type="complete").status_code == 201
    raise_ = next(a for a in read(client, table, hand_no)["legal_actions"] if a["type"] == "raise")
    assert (raise_["min"], raise_["max"]) == (20, 20)
    assert act(client, table, hand_no, 1, type="raise", amount=20).status_code == 201
    assert act(client, table, hand_no, 3, type="call").status_code == 201
    while (hand := read(client, table, hand_no))["status"] == "betting":
        assert act(client, table, hand_no, hand["to_act"], type="check").status_code == 201
    fake_backend.run_jobs()
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert audit["valid"], audit


def test_a_history_discloses_no_idempotency_key(client, fake_backend, table):
    """A key replayed gets its first answer (a table's tokens, say), and histories are
    handed around: events carry a digest of the key, the same for one command's events."""
    start = client.post(f"/v1/tables/{table['id']}/hands",
                        headers={**table["admin"], "Idempotency-Key": "start-key-1"})
    hand_no = start.json["hand_no"]
    act(client, table, hand_no, 2, type="fold")
    response = client.post(hand_url(table, hand_no, "/actions"), json={"type": "fold"},
                           headers={**table["players"][3], "Idempotency-Key": "fold-key-3"})
    assert response.status_code == 201
    history = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    text = str(history)
    assert "start-key-1" not in text and "fold-key-3" not in text
    started = {e["command_id"] for e in history["events"] if e["version"] <= 3}
    folded = {e["command_id"] for e in response.json["events"]}
    assert len(started) == len(folded) == 1 and started != folded and None not in started


def test_the_reshuffle_key_is_hidden_as_the_deck_is(client, fake_backend, table):
    """Players never open HandStarted's reshuffle_key, not even after the hand; the auditor
    does, and it is the one the revealed server seed makes."""
    from domain.fairness import reshuffle_key
    hand_no = start_hand(client, table)
    for seat in (2, 3):
        act(client, table, hand_no, seat, type="fold")
    player = client.get(hand_url(table, hand_no, "/history"), headers=table["players"][1]).json
    started = player["events"][0]
    assert set(started["data"]["reshuffle_key"]) == {"commitment"}
    assert not {"/deck", "/reshuffle_key"} & set(started["openings"])
    auditor = client.get(hand_url(table, hand_no, "/history"), headers=table["auditor"]).json
    opened = auditor["events"][0]["openings"]["/reshuffle_key"]["value"]
    assert opened == reshuffle_key(auditor["server_seed"])
    audit = client.get(hand_url(table, hand_no, "/audit"), headers=table["auditor"]).json
    assert audit["valid"], audit
