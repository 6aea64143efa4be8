"""Protocol details a new client runs into, through the Flask test client on embedded
fakeredis: where ``/`` leads, trailing slashes, bodies not sent as JSON (415) or naming a key
twice (400), the ``Allow``
header of a 405, bad query parameters named as such, and the ``Idempotent-Replayed`` header
of an answer given again to a retry."""

from __future__ import annotations

import gzip
import io
from urllib.parse import unquote_to_bytes

import pytest


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["code"] == code and problem["status"] == status, problem
    return problem


def hand_url(table: dict, hand_no: int, suffix: str = "") -> str:
    return f"/v1/tables/{table['id']}/hands/{hand_no}{suffix}"


@pytest.fixture
def hand(client, table) -> int:
    response = client.post(f"/v1/tables/{table['id']}/hands", headers=table["admin"])
    assert response.status_code == 201, response.get_json()
    return response.get_json()["hand_no"]


# --- where things are ----------------------------------------------------------


def test_the_root_redirects_to_the_api_reference(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"] == "/docs"
    assert client.get("/", follow_redirects=True).mimetype == "text/html"


@pytest.mark.parametrize("path, target", [
    ("/v1/games/", "/v1/games"),
    ("/v1/games//", "/v1/games"),
    ("/healthz/?verbose=1", "/healthz?verbose=1"),
    ("/v1/tables/abc/", "/v1/tables/abc"),
    ("/v1/tables/abc/hands/1/events/?after=2", "/v1/tables/abc/hands/1/events?after=2"),
])
def test_a_get_with_a_trailing_slash_is_redirected_to_the_path_without_it(client, path, target):
    response = client.get(path)
    assert response.status_code == 308, response.get_data(as_text=True)
    assert response.headers["Location"] == target


@pytest.mark.parametrize("sent, target", [
    ("/v1/tables/%FF/", "/v1/tables/%FF"),  # no UTF-8: kept as sent, not made U+FFFD
    ("/v1/tables/caf%C3%A9/", "/v1/tables/caf%C3%A9"),
    ("/v1/tables/%EF%BF%BD/", "/v1/tables/%EF%BF%BD"),  # U+FFFD itself
])
def test_a_trailing_slash_is_redirected_to_the_bytes_sent(client, sent, target):
    raw = unquote_to_bytes(sent).decode("latin-1")  # PATH_INFO as a WSGI server gives it
    response = client.get("/", environ_overrides={"PATH_INFO": raw})
    assert response.status_code == 308 and response.headers["Location"] == target


def test_a_redirected_trailing_slash_leads_to_the_route(client):
    response = client.get("/v1/games/", follow_redirects=True)
    assert response.status_code == 200 and response.get_json()["games"]


def test_a_post_with_a_trailing_slash_gets_a_404_that_names_the_path(client, fake_backend):
    problem = assert_problem(client.post("/v1/tables/", json={"game": "five-card-draw"}), 404,
                             "not_found")
    assert "/v1/tables," in problem["detail"] and "trailing slash" in problem["detail"]
    assert fake_backend.redis.dbsize() == 0  # no table was made


def test_a_write_to_a_table_path_with_a_trailing_slash_names_the_path(client, table):
    problem = assert_problem(client.post(f"/v1/tables/{table['id']}/hands/",
                                         headers=table["admin"]), 404, "not_found")
    assert f"/v1/tables/{table['id']}/hands," in problem["detail"]


def test_a_long_path_with_a_trailing_slash_is_named_by_its_start(client):
    """A made-up table id of 3,000 characters is not repeated whole, twice."""
    path = f"/v1/tables/{'q' * 3000}/players/"
    problem = assert_problem(client.post(path, json={"name": "x", "buy_in": 100}), 404,
                             "not_found")
    assert problem["detail"] == (f"there is no route at {path[:128]}...; the path is "
                                 f"{path[:128]}..., without the trailing slash")


@pytest.mark.parametrize("path, target", [
    ("/v1//games", "/v1/games"),
    ("/v1/tables//abc/hands/1//events/?after=2", "/v1/tables/abc/hands/1/events?after=2"),
])
def test_a_get_with_a_doubled_slash_is_redirected_to_a_path_of_this_service(client, path,
                                                                            target):
    response = client.get(path, headers={"Host": "elsewhere.example"})
    assert response.status_code == 308, response.get_data(as_text=True)
    assert response.headers["Location"] == target  # not to the host the request named


@pytest.mark.parametrize("path", ["/v1//tables", "/v1//tables/"])
def test_a_post_with_a_doubled_slash_gets_a_404_that_names_the_path(client, fake_backend, path):
    problem = assert_problem(client.post(path, json={"game": "five-card-draw"}), 404,
                             "not_found")
    assert "the path is /v1/tables," in problem["detail"]
    assert fake_backend.redis.dbsize() == 0  # no table was made


def test_a_path_that_starts_with_a_doubled_slash_is_redirected_or_refused(client, fake_backend):
    """As gunicorn gives it: Werkzeug's ``path`` drops the slashes a path starts with."""
    doubled = {"environ_overrides": {"PATH_INFO": "//v1/tables"}}
    problem = assert_problem(client.post("/", json={"game": "five-card-draw"}, **doubled), 404,
                             "not_found")
    assert "the path is /v1/tables," in problem["detail"]
    assert fake_backend.redis.dbsize() == 0  # no table was made
    response = client.get("/", environ_overrides={"PATH_INFO": "//v1/games"})
    assert response.status_code == 308 and response.headers["Location"] == "/v1/games"


@pytest.mark.parametrize("method", ["DELETE", "POST"])
def test_a_method_the_path_without_the_slash_refuses_gets_its_405(client, method):
    response = client.open("/v1/games/", method=method)
    problem = assert_problem(response, 405, "method_not_allowed")
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS"}
    assert problem["detail"] == (f"{method} is not allowed at /v1/games/, which takes GET, "
                                 "HEAD, OPTIONS")


@pytest.mark.parametrize("path, allowed", [
    ("/v1/tables", {"OPTIONS", "POST"}), ("/v1/games", {"GET", "HEAD", "OPTIONS"}),
    ("/v1/tables/t1/hands/1/actions", {"OPTIONS", "POST"})])
def test_options_answers_the_methods_a_path_takes_with_no_content(client, fake_backend, path,
                                                                   allowed):
    response = client.open(path, method="OPTIONS")
    assert response.status_code == 204 and response.data == b""
    assert "Content-Type" not in response.headers
    assert set(response.headers["Allow"].split(", ")) == allowed
    assert fake_backend.redis.dbsize() == 0


def test_an_unknown_path_with_a_trailing_slash_is_a_plain_404(client):
    problem = assert_problem(client.get("/v1/nothing-here/"), 404, "not_found")
    assert "trailing slash" not in problem["detail"]
    assert_problem(client.get("/v1/nothing-here"), 404, "not_found")


# --- methods -------------------------------------------------------------------


def test_a_method_the_path_does_not_take_gets_405_with_allow(client, table):
    response = client.put("/v1/tables", json={})
    problem = assert_problem(response, 405, "method_not_allowed")
    assert problem["detail"].startswith("PUT is not allowed at /v1/tables, which takes ")
    assert {m.strip() for m in response.headers["Allow"].split(",")} >= {"POST"}
    assert "GET" not in response.headers["Allow"]

    response = client.post(f"/v1/tables/{table['id']}", json={}, headers=table["admin"])
    assert_problem(response, 405, "method_not_allowed")
    assert "GET" in response.headers["Allow"] and "POST" not in response.headers["Allow"]


# --- bodies --------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", None, "application/xml"])
def test_a_body_not_sent_as_json_gets_415_and_makes_nothing(client, fake_backend, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post("/v1/tables", data='{"game": "five-card-draw"}', headers=headers)
    problem = assert_problem(response, 415, "unsupported_media_type")
    assert "Content-Type: application/json" in problem["detail"]
    assert problem["detail"].endswith(f"(this one came as {content_type})" if content_type
                                      else "(this one came with no Content-Type)")
    assert fake_backend.redis.dbsize() == 0


@pytest.mark.parametrize("content_type", [
    "application/json", "application/json; charset=utf-8", "application/merge-patch+json"])
def test_json_content_types_are_taken(client, content_type):
    response = client.post("/v1/tables", data='{"game": "five-card-draw"}',
                           headers={"Content-Type": content_type})
    assert response.status_code == 201, response.get_json()

@pytest.mark.parametrize("coding", ["gzip", "deflate", "br, gzip"])
def test_a_compressed_body_gets_415_naming_the_coding_and_makes_nothing(client, fake_backend,
                                                                        coding):
    packed = gzip.compress(b'{"game": "five-card-draw"}')
    response = client.post("/v1/tables", data=packed, content_type="application/json",
                           headers={"Content-Encoding": coding})
    problem = assert_problem(response, 415, "unsupported_media_type")
    assert coding in problem["detail"] and "uncompressed" in problem["detail"]
    assert response.headers["Accept-Encoding"] == "identity"
    assert fake_backend.redis.dbsize() == 0


def test_a_transfer_coding_besides_chunked_gets_501_before_the_body_is_read(client,
                                                                          fake_backend):
    upload = io.BytesIO(gzip.compress(b'{"game": "five-card-draw"}'))
    response = client.post("/v1/tables", content_type="application/json",
                           headers={"Transfer-Encoding": "gzip, chunked"},
                           environ_overrides={"wsgi.input": upload,
                                              "wsgi.input_terminated": True})
    problem = assert_problem(response, 501, "unsupported_transfer_coding")
    assert "gzip, chunked" in problem["detail"]
    assert upload.tell() == 0 and fake_backend.redis.dbsize() == 0


def test_a_body_marked_identity_encoded_is_taken(client):
    response = client.post("/v1/tables", json={"game": "five-card-draw"},
                           headers={"Content-Encoding": "identity"})
    assert response.status_code == 201, response.get_json()


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_body_not_sent_as_json_to_a_route_that_reads_none_gets_415(client, table,
                                                                      content_type):
    headers = {**table["admin"], **({"Content-Type": content_type} if content_type else {})}
    response = client.get(f"/v1/tables/{table['id']}", data="limit=5", headers=headers)
    problem = assert_problem(response, 415, "unsupported_media_type")
    assert "reads no request body" in problem["detail"]
    came = f"as {content_type}" if content_type else "with no Content-Type"
    assert f"(this one came {came})" in problem["detail"]


def test_a_compressed_body_to_a_route_that_reads_none_gets_415(client, table):
    headers = {**table["admin"], "Content-Encoding": "gzip"}
    response = client.get(f"/v1/tables/{table['id']}", data=gzip.compress(b"{}"),
                          content_type="application/json", headers=headers)
    problem = assert_problem(response, 415, "unsupported_media_type")
    assert "reads no request body" in problem["detail"] and "gzip" in problem["detail"]


def test_a_json_body_to_a_route_that_reads_none_is_ignored(client, table):
    response = client.get(f"/v1/tables/{table['id']}", json={}, headers=table["admin"])
    assert response.status_code == 200, response.get_json()


def test_a_leave_sent_with_a_form_body_gets_415_and_the_player_stays(client, table):
    seat = min(table["players"])
    response = client.delete(f"/v1/tables/{table['id']}/players/{seat}", data="now=1",
                             headers=table["players"][seat],
                             content_type="application/x-www-form-urlencoded")
    assert_problem(response, 415, "unsupported_media_type")
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).get_json()["seats"]
    assert seat in [s["seat"] for s in seats]


def test_an_empty_body_to_a_route_that_reads_none_is_no_body(client):
    assert client.get("/v1/games", headers={"Content-Length": "0"}).status_code == 200
    empty = io.BytesIO(b"")
    response = client.get("/v1/games", headers={"Transfer-Encoding": "chunked"},
                          environ_overrides={"wsgi.input": empty, "wsgi.input_terminated": True})
    assert response.status_code == 200, response.get_json()


def test_a_body_to_a_path_no_route_takes_gets_the_404_or_405(client):
    assert_problem(client.get("/v1/nothing", data="x"), 404, "not_found")
    assert_problem(client.delete("/v1/games", data="x"), 405, "method_not_allowed")


def test_an_action_sent_as_a_form_gets_415_and_the_hand_is_untouched(client, table, hand):
    before = client.get(hand_url(table, hand), headers=table["admin"]).get_json()
    seat = before["to_act"]
    response = client.post(hand_url(table, hand, "/actions"), data="type=fold",
                           headers=table["players"][seat],
                           content_type="application/x-www-form-urlencoded")
    assert_problem(response, 415, "unsupported_media_type")
    after = client.get(hand_url(table, hand), headers=table["admin"]).get_json()
    assert after["version"] == before["version"]


def test_an_empty_body_without_a_content_type_still_starts_a_hand(client, table):
    response = client.post(f"/v1/tables/{table['id']}/hands", headers=table["admin"])
    assert response.status_code == 201, response.get_json()


def test_malformed_json_declared_as_json_is_still_400(client):
    problem = assert_problem(client.post("/v1/tables", data="{",
                                         content_type="application/json"), 400, "malformed_json")
    assert problem["title"] == "Malformed JSON"  # an acronym stays one


@pytest.mark.parametrize("constant, why", [
    ("NaN", "holds NaN, which is no JSON value"),
    ("Infinity", "holds Infinity, which is no JSON value"),
    ("-Infinity", "holds -Infinity, which is no JSON value"),
    ("1e400", "holds 1e400, past the range of a number"),
    ("1" * 50 + "e400", f"holds {'1' * 40}... (54 characters), past the range of a number"),
    ("-" + "9" * 5000, "holds an integer of 5,000 digits, past the 4,300 a number may have")])
def test_nan_infinity_and_endless_numbers_are_refused_saying_which(client, constant, why):
    document = '{"game": "five-card-draw", "options": {"ante": %s}}' % constant
    problem = assert_problem(client.post("/v1/tables", data=document,
                                         content_type="application/json"), 400, "malformed_json")
    assert problem["detail"] == f"the body cannot be taken as JSON: it {why}"


@pytest.mark.parametrize("document, twice", [
    ('{"name": "ann", "buy_in": 100, "name": "bob"}', "name"),
    ('{"name": "ann", "buy_in": 100, "client_seed": {"x": 1, "x": 2}}', "x")])
def test_a_body_that_names_a_key_twice_is_refused_and_writes_nothing(client, table, document,
                                                                      twice):
    seats = f"/v1/tables/{table['id']}"
    before = client.get(seats, headers=table["admin"]).get_json()
    problem = assert_problem(client.post(f"{seats}/players", data=document,
                                         content_type="application/json"), 400, "malformed_json")
    assert f"names '{twice}' twice" in problem["detail"]
    assert client.get(seats, headers=table["admin"]).get_json() == before


def test_a_whole_number_written_with_a_zero_fraction_is_the_integer_json_schema_says_it_is(
        client):
    """``6.0`` is an integer to JSON Schema, which the API's description uses; ``6.5``, a bool
    and a string are not."""
    created = client.post("/v1/tables", json={"game": "five-card-draw", "max_seats": 4.0,
                                              "options": {"ante": 5.0}})
    assert created.status_code == 201, created.json
    table = f"/v1/tables/{created.json['table_id']}"
    joined = client.post(f"{table}/players", json={"name": "ann", "buy_in": 1000.0})
    assert joined.status_code == 201, joined.json
    read = client.get(table, headers={"Authorization": f"Bearer {created.json['admin_token']}"})
    assert read.json["options"]["ante"] == 5 and read.json["max_seats"] == 4
    assert read.json["seats"][0]["stack"] == 1000
    for written in (1000.5, True, "1000"):
        refused = client.post(f"{table}/players", json={"name": "bob", "buy_in": written})
        assert assert_problem(refused, 422, "invalid_request")["errors"] == {
            "buy_in": ["Not a valid integer."]}


@pytest.mark.parametrize("depth", [200, 1000, 1010, 5000])
def test_a_body_nested_past_what_a_parser_reads_is_malformed_json(client, depth):
    document = '{"game": "five-card-draw", "options": {"a": ' + "[" * depth + "]" * depth + "}}"
    answer = client.post("/v1/tables", data=document, content_type="application/json")
    if depth < 1000:  # read, and refused as an option
        assert_problem(answer, 422, "unknown_option")
    else:
        assert assert_problem(answer, 400, "malformed_json")["detail"] == (
            "the body cannot be taken as JSON: it nests deeper than about a thousand levels")


@pytest.mark.parametrize("document", ["null", "[]", "5"])
def test_json_that_is_not_an_object_is_an_invalid_request(client, document):
    assert_problem(client.post("/v1/tables", data=document, content_type="application/json"),
                   422, "invalid_request")


# --- query parameters ----------------------------------------------------------


@pytest.mark.parametrize("suffix, parameter", [
    ("?at=x", "at"), ("?at=0", "at"), ("/events?after=-1", "after"),
    ("/events?after=abc", "after"), ("/events?after=999", "after"),
    ("/events?before=3", "before"),
    ("/history?format=xml", "format")])
def test_a_bad_query_parameter_is_named_as_a_query_parameter(client, table, hand, suffix,
                                                              parameter):
    response = client.get(hand_url(table, hand) + suffix, headers=table["auditor"])
    problem = assert_problem(response, 422, "invalid_query")
    assert f"query parameter '{parameter}'" in problem["detail"]
    assert "body" not in problem["detail"]
    assert list(problem["errors"]) == [parameter]


def test_a_route_that_takes_no_query_parameters_refuses_them_before_any_write(
        client, table, hand):
    path = f"/v1/tables/{table['id']}"
    version = client.get(path, headers=table["admin"]).get_json()["version"]
    for method, url, kwargs in (
            ("get", path, {"headers": table["admin"]}),
            ("get", hand_url(table, hand, "/audit"), {"headers": table["auditor"]}),
            ("post", "/v1/tables", {"json": {"game": "five-card-draw"}}),
            ("put", f"{path}/players/2/seed", {"json": {"client_seed": "ab"},
                                               "headers": table["players"][2]})):
        response = getattr(client, method)(f"{url}?bogus=1", **kwargs)
        problem = assert_problem(response, 422, "invalid_query")
        assert problem["errors"] == {"bogus": ["this route takes no query parameters"]}
    assert client.get(path, headers=table["admin"]).get_json()["version"] == version
    assert client.get("/docs?utm_source=x").status_code == 200  # a page takes any link


@pytest.mark.parametrize("suffix", ["?at=-1", "/events?after=-1"])
def test_a_negative_number_is_refused_for_its_range_not_as_no_number(client, table, hand,
                                                                      suffix):
    response = client.get(hand_url(table, hand) + suffix, headers=table["auditor"])
    [(_, messages)] = assert_problem(response, 422, "invalid_query")["errors"].items()
    assert messages[0].startswith("Must be greater than or equal to"), messages


@pytest.mark.parametrize("suffix, parameter", [
    ("?at=1&at=abc", "at"), ("?at=1_0", "at"), ("?at=%D9%A5", "at"),
    ("/history?format=json&format=xyz", "format")])
def test_a_query_parameter_is_read_once_and_in_digits(client, table, hand, suffix,
                                                       parameter):
    response = client.get(hand_url(table, hand) + suffix, headers=table["auditor"])
    assert list(assert_problem(response, 422, "invalid_query")["errors"]) == [parameter]


@pytest.mark.parametrize("written", ["01", "\uff11", "\u0661", "1" * 17])
def test_a_number_in_a_path_is_written_in_digits_without_leading_zeros(client, table, hand,
                                                                       written):
    assert hand == 1
    assert client.get(hand_url(table, 1), headers=table["auditor"]).status_code == 200
    response = client.get(hand_url(table, 1).replace("/hands/1", f"/hands/{written}"),
                          headers=table["auditor"])
    assert_problem(response, 404, "not_found")


def test_a_bad_body_field_is_still_named_as_the_body(client):
    problem = assert_problem(client.post("/v1/tables", json={"game": "five-card-draw",
                                                             "colour": "red"}),
                             422, "invalid_request")
    assert "colour" in problem["errors"]


# --- idempotent replays --------------------------------------------------------


@pytest.mark.parametrize("action", [{"type": "fold"}, {"type": "bet", "amount": 25}])
def test_a_replayed_action_is_marked_and_a_first_answer_is_not(client, table, hand, action):
    seat = client.get(hand_url(table, hand), headers=table["admin"]).get_json()["to_act"]
    headers = {**table["players"][seat], "Idempotency-Key": "act-once"}
    first = client.post(hand_url(table, hand, "/actions"), json=action, headers=headers)
    assert first.status_code == 201, first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    again = client.post(hand_url(table, hand, "/actions"), json=action, headers=headers)
    assert again.status_code == 201, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.data == first.data  # the same bytes, keys in the same order


def test_a_player_who_has_left_is_answered_a_retry_of_their_leave_and_nothing_else(
        client, table):
    url, player = f"/v1/tables/{table['id']}/players", table["players"][3]
    first = client.delete(f"{url}/3", headers={**player, "Idempotency-Key": "bye"})
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    again = client.delete(f"{url}/3", headers={**player, "Idempotency-Key": "bye"})
    assert again.status_code == 200, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true" and again.data == first.data
    assert_problem(client.delete(f"{url}/3", headers=player), 403, "forbidden")
    assert_problem(client.delete(f"{url}/3", headers={**player, "Idempotency-Key": "new"}),
                   403, "forbidden")
    assert_problem(client.delete(f"{url}/2", headers={**player, "Idempotency-Key": "bye"}),
                   403, "forbidden")
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).get_json()["seats"]
    assert [s["name"] for s in seats] == ["ann", "bob"]


