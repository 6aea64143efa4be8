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
    game: str = ""
    options: dict = field(default_factory=dict)  # the table's resolved options

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

    def start_hand(self, game: str | None = None) -> int:
        """Open the next hand; ``game`` names its game (dealer's choice tables only)."""
        body = {"game": game} if game is not None else {}
        return self.api.ok(self.api.post(f"{self.path}/hands", body, token=self.admin),
                           201)["hand_no"]

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
                 options: dict | None = None, *, buy_ins: list[int] | None = None,
                 max_seats: int | None = None) -> Table:
    """A table of ``game`` with ``players`` seated, each buying in for ``buy_in`` (or, with
    ``buy_ins``, the i-th player for ``buy_ins[i]``)."""
    body: dict[str, Any] = {"game": game}
    if options:
        body["options"] = options
    if max_seats is not None:
        body["max_seats"] = max_seats
    created = api.ok(api.post("/v1/tables", body), 201)
    table = Table(api, created["table_id"], created["admin_token"], created["auditor_token"],
                  game=created.get("game", game), options=created.get("options") or {})
    for i in range(players):
        amount = buy_ins[i] if buy_ins is not None else buy_in
        joined = api.ok(api.post(f"{table.path}/players", {"name": f"p{i + 1}", "buy_in": amount}),
                        201)
        table.tokens[joined["seat"]] = joined["token"]
    return table


# --- a seeded random player ----------------------------------------------------

def choose_action(rng: random.Random, me: dict, seat: int, allow_fold: bool = True,
                  edges: float = 0.0) -> dict:
    """A random legal move for ``seat`` from its own hand read ``me`` (valid amounts/cards).

    Every shape of ``legal_actions`` is understood: check; call ``{amount, all_in?}``;
    bet/raise ``{min, max, step, all_in?}`` (``all_in``: one more legal total, off the
    steps or below ``min``); bring_in and complete ``{amount}``; add_chips ``{min, max}``;
    fold; draw ``{max_cards}``. With probability ``edges`` a bet or raise goes to one of
    its edge totals (``min``, ``max`` or ``all_in``) instead of a uniform step; ``edges``
    also sends the offered ``amount`` along with a call, bring-in or completion half the
    time (the service ignores it there)."""
    legal = me["legal_actions"]
    assert legal, f"seat {seat} is to act but its read lists no legal action: {me}"
    options = [a for a in legal if allow_fold or a["type"] != "fold"] or legal
    weights = [1 if a["type"] == "fold" else 3 for a in options]
    action = rng.choices(options, weights)[0]
    kind = action["type"]
    if kind in ("bet", "raise"):
        return {"type": kind, "amount": choose_amount(rng, action, edges)}
    if kind == "add_chips":
        low, high = action["min"], action["max"]
        extra = 0 if rng.random() < 0.5 else rng.randint(1, max(1, 3 * low))
        return {"type": kind, "amount": min(high, low + extra)}
    if kind == "draw":
        own = [c for c in _seat_of(me, seat)["cards"] if c is not None]
        return {"type": "draw", "cards": rng.sample(own, rng.randint(0, min(action["max_cards"],
                                                                           len(own))))}
    if "amount" in action and edges and rng.random() < 0.5:
        return {"type": kind, "amount": action["amount"]}
    return {"type": kind}


def choose_amount(rng: random.Random, action: dict, edges: float = 0.0) -> int:
    """A legal total of a bet or raise: ``min`` plus whole ``step``s up to ``max``, or the
    ``all_in`` total; with probability ``edges`` one of the edges."""
    low, high, step = action["min"], action["max"], action.get("step", 1) or 1
    if edges and rng.random() < edges:
        return rng.choice([low, high] + ([action["all_in"]] if "all_in" in action else []))
    if "all_in" in action and edges and rng.random() < 0.1:
        return action["all_in"]
    return rng.randrange(low, high + 1, step)


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


def public_cards(events: list[dict]) -> tuple[dict[int, list[str]], list[str]]:
    """From the events a reader got: each seat's face-up cards in the order dealt, and the
    board. Those are the only cards of others anyone may see before the end."""
    up: dict[int, list[str]] = {}
    board: list[str] = []
    for e in events:
        if e["type"] == "CardsDealt" and e["data"].get("face_up"):
            up.setdefault(e["data"]["seat"], []).extend(e["data"]["cards"])
        elif e["type"] == "BoardDealt":
            board.extend(e["data"]["cards"])
    return up, board


