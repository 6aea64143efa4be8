"""A small HTTP client for cardroom and a seeded random player, using only documented routes.

Only the standard library (``urllib.request``): the venv has no ``requests``/``httpx``.
Everything here talks to a real server over a socket; nothing imports the service (only
``domain.fairness``, the verifier any client may run).
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable

from domain.fairness import unseal

_MISSING = object()
CARD_RANKS = "23456789TJQKA"
CARD_SUITS = "cdhs"


def is_card(value: Any) -> bool:
    return (isinstance(value, str) and len(value) == 2 and value[0] in CARD_RANKS
            and value[1] in CARD_SUITS)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.raw)
        except ValueError:
            return None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    def __repr__(self) -> str:
        return f"<{self.status} {self.content_type} {self.raw[:400]!r}>"


class Api:
    """``Api(base).request(method, path, json=..., token=..., headers=...)`` -> Response."""

    def __init__(self, base_url: str, timeout: float = 15.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def request(self, method: str, path: str, *, json_body: Any = _MISSING,
                data: bytes | str | None = None, token: str | None = None,
                headers: dict[str, str] | None = None) -> Response:
        all_headers = {"Accept": "application/json"}
        if json_body is not _MISSING:
            data = json.dumps(json_body)
            all_headers["Content-Type"] = "application/json"
        if isinstance(data, str):
            data = data.encode()
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        all_headers.update(headers or {})
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers=all_headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return Response(resp.status, {k.lower(): v for k, v in resp.headers.items()},
                                resp.read())
        except urllib.error.HTTPError as err:
            return Response(err.code, {k.lower(): v for k, v in err.headers.items()}, err.read())

    def get(self, path: str, **kw) -> Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = _MISSING, **kw) -> Response:
        return self.request("POST", path, json_body=body, **kw)

    # --- documented routes ---------------------------------------------------

    def ok(self, resp: Response, *expected: int) -> Any:
        assert resp.status in (expected or (200, 201)), f"unexpected answer {resp!r}"
        return resp.json


@dataclass
class Table:
    api: Api
    table_id: str
    admin: str
    auditor: str
    tokens: dict[int, str] = field(default_factory=dict)  # seat -> player token

    @property
    def path(self) -> str:
        return f"/v1/tables/{self.table_id}"

    def hand_path(self, hand_no: int) -> str:
        return f"{self.path}/hands/{hand_no}"

    def read(self, token: str | None = None) -> dict:
        return self.api.ok(self.api.get(self.path, token=token or self.admin), 200)

    def stacks(self) -> dict[int, int]:
        return {s["seat"]: s["stack"] for s in self.read()["seats"]}

    def hand(self, hand_no: int, token: str | None = None) -> dict:
        return self.api.ok(self.api.get(self.hand_path(hand_no), token=token or self.admin), 200)

    def start_hand(self) -> int:
        return self.api.ok(self.api.post(f"{self.path}/hands", {}, token=self.admin), 201)["hand_no"]

    def act(self, hand_no: int, seat: int, body: dict, headers: dict | None = None) -> Response:
        return self.api.post(f"{self.hand_path(hand_no)}/actions", body, token=self.tokens[seat],
                             headers=headers)

    def events(self, hand_no: int, token: str, after: int = 0) -> list[dict]:
        resp = self.api.get(f"{self.hand_path(hand_no)}/events?after={after}", token=token)
        return self.api.ok(resp, 200)["events"]

    def history(self, hand_no: int, token: str | None = None) -> dict:
        return self.api.ok(self.api.get(f"{self.hand_path(hand_no)}/history",
                                        token=token or self.auditor), 200)

    def audit(self, hand_no: int) -> dict:
        return self.api.ok(self.api.get(f"{self.hand_path(hand_no)}/audit", token=self.auditor), 200)

    def wait_hand(self, hand_no: int, predicate: Callable[[dict], bool], what: str,
                  timeout: float = 30.0, diagnostics: Callable[[], str] | None = None) -> dict:
        """Poll the hand read (admin) until ``predicate`` holds; fail clearly after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            hand = self.hand(hand_no)
            if predicate(hand):
                return hand
            if time.monotonic() > deadline:
                extra = diagnostics() if diagnostics else ""
                raise AssertionError(
                    f"hand {hand_no} of table {self.table_id}: not {what} after {timeout:.0f} s; "
                    f"status={hand['status']!r} version={hand['version']}\n{extra}")
            time.sleep(0.1)


def create_table(api: Api, players: int, buy_in: int = 2000, game: str = "five-card-draw",
                 options: dict | None = None) -> Table:
    body = {"game": game}
    if options:
        body["options"] = options
    created = api.ok(api.post("/v1/tables", body), 201)
    table = Table(api, created["table_id"], created["admin_token"], created["auditor_token"])
    for i in range(players):
        joined = api.ok(api.post(f"{table.path}/players", {"name": f"p{i + 1}", "buy_in": buy_in}),
                        201)
        table.tokens[joined["seat"]] = joined["token"]
    return table


# --- a seeded random player ----------------------------------------------------

def choose_action(rng: random.Random, me: dict, seat: int, allow_fold: bool = True) -> dict:
    """A random legal move for ``seat`` from its own hand read ``me`` (valid amounts/cards)."""
    legal = me["legal_actions"]
    assert legal, f"seat {seat} is to act but its read lists no legal action: {me}"
    options = [a for a in legal if allow_fold or a["type"] != "fold"] or legal
    weights = [1 if a["type"] == "fold" else 3 for a in options]
    action = rng.choices(options, weights)[0]
    kind = action["type"]
    if kind in ("bet", "raise"):
        step = action.get("step", 1) or 1
        return {"type": kind, "amount": rng.randrange(action["min"], action["max"] + 1, step)}
    if kind == "draw":
        own = [c for c in _seat_of(me, seat)["cards"] if c is not None]
        return {"type": "draw", "cards": rng.sample(own, rng.randint(0, min(action["max_cards"],
                                                                           len(own))))}
    return {"type": kind}