def test_a_player_who_has_left_is_answered_a_retry_of_a_move_in_a_hand_dealt_to_them(
        client, table, hand):
    moves = [(2, {"type": "bet", "amount": 25}), (3, {"type": "fold"}), (1, {"type": "fold"})]
    answers = {}
    for seat, move in moves:
        answers[seat] = client.post(hand_url(table, hand, "/actions"), json=move, headers={
            **table["players"][seat], "Idempotency-Key": f"move-{seat}"})
        assert answers[seat].status_code == 201, answers[seat].get_json()
    player = table["players"][3]
    assert client.delete(f"/v1/tables/{table['id']}/players/3", headers=player).status_code == 200
    again = client.post(hand_url(table, hand, "/actions"), json={"type": "fold"},
                        headers={**player, "Idempotency-Key": "move-3"})
    assert again.status_code == 201, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true" and again.data == answers[3].data
    for headers in (player, {**player, "Idempotency-Key": "another"}):
        assert_problem(client.post(hand_url(table, hand, "/actions"), json={"type": "fold"},
                                   headers=headers), 403, "forbidden")


def test_a_retried_leave_is_replayed_and_frees_no_one_who_sat_down_since(client, table):
    url = f"/v1/tables/{table['id']}/players"
    first = client.delete(f"{url}/3", headers={**table["admin"], "Idempotency-Key": "gone"})
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    assert client.post(url, json={"name": "dee", "buy_in": 500}).get_json()["seat"] == 3
    again = client.delete(f"{url}/3", headers={**table["admin"], "Idempotency-Key": "gone"})
    assert again.headers.get("Idempotent-Replayed") == "true" and again.data == first.data
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).get_json()["seats"]
    assert [s["name"] for s in seats] == ["ann", "bob", "dee"]


