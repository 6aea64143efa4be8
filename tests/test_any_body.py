"""Whatever JSON a client sends to a write route (any shape, any number, any string,
lone surrogates included), the answer is a success or a 4xx problem: never a 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_api import hand_url, start_hand

# lone surrogates often (a lone one is what broke a route; st.text() leaves them out)
TEXT = st.lists(st.characters() | st.characters(categories=["Cs"]), max_size=12).map("".join)
FIELDS = st.sampled_from(["game", "options", "name", "buy_in", "amount", "type", "cards",
                          "seat", "client_seed", "expected_version", "text", "table_id"])
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | TEXT
           | st.sampled_from(["five-card-draw", "bet", "call", "draw", "Ah", "2c"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(FIELDS | TEXT, inner, max_size=4), max_leaves=12)


def routes(client, table, hand_no):
    """Each write route: method, path, headers and a body it takes. A seat is asked for
    at a new table, which has one free."""
    at = f"/v1/tables/{table['id']}"
    new = client.post("/v1/tables", json={"game": "five-card-draw"}).json["table_id"]
    player = table["players"][2]
    return [("POST", "/v1/tables", {}, {"game": "five-card-draw"}),
            ("POST", f"/v1/tables/{new}/players", {}, {"name": "dee", "buy_in": 500}),
            ("PUT", f"{at}/players/2/seed", player, {"client_seed": "abc"}),
            ("POST", f"{at}/players/2/chips", player, {"amount": 100}),
            ("POST", f"{at}/hands", table["admin"], {}),
            ("POST", hand_url(table, hand_no, "/actions"), player, {"type": "bet", "amount": 25}),
            ("POST", "/v1/imports/phh", {}, {"text": "variant = 'FT'"})]


@pytest.mark.parametrize("route", range(7))
@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_json_body_is_answered_without_a_500(client, table, route, data):
    hand_no = 1 if client.get(hand_url(table, 1), headers=table["admin"]).status_code == 200 \
        else start_hand(client, table)
    method, path, headers, takes = routes(client, table, hand_no)[route]
    # a body the route takes with some of its fields changed, or any JSON at all
    changes = st.dictionaries(st.sampled_from(sorted(takes)) if takes else FIELDS,
                              TEXT | VALUES, max_size=2)
    sent = data.draw(changes.map(lambda changed: {**takes, **changed}) | VALUES)
    answer = client.open(path, method=method, headers=headers, content_type="application/json",
                         data=json.dumps(sent))  # ensure_ascii: "\ud800" as an escape
    assert answer.status_code < 500, (sent, answer.get_data(as_text=True))
    if answer.status_code >= 400:
        assert answer.mimetype == "application/problem+json", answer.status_code


@pytest.mark.parametrize("route", range(7))
@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_json_not_in_plain_utf_8_is_malformed_on_every_write_route(client, table, route,
                                                                    encoding):
    """JSON is exchanged in UTF-8 without a byte order mark (RFC 8259): a body the route
    would take, sent in another encoding, is refused as malformed, not failed with a 500."""
    hand_no = start_hand(client, table)
    method, path, headers, takes = routes(client, table, hand_no)[route]
    answer = client.open(path, method=method, headers=headers, content_type="application/json",
                         data=json.dumps(takes).encode(encoding))
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert answer.get_json()["code"] == "malformed_json"