def _seat_of(hand: dict, seat: int) -> dict:
    return next(s for s in hand["seats"] if s["seat"] == seat)


# --- what a player may see -----------------------------------------------------

def strings_in(obj: Any):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from strings_in(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from strings_in(value)


def check_player_read_before_end(hand: dict, seat: int) -> None:
    """A player's hand read before the end: others' cards hidden, seed hidden, no result."""
    assert hand["status"] != "ended"
    assert hand["server_seed"] is None, f"seed revealed to seat {seat} before the end: {hand}"
    assert hand.get("result") is None
    for s in hand["seats"]:
        if s["seat"] != seat:
            assert all(c is None for c in s["cards"]), (
                f"seat {seat} sees seat {s['seat']}'s cards {s['cards']} before the end")
    if hand["to_act"] != seat:
        assert hand["legal_actions"] == [], (
            f"seat {seat} is offered {hand['legal_actions']} while seat {hand['to_act']} acts")


def check_player_events_before_end(events: list[dict], seat: int) -> None:
    """Before the end a player opens only their own cards: the deck and others' cards are
    commitments they hold no opening of."""
    for e in events:
        data, openings = e["data"], e["openings"]
        if e["type"] == "HandStarted":
            assert "seed" not in data and set(data["deck"]) == {"commitment"} and not openings, (
                f"seat {seat} can read the deck or the seed: {e}")
        if e["type"] in ("CardsDealt", "CardsDrawn") and data["seat"] != seat:
            assert not openings, f"seat {seat} holds openings of seat {data['seat']}'s cards: {e}"
            hidden = data["cards"] if e["type"] == "CardsDealt" and not data["face_up"] else (
                data.get("discarded", []) + data.get("received", []))
            assert all(isinstance(c, dict) and set(c) == {"commitment"} for c in hidden), e
        assert e["type"] not in ("HandEnded", "ShowdownEvaluated", "PotAwarded"), (
            f"{e['type']} in the events of a hand that has not ended")


def opened(event: dict) -> dict:
    """An event's data with the openings its reader received put in place."""
    return unseal(event["data"], event["openings"])


def own_cards(history_events: list[dict]) -> dict[int, set[str]]:
    """Every card each seat ever held (dealt or drawn), from the auditor's full history."""
    held: dict[int, set[str]] = {}
    for e in history_events:
        data = opened(e)
        if e["type"] == "CardsDealt":
            held.setdefault(data["seat"], set()).update(data["cards"])
        elif e["type"] == "CardsDrawn":
            held.setdefault(data["seat"], set()).update(data["received"])
    return held


def check_no_card_leaks(seen_before_end: dict[int, list], history_events: list[dict]) -> None:
    """No card string in a seat's pre-end reads is one that seat never held."""
    held = own_cards(history_events)
    for seat, reads in seen_before_end.items():
        cards = {c for c in strings_in(reads) if is_card(c)}
        assert not reads or seat not in held or cards, (
            f"seat {seat}'s reads show no card at all, not even its own")
        leaked = cards - held.get(seat, set())
        assert not leaked, f"seat {seat} saw cards {sorted(leaked)} it never held, before the end"


@dataclass
class PlayedHand:
    hand_no: int
    final: dict  # the admin's read once ended
    actions: int
    seen_before_end: dict[int, list]  # seat -> the JSON of every read that seat made pre-end


def play_hand(table: Table, rng: random.Random, *, allow_fold: bool = True,
              max_actions: int = 200, check_views: bool = True, settle_timeout: float = 30.0,
              diagnostics: Callable[[], str] | None = None) -> PlayedHand:
    """Start a hand and play it with random legal moves until it has ended."""
    hand_no = table.start_hand()
    seen: dict[int, list] = {seat: [] for seat in table.tokens}
    actions = 0
    while True:
        admin_view = table.hand(hand_no)
        status = admin_view["status"]
        assert admin_view["server_seed"] is None, "seed shown to the admin"
        if status not in ("betting", "drawing"):
            break
        seat = admin_view["to_act"]
        assert seat in table.tokens, f"to_act {seat} is not a seated player: {admin_view}"
        me = table.hand(hand_no, table.tokens[seat])
        if check_views:
            check_player_read_before_end(me, seat)
            evs = table.events(hand_no, table.tokens[seat])
            check_player_events_before_end(evs, seat)
            seen[seat] += [me, evs]
        move = choose_action(rng, me, seat, allow_fold)
        if rng.random() < 0.3:  # the ETag form of the version check
            resp = table.act(hand_no, seat, move, headers={"If-Match": f'"{me["version"]}"'})
        else:
            resp = table.act(hand_no, seat, {**move, "expected_version": me["version"]})
        assert resp.status == 201, f"seat {seat} playing {move} at v{me['version']}: {resp!r}"
        answer = resp.json
        assert answer["version"] > me["version"], answer
        actions += 1
        assert actions <= max_actions, f"hand {hand_no} did not finish in {max_actions} actions"
    if status == "showdown_pending" and check_views:
        for seat, token in table.tokens.items():
            me = table.hand(hand_no, token)
            if me["status"] == "ended":  # the worker was quicker than us
                break
            check_player_read_before_end(me, seat)
            evs = table.events(hand_no, token)
            if table.hand(hand_no)["status"] != "ended":
                check_player_events_before_end(evs, seat)
                seen[seat].extend([me, evs])
    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended",
                            timeout=settle_timeout, diagnostics=diagnostics)
    return PlayedHand(hand_no, final, actions, seen)