def test_a_removal_naming_its_player_frees_no_one_who_sat_down_since(client, table):
    """Retried without a key, an admin's removal that names the player is refused once
    another player holds the seat; one naming nobody would free the newcomer."""
    url, admin = f"/v1/tables/{table['id']}/players", table["admin"]
    seated = client.get(f"/v1/tables/{table['id']}", headers=admin).get_json()["seats"]
    cal = next(s["player_id"] for s in seated if s["seat"] == 3)
    first = client.delete(f"{url}/3?player_id={cal}", headers=admin)
    assert first.status_code == 200 and first.get_json()["seat"] == 3
    dee = client.post(url, json={"name": "dee", "buy_in": 500}).get_json()
    assert dee["seat"] == 3
    again = client.delete(f"{url}/3?player_id={cal}", headers=admin)
    assert_problem(again, 409, "seat_changed")
    seats = client.get(f"/v1/tables/{table['id']}", headers=admin).get_json()["seats"]
    assert [(s["seat"], s["player_id"]) for s in seats][-1] == (3, dee["player_id"])
    assert client.delete(f"{url}/3?player_id={dee['player_id']}", headers=admin).status_code == 200


def test_a_removal_naming_no_player_in_the_query_is_refused_as_a_query(client, table):
    url = f"/v1/tables/{table['id']}/players/3?player_id="
    problem = assert_problem(client.delete(url, headers=table["admin"]), 422, "invalid_query")
    assert "query parameter 'player_id'" in problem["detail"]
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).get_json()["seats"]
    assert 3 in [s["seat"] for s in seats]


