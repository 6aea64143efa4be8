"""Bad input over real HTTP never gets a 500: always a 4xx problem+json with a ``code``,
and nothing is appended to any stream (nor any table created, nor any key written)."""

from __future__ import annotations

import pytest
import redis

from .client import Api, create_table

# Deeper than the JSON parser goes, yet under the 64 KiB body limit (60 000 bytes).
DEEP = "[" * 30_000 + "]" * 30_000
# One byte over the default body limit (Config.max_body_bytes, 64 KiB): valid JSON.
OVERSIZED = b'{"game": "five-card-draw"' + b" " * (65536 - 25) + b"}"
JSON = {"Content-Type": "application/json"}


class Ctx:
    """One table with two players, hand 1 started; seat ``to_act`` is to act."""

    def __init__(self, api: Api):
        self.api = api
        self.table = create_table(api, 2, buy_in=1000)
        self.hand_no = self.table.start_hand()
        view = self.table.hand(self.hand_no)
        self.to_act = view["to_act"]
        self.other = next(s for s in self.table.tokens if s != self.to_act)
        self.version = view["version"]

    def token(self, who: str) -> str | None:
        t = self.table
        return {"admin": t.admin, "auditor": t.auditor, "actor": t.tokens[self.to_act],
                "other": t.tokens[self.other], "none": None, "bogus": "not-a-token"}[who]

    def path(self, template: str) -> str:
        return template.format(t=self.table.table_id, h=self.hand_no, actor=self.to_act,
                               other=self.other)


T = "/v1/tables/{t}"
H = T + "/hands/{h}"
A = H + "/actions"
ACT = {"type": "check"}