def check_player_read_before_end(hand: dict, seat: int, events: list[dict] | None = None) -> None:
    """A player's hand read before the end: others' down cards hidden (face-up cards, known
    from the player's ``events`` read at the same version, may show), seed hidden, no
    result, legal actions only on the player's turn."""
    assert hand["status"] != "ended"
    assert hand["server_seed"] is None, f"seed revealed to seat {seat} before the end: {hand}"
    assert hand.get("result") is None
    events = [e for e in events or [] if e["version"] <= hand["version"]]
    up, board = public_cards(events)
    same_version = bool(events) and events[-1]["version"] == hand["version"]
    for s in hand["seats"]:
        if s["seat"] != seat:
            shown = [c for c in s["cards"] if c is not None]
            assert shown == up.get(s["seat"], []), (
                f"seat {seat} sees seat {s['seat']}'s cards {s['cards']} before the end; "
                f"face up: {up.get(s['seat'], [])}")
        elif s["status"] != "folded":
            assert all(c is not None for c in s["cards"]), (
                f"seat {seat} cannot see its own cards {s['cards']}")
    if same_version:
        assert hand.get("board", []) == board, (
            f"seat {seat}'s read shows the board {hand.get('board')}, its events {board}")
    if seat not in (hand.get("awaiting") or [hand["to_act"]]):
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
        if e["type"] == "StubReshuffled":
            assert set(data["cards"]) == {"commitment"} and not openings, (
                f"seat {seat} can read the reshuffled stub: {e}")
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
    """No card string in a seat's pre-end reads is one that seat never held, unless it was
    dealt face up or to the board."""
    held = own_cards(history_events)
    up, board = public_cards([{**e, "data": opened(e)} for e in history_events])
    public = set(board).union(*up.values())
    for seat, reads in seen_before_end.items():
        cards = {c for c in strings_in(reads) if is_card(c)}
        assert not reads or seat not in held or cards, (
            f"seat {seat}'s reads show no card at all, not even its own")
        leaked = cards - held.get(seat, set()) - public
        assert not leaked, f"seat {seat} saw cards {sorted(leaked)} it never held, before the end"


@dataclass
class Turn:
    """One decision: at hand ``version`` the service awaited ``awaiting``; ``seat`` read
    ``legal`` (its own read) and sent ``move``."""
    version: int
    awaiting: list[int]
    seat: int
    legal: list[dict]
    move: dict


@dataclass
class PlayedHand:
    hand_no: int
    final: dict  # the admin's read once ended
    actions: int
    seen_before_end: dict[int, list]  # seat -> the JSON of every read that seat made pre-end
    turns: list[Turn] = field(default_factory=list)


def play_hand(table: Table, rng: random.Random, *, allow_fold: bool = True,
              max_actions: int = 200, check_views: bool = True, settle_timeout: float = 30.0,
              diagnostics: Callable[[], str] | None = None, game: str | None = None,
              edges: float = 0.0, peek: float = 0.0,
              screen: Callable[[dict, int], list[dict]] | None = None) -> PlayedHand:
    """Start a hand (of ``game``, at a dealer's choice table) and play it with random legal
    moves until it has ended. Each move is chosen from the acting player's own read and
    sent with that read's version. ``edges``: see ``choose_action``; ``peek``: the chance,
    at each turn, that a seat not awaited also reads the hand (and is checked);
    ``screen(read, seat)``, given, checks the acting player's read and returns the legal
    actions to choose among."""
    hand_no = table.start_hand(game)
    seen: dict[int, list] = {seat: [] for seat in table.tokens}
    turns: list[Turn] = []
    actions = 0
    while True:
        admin_view = table.hand(hand_no)
        status = admin_view["status"]
        assert admin_view["server_seed"] is None, "seed shown to the admin"
        if status in ("showdown_pending", "ended"):
            break
        awaiting = admin_view.get("awaiting") or (
            [admin_view["to_act"]] if admin_view["to_act"] is not None else [])
        assert awaiting, f"hand {hand_no} is {status!r} but awaits nobody: {admin_view}"
        assert admin_view["to_act"] == (awaiting[0] if len(awaiting) == 1 else None), admin_view
        seat = awaiting[0] if len(awaiting) == 1 else rng.choice(awaiting)
        assert seat in table.tokens, f"to_act {seat} is not a seated player: {admin_view}"
        me = table.hand(hand_no, table.tokens[seat])
        assert me["version"] == admin_view["version"] and me["awaiting"] == awaiting, (
            f"seat {seat}'s read disagrees with the admin's: {me} / {admin_view}")
        if check_views:
            evs = table.events(hand_no, table.tokens[seat])
            check_player_read_before_end(me, seat, evs)
            check_player_events_before_end(evs, seat)
            seen[seat] += [me, evs]
            others = [s for s in table.tokens if s not in awaiting]
            if others and peek and rng.random() < peek:
                other = rng.choice(others)
                theirs = table.hand(hand_no, table.tokens[other])
                their_evs = table.events(hand_no, table.tokens[other])
                check_player_read_before_end(theirs, other, their_evs)
                check_player_events_before_end(their_evs, other)
                seen[other] += [theirs, their_evs]
        offered = screen(me, seat) if screen else me["legal_actions"]
        move = choose_action(rng, {**me, "legal_actions": offered}, seat, allow_fold,
                             edges=edges)
        turns.append(Turn(me["version"], list(awaiting), seat, me["legal_actions"], move))
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
            evs = table.events(hand_no, token)
            if table.hand(hand_no)["status"] != "ended":
                check_player_read_before_end(me, seat, evs)
                check_player_events_before_end(evs, seat)
                seen[seat].extend([me, evs])
    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended",
                            timeout=settle_timeout, diagnostics=diagnostics)
    return PlayedHand(hand_no, final, actions, seen, turns)