def test_replayed_joins_chips_and_hand_starts_are_marked(client, table):
    path = f"/v1/tables/{table['id']}"
    writes = [
        (f"{path}/players", {"name": "dee", "buy_in": 500}, {}),
        (f"{path}/players/1/chips", {"amount": 50}, table["players"][1]),
        (f"{path}/hands", {}, table["admin"]),
    ]
    for url, body, headers in writes:
        headers = {**headers, "Idempotency-Key": f"key:{url}"}
        first = client.post(url, json=body, headers=headers)
        again = client.post(url, json=body, headers=headers)
        assert (first.status_code, again.status_code) == (201, 201), (url, again.get_json())
        assert "Idempotent-Replayed" not in first.headers, url
        assert again.headers.get("Idempotent-Replayed") == "true", url
        assert again.data == first.data, url  # the same bytes, keys in the same order


def test_a_retried_table_creation_makes_one_table(client, fake_backend):
    """A creation whose answer was lost is retried: the same table and tokens again."""
    body, key = {"game": "five-card-draw", "options": {"ante": 5}}, {"Idempotency-Key": "c-1"}
    first = client.post("/v1/tables", json=body, headers=key)
    again = client.post("/v1/tables", json=body, headers=key)
    assert (first.status_code, again.status_code) == (201, 201), again.get_json()
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true" and again.data == first.data
    assert len(fake_backend.redis.keys("t:*:events")) == 1
    admin = {"Authorization": f"Bearer {again.json['admin_token']}"}
    assert client.get(f"/v1/tables/{again.json['table_id']}", headers=admin).status_code == 200
    other = client.post("/v1/tables", json={"game": "five-card-draw"}, headers=key)
    assert other.status_code == 422 and other.json["code"] == "idempotency_key_reused"
    assert "admin_token" not in other.json
    fresh = client.post("/v1/tables", json=body, headers={"Idempotency-Key": "c-2"})
    assert fresh.json["table_id"] != first.json["table_id"]