# (id, method, path, token, body or raw, extra headers, exact status or None for any 4xx)
CASES = [
    # creating tables
    ("table-not-json", "POST", "/v1/tables", "none", b"not json", JSON, 400),
    ("table-truncated-json", "POST", "/v1/tables", "none", b'{"game": "five-', JSON, 400),
    ("table-json-null", "POST", "/v1/tables", "none", b"null", JSON, None),
    ("table-array", "POST", "/v1/tables", "none", [], None, 422),
    ("table-string", "POST", "/v1/tables", "none", "five-card-draw", None, 422),
    ("table-empty-object", "POST", "/v1/tables", "none", {}, None, 422),
    ("table-unknown-field", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "colour": "red"}, None, 422),
    ("table-unknown-game", "POST", "/v1/tables", "none", {"game": "tiddlywinks"}, None, 422),
    ("table-game-not-string", "POST", "/v1/tables", "none", {"game": ["five-card-draw"]}, None, 422),
    ("table-unknown-option", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"colour": "red"}}, None, 422),
    ("table-negative-ante", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"ante": -25}}, None, 422),
    ("table-huge-ante", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"ante": 10**30}}, None, 422),
    ("table-float-ante", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"ante": 25.5}}, None, 422),
    ("table-string-ante", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"ante": "25"}}, None, 422),
    ("table-bool-ante", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"ante": True}}, None, 422),
    ("table-bad-structure", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": {"structure": "anything-goes"}}, None, 422),
    ("table-options-array", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "options": [1, 2]}, None, 422),
    ("table-zero-seats", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "max_seats": 0}, None, 422),
    ("table-huge-seats", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "max_seats": 10**6}, None, 422),
    ("table-seats-string", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "max_seats": "6"}, None, 422),
    ("table-seats-bool", "POST", "/v1/tables", "none",
     {"game": "five-card-draw", "max_seats": True}, None, 422),
    ("table-deeply-nested-json", "POST", "/v1/tables", "none", DEEP.encode(), JSON, 400),
    ("table-body-over-the-limit", "POST", "/v1/tables", "none", OVERSIZED, JSON, 413),
    ("table-json-as-text", "POST", "/v1/tables", "none", b'{"game": "five-card-draw"}',
     {"Content-Type": "text/plain"}, 415),
    ("table-trailing-slash", "POST", "/v1/tables/", "none", {"game": "five-card-draw"}, None,
     404),
    # joining
    ("join-negative", "POST", T + "/players", "none", {"name": "x", "buy_in": -5}, None, 422),
    ("join-zero", "POST", T + "/players", "none", {"name": "x", "buy_in": 0}, None, 422),
    ("join-huge", "POST", T + "/players", "none", {"name": "x", "buy_in": 10**30}, None, 422),
    ("join-float", "POST", T + "/players", "none", {"name": "x", "buy_in": 100.5}, None, 422),
    ("join-string", "POST", T + "/players", "none", {"name": "x", "buy_in": "100"}, None, 422),
    ("join-bool", "POST", T + "/players", "none", {"name": "x", "buy_in": True}, None, 422),
    ("join-null", "POST", T + "/players", "none", {"name": "x", "buy_in": None}, None, 422),
    ("join-no-name", "POST", T + "/players", "none", {"buy_in": 100}, None, 422),
    ("join-empty-name", "POST", T + "/players", "none", {"name": "", "buy_in": 100}, None, 422),
    ("join-long-name", "POST", T + "/players", "none", {"name": "n" * 41, "buy_in": 100}, None, 422),
    ("join-choose-seat", "POST", T + "/players", "none",
     {"name": "x", "buy_in": 100, "seat": 3}, None, 422),
    ("join-not-json", "POST", T + "/players", "none", b"name=x&buy_in=5",
     {"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ("join-json-as-text", "POST", T + "/players", "none", b'{"name": "x", "buy_in": 5}',
     {"Content-Type": "text/plain"}, 415),
    ("join-unknown-table", "POST", "/v1/tables/0000000000000000/players", "none",
     {"name": "x", "buy_in": 100}, None, 404),
    ("join-table-id-with-braces", "POST", "/v1/tables/%7Bx%7D/players", "none",
     {"name": "x", "buy_in": 100}, None, 404),
    ("join-long-idempotency-key", "POST", T + "/players", "none", {"name": "x", "buy_in": 100},
     {"Idempotency-Key": "k" * 201}, 422),
    # reading tables
    ("table-read-no-token", "GET", T, "none", None, None, 401),
    ("table-read-bogus-token", "GET", T, "bogus", None, None, 403),
    ("table-read-basic-auth", "GET", T, "none", None, {"Authorization": "Basic eDp5"}, 401),
    ("table-read-unknown", "GET", "/v1/tables/ffffffffffffffff", "admin", None, None, 404),
    ("table-read-id-with-braces", "GET", "/v1/tables/%7Bx%7D", "admin", None, None, 404),
    ("table-read-id-invalid-utf8", "GET", "/v1/tables/%FF%FE", "admin", None, None, 404),
    ("table-read-id-nul", "GET", "/v1/tables/a%00b", "admin", None, None, 404),
    ("table-read-id-with-brace", "GET", "/v1/tables/a%7D", "admin", None, None, 404),
    # chips and leaving
    ("chips-other-seat", "POST", T + "/players/{other}/chips", "actor", {"amount": 100}, None, 403),
    ("chips-admin", "POST", T + "/players/{actor}/chips", "admin", {"amount": 100}, None, 403),
    ("chips-negative", "POST", T + "/players/{actor}/chips", "actor", {"amount": -100}, None, 422),
    ("chips-during-hand", "POST", T + "/players/{actor}/chips", "actor", {"amount": 100}, None, 409),
    ("chips-no-token", "POST", T + "/players/{actor}/chips", "none", {"amount": 100}, None, 401),
    ("leave-other-seat", "DELETE", T + "/players/{other}", "actor", None, None, 403),
    ("leave-auditor", "DELETE", T + "/players/{actor}", "auditor", None, None, 403),
    ("leave-during-hand", "DELETE", T + "/players/{actor}", "actor", None, None, 409),
    # hands
    ("start-by-player", "POST", T + "/hands", "actor", {}, None, 403),
    ("start-no-token", "POST", T + "/hands", "none", {}, None, 401),
    ("start-during-hand", "POST", T + "/hands", "admin", {}, None, 409),
    ("start-unknown-table", "POST", "/v1/tables/0000000000000000/hands", "admin", {}, None, 404),
    ("hand-read-unknown", "GET", T + "/hands/99", "admin", None, None, 404),
    ("hand-read-zero", "GET", T + "/hands/0", "admin", None, None, 404),
    ("hand-read-huge", "GET", T + "/hands/" + "9" * 40, "admin", None, None, 404),
    ("hand-read-negative", "GET", T + "/hands/-1", "admin", None, None, 404),
    ("hand-read-not-number", "GET", T + "/hands/one", "admin", None, None, 404),
    ("hand-read-bogus-token", "GET", H, "bogus", None, None, 403),
    ("events-negative-after", "GET", H + "/events?after=-1", "admin", None, None, 422),
    ("events-string-after", "GET", H + "/events?after=abc", "admin", None, None, 422),
    ("events-huge-after", "GET", H + "/events?after=" + str(2**64), "admin", None, None, 422),
    ("events-enormous-after", "GET", H + "/events?after=" + "9" * 30, "admin", None, None, 422),
    ("events-unknown-param", "GET", H + "/events?before=3", "admin", None, None, 422),
    ("hand-read-string-at", "GET", H + "?at=x", "admin", None, None, 422),
    ("history-format-xml", "GET", H + "/history?format=xml", "auditor", None, None, 422),
    ("history-player-before-end", "GET", H + "/history", "actor", None, None, 409),
    ("audit-by-player", "GET", H + "/audit", "actor", None, None, 403),
    ("audit-by-admin", "GET", H + "/audit", "admin", None, None, 403),
    ("audit-unknown-hand", "GET", T + "/hands/7/audit", "auditor", None, None, 404),
    # actions
    ("act-not-json", "POST", A, "actor", b"check", JSON, 400),
    ("act-as-form", "POST", A, "actor", b"type=check",
     {"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ("act-trailing-slash", "POST", A + "/", "actor", ACT, None, 404),
    ("act-deeply-nested-json", "POST", A, "actor", DEEP.encode(), JSON, 400),
    ("act-body-over-the-limit", "POST", A, "actor", OVERSIZED, JSON, 413),
    ("act-array", "POST", A, "actor", [ACT], None, 422),
    ("act-number", "POST", A, "actor", 7, None, 422),
    ("act-empty", "POST", A, "actor", {}, None, 422),
    ("act-unknown-type", "POST", A, "actor", {"type": "shove"}, None, 422),
    ("act-type-not-string", "POST", A, "actor", {"type": 1}, None, 422),
    ("act-unknown-field", "POST", A, "actor", {"type": "check", "why": "because"}, None, 422),
    ("act-for-another-seat-field", "POST", A, "actor", {"type": "check", "seat": 9}, None, 422),
    ("act-negative-amount", "POST", A, "actor", {"type": "bet", "amount": -25}, None, 422),
    ("act-huge-amount", "POST", A, "actor", {"type": "bet", "amount": 10**30}, None, 422),
    ("act-max-amount", "POST", A, "actor", {"type": "bet", "amount": 10**9}, None, 422),
    ("act-off-step-amount", "POST", A, "actor", {"type": "bet", "amount": 26}, None, 422),
    ("act-float-amount", "POST", A, "actor", {"type": "bet", "amount": 25.5}, None, 422),
    ("act-nan-amount", "POST", A, "actor", b'{"type": "bet", "amount": NaN}', JSON, None),
    ("act-string-amount", "POST", A, "actor", {"type": "bet", "amount": "25"}, None, 422),
    ("act-bool-amount", "POST", A, "actor", {"type": "bet", "amount": True}, None, 422),
    ("act-bet-no-amount", "POST", A, "actor", {"type": "bet"}, None, 422),
    ("act-raise-unopened", "POST", A, "actor", {"type": "raise", "amount": 50}, None, 422),
    ("act-call-nothing", "POST", A, "actor", {"type": "call"}, None, 422),
    ("act-draw-in-betting", "POST", A, "actor", {"type": "draw", "cards": []}, None, 422),
    ("act-cards-string", "POST", A, "actor", {"type": "draw", "cards": "As"}, None, 422),
    ("act-card-malformed", "POST", A, "actor", {"type": "draw", "cards": ["ZZ"]}, None, 422),
    ("act-card-lowercase", "POST", A, "actor", {"type": "draw", "cards": ["as"]}, None, 422),
    ("act-card-number", "POST", A, "actor", {"type": "draw", "cards": [14]}, None, 422),
    ("act-card-too-many", "POST", A, "actor", {"type": "draw", "cards": ["As"] * 11}, None, 422),
    ("act-stale-version", "POST", A, "actor", {**ACT, "expected_version": 1}, None, 409),
    ("act-future-version", "POST", A, "actor", {**ACT, "expected_version": 10**6}, None, 409),
    ("act-negative-version", "POST", A, "actor", {**ACT, "expected_version": -1}, None, 422),
    ("act-string-version", "POST", A, "actor", {**ACT, "expected_version": "9"}, None, 422),
    ("act-if-match-garbage", "POST", A, "actor", ACT, {"If-Match": "yesterday"}, 422),
    ("act-if-match-stale", "POST", A, "actor", ACT, {"If-Match": '"1"'}, 409),
    ("act-if-match-enormous", "POST", A, "actor", ACT, {"If-Match": '"' + "9" * 5000 + '"'}, None),
    ("act-if-match-superscript-digit", "POST", A, "actor", ACT, {"If-Match": '"\u00b2"'}, 422),
    ("act-long-idempotency-key", "POST", A, "actor", ACT, {"Idempotency-Key": "k" * 201}, 422),
    ("act-out-of-turn", "POST", A, "other", ACT, None, 403),
    ("act-out-of-turn-fold", "POST", A, "other", {"type": "fold"}, None, 403),
    ("act-as-admin", "POST", A, "admin", ACT, None, 403),
    ("act-as-auditor", "POST", A, "auditor", ACT, None, 403),
    ("act-no-token", "POST", A, "none", ACT, None, 401),
    ("act-bogus-token", "POST", A, "bogus", ACT, None, 403),
    ("act-unknown-hand", "POST", T + "/hands/99/actions", "actor", ACT, None, 404),
    ("act-unknown-table", "POST", "/v1/tables/0000000000000000/hands/1/actions", "actor", ACT,
     None, 404),
    ("act-table-id-with-braces", "POST", "/v1/tables/%7B%7D/hands/1/actions", "actor", ACT,
     None, 404),
    # routes and methods
    ("unknown-route", "GET", "/v1/nothing-here", "none", None, None, 404),
    ("wrong-method", "PUT", "/v1/tables", "none", {}, None, 405),
]


@pytest.fixture(scope="module")
def ctx(live_server, integration_redis_url):
    client = redis.Redis.from_url(integration_redis_url)
    client.flushdb()
    yield Ctx(live_server.api), client
    client.close()


def snapshot(client: redis.Redis) -> dict:
    """Every non-RQ key, with each stream's length."""
    keys = {}
    for key in client.scan_iter(count=1000):
        if key.startswith(b"rq:"):
            continue
        kind = client.type(key)
        keys[key] = client.xlen(key) if kind == b"stream" else kind
    return keys


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_a_problem_and_writes_nothing(ctx, case):
    context, client = ctx
    name, method, template, who, body, headers, status = case
    before = snapshot(client)
    kwargs = {"token": context.token(who), "headers": headers}
    if isinstance(body, bytes):
        kwargs["data"] = body
    elif body is not None:
        kwargs["json_body"] = body
    resp = context.api.request(method, context.path(template), **kwargs)
    assert resp.status != 500 and 400 <= resp.status < 500, f"{name}: {resp!r}"
    assert resp.content_type == "application/problem+json", f"{name}: {resp!r}"
    problem = resp.json
    assert isinstance(problem.get("code"), str) and problem["code"], f"{name}: {resp!r}"
    assert problem.get("status") == resp.status, f"{name}: {resp!r}"
    if status is not None:
        assert resp.status == status, f"{name}: expected {status}, got {resp!r}"
    if problem["code"] == "version_conflict":
        assert problem["current_version"] == context.version
    assert snapshot(client) == before, f"{name} changed the store"
    # The hand is untouched: same version, same seat to act.
    view = context.table.hand(context.hand_no)
    assert (view["version"], view["to_act"]) == (context.version, context.to_act)