def test_a_creation_key_whose_record_expired_gets_table_exists(client, fake_backend):
    key = {"Idempotency-Key": "c-old"}
    first = client.post("/v1/tables", json={"game": "five-card-draw"}, headers=key)
    assert first.status_code == 201
    for record in fake_backend.redis.keys("t:*:idem:*"):
        fake_backend.redis.delete(record)  # as its 24 hours' expiry would
    again = client.post("/v1/tables", json={"game": "five-card-draw"}, headers=key)
    assert again.status_code == 409 and again.json["code"] == "table_exists"
    assert "admin_token" not in again.json


@pytest.mark.parametrize("key", ["k1,k1", "k1, k1", "a,b"])
def test_an_idempotency_key_given_twice_or_holding_a_comma_is_refused(client, key):
    """gunicorn joins a header given twice with a comma: neither copy is taken as the key,
    so a retry whose key a proxy doubled applies nothing a second time."""
    created = client.post("/v1/tables", json={"game": "five-card-draw"},
                          headers={"Idempotency-Key": key.partition(",")[0]})
    assert created.status_code == 201
    problem = assert_problem(client.post("/v1/tables", json={"game": "five-card-draw"},
                                         headers={"Idempotency-Key": key}),
                             422, "invalid_idempotency_key")
    assert "given once" in problem["detail"]


def test_a_write_without_an_idempotency_key_is_never_marked(client, table):
    for _ in range(2):
        response = client.post(f"/v1/tables/{table['id']}/players/1/chips", json={"amount": 5},
                               headers=table["players"][1])
        assert response.status_code == 201, response.get_json()
        assert "Idempotent-Replayed" not in response.headers


@pytest.mark.parametrize("name, why", [
    ("   ", "visible"), (" ann", "space"), ("ann\n", "control"), ("a\x00b", "control"),
    ("a\tb", "control"), ("evil\u202egnp.exe", "control"), ("\u200b", "visible"),
    ("a\u2028b", "control"), ("\u3164", "visible"), ("\u2800\u2800", "visible"),
    ("\ufeffann", "space"), ("ann\u200b", "space"), ("ann\u2060", "space")])
def test_a_name_that_would_not_show_as_itself_seats_nobody(client, table, name, why):
    url = f"/v1/tables/{table['id']}/players"
    problem = assert_problem(client.post(url, json={"name": name, "buy_in": 500}), 422,
                             "invalid_request")
    assert why in problem["errors"]["name"][0]
    seats = client.get(f"/v1/tables/{table['id']}", headers=table["admin"]).get_json()["seats"]
    assert len(seats) == 3


@pytest.mark.parametrize("name", ["Zoë", "李小龍", "a b", "👨‍👩‍👧", "José-María"])
def test_a_name_in_any_script_seats_its_player(client, table, name):
    joined = client.post(f"/v1/tables/{table['id']}/players", json={"name": name, "buy_in": 500})
    assert joined.status_code == 201, joined.get_json()
