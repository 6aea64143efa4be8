"""Random legal hands of every game the service lists, to the end, over HTTP only.

Each case is a game with its options (the three betting structures of Texas Hold'em,
each rule book of Five Card Draw and Seven Card Stud, Five Card Stud with and without
a bring-in, Omaha, Omaha Hi/Lo), played on two backends: (a) ``cardroom serve
--workers 2`` on a real Redis with two separate ``cardroom worker`` processes, and (b)
the embedded default (``cardroom serve`` without REDIS_URL). Tables seat from 2 to the
game's most players and mix deep stacks with short ones (a few bets' worth, some barely
the ante), so players go all in, side pots form and, where all bets must be covered,
players add chips mid-hand.

Every player reads the hand with their own token before acting, picks a random legal
action from that read (amounts at random, the min, max and all-in totals among them)
and sends it with the read's version. After each hand:

* chips are conserved at the table (chips bought mid-hand are the only new ones);
* the audit is valid with every check ok, and the auditor's history passes
  ``domain.fairness.verify_history`` with nothing skipped (every player's too);
* no player's read before the end showed a card they may not see (checked at each
  read, and against the full history afterwards);
* agreement: the auditor's history, replayed in-process from scratch with the domain
  engine, awaits the same seat with the same legal actions the service offered at
  every turn, records the move that was sent, and ends with the stacks and pots the
  service reports.

Then dealer's choice: hands that name their game, and the 422s for naming one where
the table does not allow it, the game does not fit the players or does not exist. Last,
two bugs these tests found, kept as regressions.

Sizes: ``CARDROOM_VARIANT_TABLES`` (default 2: one heads-up, one full table; more are
of random sizes) tables per case, ``CARDROOM_VARIANT_HANDS`` (default 2) hands per
table; ``CARDROOM_INTEGRATION_SEED`` seeds the players (the cards vary from run to run:
every table has a new id, from which its server seeds derive).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import reduce
from typing import Callable

import pytest
import redis

from domain import games
from domain.commands import Act, StartHand
from domain.errors import DomainError
from domain.events import event_from_dict
from domain.fairness import unseal, verify_history
from domain.options import resolve_options
from tests.processes import ROOT, stop_process, subprocess_env

from .client import (Api, PlayedHand, Table, check_no_card_leaks, create_table, opened,
                     play_hand)
from .conftest import Server, log_tail

TABLES = int(os.environ.get("CARDROOM_VARIANT_TABLES", "2"))
HANDS_PER_TABLE = int(os.environ.get("CARDROOM_VARIANT_HANDS", "2"))
SEED = int(os.environ.get("CARDROOM_INTEGRATION_SEED", "20240611"))

CASES = [
    ("texas-holdem", {"structure": "fixed-limit"}),
    ("texas-holdem", {"structure": "pot-limit"}),
    ("texas-holdem", {"structure": "no-limit"}),
    ("five-card-draw", {"rules": "house"}),
    ("five-card-draw", {"rules": "casino"}),
    ("five-card-draw", {"rules": "club"}),
    ("seven-card-stud", {"rules": "house"}),
    ("seven-card-stud", {"rules": "cardroom"}),
    ("seven-card-stud", {"rules": "club"}),
    ("five-card-stud", {}),
    ("five-card-stud", {"bring_in": 0}),
    ("omaha", {}),
    ("omaha-hi-lo", {}),
]

# The event each move type records, and the field of it that holds the move's amount.
MOVE_EVENTS = {"PlayerChecked": "check", "PlayerCalled": "call", "BetPlaced": "bet",
               "PlayerRaised": "raise", "PlayerFolded": "fold", "CardsDrawn": "draw",
               "BringInPosted": "bring_in", "BetCompleted": "complete",
               "ChipsBought": "add_chips"}
AMOUNT_FIELD = {"bet": "to", "raise": "to", "add_chips": "amount"}


def case_id(case) -> str:
    game, options = case
    return game + "".join(f"-{k}={v}" for k, v in options.items())


# --- the two backends ---------------------------------------------------------------

@dataclass
class Room:
    name: str
    api: Api
    diagnostics: Callable[[], str]


def _start_workers(url: str, count: int, logdir) -> list[subprocess.Popen]:
    procs = []
    for i in range(count):
        log_path = logdir / f"worker-{i}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], cwd=ROOT,
                                    env=subprocess_env(REDIS_URL=url), stdout=log,
                                    stderr=subprocess.STDOUT)
        proc.log_path = log_path
        procs.append(proc)
    return procs


@pytest.fixture(scope="module", params=["redis", "embedded"])
def room(request, tmp_path_factory):
    """(a) the session's ``cardroom serve --workers 2`` on the integration DB of a real Redis,
    with two ``cardroom worker`` processes of this module's own; (b) ``cardroom serve``
    embedded (fakeredis and a worker thread in one process)."""
    if request.param == "redis":
        url = request.getfixturevalue("integration_redis_url")
        server = request.getfixturevalue("live_server")
        client = redis.Redis.from_url(url)
        client.flushdb()
        client.close()
        procs = _start_workers(url, 2, tmp_path_factory.mktemp("variant-workers"))

        def diagnostics() -> str:
            return "\n".join([log_tail(p.log_path) for p in procs] + [server.log()])
        yield Room("redis", server.api, diagnostics)
        alive = [p.poll() is None for p in procs]
        for proc in procs:
            stop_process(proc)
        assert all(alive), "a worker died during the module\n" + diagnostics()
    else:
        server = Server(tmp_path_factory.mktemp("variant-embedded") / "serve.log", None)
        yield Room("embedded", server.api, server.log)
        server.stop()


@pytest.fixture(scope="module")
def catalog(room) -> dict[str, dict]:
    listed = room.api.ok(room.api.get("/v1/games"), 200)["games"]
    return {g["id"]: g for g in listed}


# --- stacks ----------------------------------------------------------------------------

def bet_unit(options: dict) -> int:
    return max(options.get("big_bet") or 0, options.get("min_bet") or 0, 1)


def forced_most(options: dict) -> int:
    """The most a seat can be forced to put in before it acts: the ante and a blind or
    the bring-in."""
    return (options.get("ante") or 0) + max(options.get("big_blind") or 0,
                                            options.get("bring_in") or 0)


def random_buy_ins(rng: random.Random, options: dict, players: int) -> list[int]:
    """Deep stacks and short ones: a few bets' worth, or barely (sometimes exactly) the ante."""
    unit, ante, forced = bet_unit(options), options.get("ante") or 0, forced_most(options)
    amounts = []
    for _ in range(players):
        kind = rng.random()
        if kind < 0.15:
            amount = ante + rng.randint(0, max(1, unit // 2))
        elif kind < 0.6:
            amount = forced + rng.randint(0, 4) * unit + rng.randint(0, unit - 1)
        else:
            amount = 30 * unit + rng.randint(0, unit)
        amounts.append(max(1, amount))
    return amounts


def add_chips(table: Table, seat: int, amount: int) -> None:
    """Between hands, through the documented route."""
    table.api.ok(table.api.post(f"{table.path}/players/{seat}/chips", {"amount": amount},
                                token=table.tokens[seat]), 201)


# --- what the acting player is offered -------------------------------------------------

@dataclass
class Offers:
    """Checks each acting player's legal actions for sane shapes; counts what it saw."""
    seen: Counter = field(default_factory=Counter)

    def __call__(self, me: dict, seat: int) -> list[dict]:
        mine = next(s for s in me["seats"] if s["seat"] == seat)
        reach, current = mine["stack"] + mine["bet"], me["current_bet"]
        for action in me["legal_actions"]:
            kind = action["type"]
            self.seen[kind] += 1
            where = f"seat {seat} offered {action} (bet {mine['bet']}, stack {mine['stack']}, " \
                    f"current bet {current}) in {me['game']} v{me['version']}"
            if kind in ("bet", "raise"):
                assert action["step"] >= 1 and action["min"] <= action["max"], where
                assert (action["max"] - action["min"]) % action["step"] == 0, where
                assert action["max"] <= reach and action.get("all_in", 0) <= reach, where
                if "all_in" in action:
                    self.seen[f"{kind} all_in"] += 1
                    assert action["all_in"] == reach, where
                if kind == "bet":
                    assert current == 0 and action["min"] >= 1, where
                else:
                    assert action["min"] > current, where
            elif kind == "call":
                assert mine["bet"] < action["amount"] <= reach, where
                assert action["amount"] == (reach if action.get("all_in") else current), where
                self.seen["call all_in"] += bool(action.get("all_in"))
            elif kind == "add_chips":
                assert 1 <= action["min"] <= action["max"], where
                assert action["min"] == current - reach, where
            elif kind in ("bring_in", "complete"):
                assert mine["bet"] < action["amount"] <= reach, where
            elif kind == "draw":
                assert 0 <= action["max_cards"] <= len(mine["cards"]), where
            else:
                assert kind in ("check", "fold"), where
                assert kind == "fold" or current <= mine["bet"], where
        kinds = [a["type"] for a in me["legal_actions"]]
        assert len(set(kinds)) == len(kinds), f"seat {seat} offered {kinds}"
        # Fold is always offered, but at the draw and to the seat the cards name to bring
        # in (the bring-in is forced: bring in, or complete, or call all in for less).
        must_bring_in = "bring_in" in kinds or (
            me["street"] == "bet_1" and current == 0 and "check" not in kinds)
        assert me["status"] == "drawing" or must_bring_in or "fold" in kinds, (
            f"seat {seat} offered {kinds}")
        return me["legal_actions"]


# --- the checks of an ended hand ------------------------------------------------------------

def jsonish(value):
    return json.loads(json.dumps(value))


def check_hand(table: Table, played: PlayedHand, before: dict[int, int], game_id: str) -> None:
    """Every check of an ended hand."""
    hand_no, final = played.hand_no, played.final
    where = f"table {table.table_id} hand {hand_no} ({game_id})"
    assert final["game"] == game_id, (where, final["game"])
    assert final["server_seed"] is None, f"{where}: the admin got the seed"
    assert final["result"] is not None and final["result"]["pots"], (where, final)
    assert final["awaiting"] == [] and final["to_act"] is None and final["legal_actions"] == []
    history = table.history(hand_no)
    events = history["events"]
    assert history["status"] == "ended", where
    assert [e["version"] for e in events] == list(range(1, len(events) + 1)), where
    assert events[-1]["type"] == "HandEnded", (where, [e["type"] for e in events])
    assert final["version"] == len(events), where

    # Chips are conserved at the table: only chips bought mid-hand are new.
    bought: dict[int, int] = {}
    for e in events:
        if e["type"] == "ChipsBought":
            bought[e["data"]["seat"]] = bought.get(e["data"]["seat"], 0) + e["data"]["amount"]
    stacks = table.stacks()
    assert sum(stacks.values()) == sum(before.values()) + sum(bought.values()), (
        f"{where}: the table holds {sum(stacks.values())} after the hand, "
        f"{sum(before.values())} before, {sum(bought.values())} bought: {before} -> {stacks}")
    ended = {int(k): v for k, v in events[-1]["data"]["stacks"].items()}
    for seat, stack in stacks.items():
        assert stack == ended.get(seat, before[seat]), (
            f"{where}: seat {seat} has {stack} at the table; the hand ended it at "
            f"{ended.get(seat)} (before: {before[seat]})")
    assert sum(final["result"]["net"].values()) == 0, (where, final["result"])
    assert {int(k): v for k, v in final["result"]["net"].items()} == {
        s: ended[s] - before[s] - bought.get(s, 0) for s in ended}, (where, final["result"])
    assert table.read()["current_hand"] is None, where

    # The auditor's history verifies, nothing skipped; so does every player's, which
    # shows no unshown down card of another seat.
    checks = verify_history(history)
    assert all(c["ok"] and not c.get("skipped") for c in checks), (where, checks)
    shown = {h["seat"] for h in final["result"]["hands"]}
    for seat, token in table.tokens.items():
        mine = table.history(hand_no, token)
        assert [e["event_id"] for e in mine["events"]] == [e["event_id"] for e in events]
        assert all(c["ok"] for c in verify_history(mine)), (where, seat, verify_history(mine))
        for e in mine["events"]:
            if e["type"] in ("CardsDealt", "CardsDrawn") and e["data"]["seat"] not in shown | {
                    seat}:
                assert e["openings"] == {}, f"{where}: seat {seat} sees unshown cards: {e}"

    # No read before the end showed a card its reader may not see.
    check_no_card_leaks(played.seen_before_end, events)
    check_agreement(played, events, where)

    # The audit is valid, every check ok.
    audit = table.audit(hand_no)
    failed = [c for c in audit["checks"] if not c["ok"]]
    assert audit["valid"] is True and not failed, f"{where}: the audit fails {failed}"


def check_agreement(played: PlayedHand, events: list[dict], where: str) -> None:
    """Replay the auditor's history with the domain engine, from scratch, and compare it
    with what the service offered at each turn and reported at the end."""
    started = opened(events[0])
    game = games.game(started["game"])
    state = game.initial_state(started["options"])
    states = [state]  # states[v]: the hand after event v
    for e in events:
        state = game.evolve(state, event_from_dict(e["type"], unseal(e["data"], e["openings"])))
        states.append(state)

    # Each turn's move is the first event it wrote, but for a reshuffle of the stub that
    # a draw may need first.
    moves = [e for e in events if e["type"] in MOVE_EVENTS]
    firsts = [next(e for e in events[t.version:] if e["type"] != "StubReshuffled")
              for t in played.turns]
    assert [e["version"] for e in moves] == [e["version"] for e in firsts], (
        f"{where}: moves recorded at versions {[e['version'] for e in moves]}; turns taken "
        f"at {[t.version for t in played.turns]}")
    for turn, move in zip(played.turns, moves):
        at = states[turn.version]
        here = f"{where}, turn at v{turn.version} (seat {turn.seat}, {turn.move})"
        assert list(at.awaiting) == turn.awaiting, (
            f"{here}: the engine awaits {list(at.awaiting)}, the service {turn.awaiting}")
        engine_legal = jsonish(game.legal_actions(at, turn.seat))
        assert engine_legal == turn.legal, (
            f"{here}: the engine offers {engine_legal}, the service offered {turn.legal}")
        for seat in at.seats:
            if seat.seat not in at.awaiting:
                assert game.legal_actions(at, seat.seat) == [], (here, seat.seat)
        data = opened(move)
        assert data["seat"] == turn.seat and MOVE_EVENTS[move["type"]] == turn.move["type"], (
            f"{here}: recorded as {move['type']} {data}")
        amount_field = AMOUNT_FIELD.get(turn.move["type"])
        if amount_field:
            assert data[amount_field] == turn.move["amount"], f"{here}: recorded as {data}"
        if turn.move["type"] == "draw":
            assert sorted(data["discarded"]) == sorted(turn.move["cards"]), (here, data)

    end = states[-1]
    final = played.final
    assert end.status == "ended", (where, end.status)
    engine_stacks = {s.seat: s.stack for s in end.seats}
    service_stacks = {s["seat"]: s["stack"] for s in final["seats"]}
    assert engine_stacks == service_stacks, (
        f"{where}: the replay ends with stacks {engine_stacks}, the service {service_stacks}")
    engine_pots = [(p["pot"], p["amount"], p["reason"], sorted(p["winners"]),
                    {int(k): v for k, v in p["shares"].items()}) for p in end.pots_awarded]
    service_pots = [(p["pot"], p["amount"], p["reason"], sorted(w["seat"] for w in p["winners"]),
                     {w["seat"]: w["amount"] for w in p["winners"]})
                    for p in final["result"]["pots"]]
    assert engine_pots == service_pots, (
        f"{where}: the replay awards {engine_pots}, the service reports {service_pots}")
    for engine_pot, service_pot in zip(end.pots_awarded, final["result"]["pots"]):
        assert jsonish(engine_pot.get("halves") or None) == service_pot.get("halves"), (
            where, engine_pot, service_pot)
    assert jsonish(end.result["net"]) == final["result"]["net"], (where, end.result)
    assert sum(p["amount"] for p in end.pots_awarded) == sum(s.committed for s in end.seats), (
        f"{where}: the pots do not add up to what was put in", end.pots_awarded)


# --- playing ----------------------------------------------------------------------------------

def play_table(room: Room, rng: random.Random, game_id: str, options: dict, players: int,
               stats: Counter, offers: Offers, showdown_first: bool = False) -> None:
    """A table of ``players`` with random buy-ins plays up to ``HANDS_PER_TABLE`` hands
    (fewer once too few players have chips); ``showdown_first``: nobody folds in the
    first hand, so it reaches the showdown."""
    resolved = room.api.ok(room.api.post("/v1/tables", {"game": game_id, "options": options}),
                           201)["options"]
    table = create_table(room.api, players, game=game_id, options=options,
                         buy_ins=random_buy_ins(rng, resolved, players))
    assert table.options == resolved
    ante = table.options.get("ante") or 0
    for number in range(HANDS_PER_TABLE):
        if sum(s > 0 and s >= ante for s in table.stacks().values()) < 2:
            break
        before = table.stacks()
        played = play_hand(table, rng, edges=0.5, peek=0.2, diagnostics=room.diagnostics,
                           max_actions=400, screen=offers,
                           allow_fold=not (showdown_first and number == 0))
        check_hand(table, played, before, game_id)
        result = played.final["result"]
        stats["hands"] += 1
        stats["players"] += len(played.final["seats"])
        stats["all in"] += any(s["status"] == "all_in" for s in played.final["seats"])
        stats["side pots"] += len(result["pots"]) > 1
        stats["showdowns"] += bool(result["hands"])
        stats["chips added"] += any(t.move["type"] == "add_chips" for t in played.turns)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_random_hands_agree_with_the_engine(room, catalog, case):
    game_id, options = case
    entry = catalog[game_id]
    most = entry.get("max_players_by_rules", {}).get(options.get("rules"), entry["max_players"])
    rng = random.Random(f"{SEED}:{room.name}:{case_id(case)}")
    stats, offers = Counter(), Offers()
    for number in range(TABLES):
        players = {0: entry["min_players"], 1: most}.get(
            number, rng.randint(entry["min_players"], most))
        play_table(room, rng, game_id, options, players, stats, offers,
                   showdown_first=number == 0)
    # What was played (shown with -s, or when the case fails).
    print(f"{room.name} {case_id(case)}: {dict(stats)}; offered {dict(offers.seen)}")
    assert stats["hands"] >= TABLES and stats["showdowns"] >= 1, stats


def test_every_listed_game_and_rule_book_is_played(room, catalog):
    """The cases cover every game of ``GET /v1/games`` and every value of its ``rules``
    option set (a new game or rule book must join ``CASES``)."""
    covered = {(game, options.get("rules")) for game, options in CASES}
    for game_id, entry in catalog.items():
        assert any(g == game_id for g, _ in covered), f"{game_id} is listed but never played"
        rules = next((o for o in entry["options"] if o["name"] == "rules"), None)
        for value in (rules or {}).get("allowed", []):
            assert (game_id, value) in covered, f"{game_id} rules {value} is never played"
    assert {o["structure"] for g, o in CASES if g == "texas-holdem"} >= {
        "fixed-limit", "pot-limit", "no-limit"}


# --- dealer's choice -----------------------------------------------------------------------

def top_up(table: Table, to: int) -> None:
    for seat, stack in table.stacks().items():
        if stack < to:
            add_chips(table, seat, to - stack)


def dealers_choice_table(room: Room, players: int = 3) -> Table:
    table = create_table(room.api, players, buy_in=3000, game="texas-holdem",
                         options={"dealers_choice": True})
    assert table.options["dealers_choice"] is True
    return table


def test_dealers_choice_plays_each_named_game(room, catalog):
    rng = random.Random(f"{SEED}:{room.name}:dealers-choice")
    table = dealers_choice_table(room)
    names = sorted(catalog)
    rng.shuffle(names)
    fitting = [g for g in names if catalog[g]["min_players"] <= 3 <= catalog[g]["max_players"]]
    assert len(fitting) >= 4, fitting
    offers = Offers()
    for game_id in fitting + [None]:  # None: a hand that names no game is of the table's
        top_up(table, 3000)
        before = table.stacks()
        played = play_hand(table, rng, game=game_id, edges=0.5, screen=offers,
                           diagnostics=room.diagnostics, max_actions=400)
        game_id = game_id or "texas-holdem"
        assert played.final["game"] == game_id
        started = table.history(played.hand_no)["events"][0]
        assert started["type"] == "HandStarted" and started["data"]["game"] == game_id, started
        assert started["data"]["options"]["dealers_choice"] is True, started
        check_hand(table, played, before, game_id)


def test_naming_a_game_needs_the_option_and_a_fitting_table(room, catalog):
    api = room.api
    plain = create_table(api, 2, game="texas-holdem")
    resp = api.post(f"{plain.path}/hands", {"game": "omaha"}, token=plain.admin)
    assert resp.status == 422 and resp.json["code"] == "dealers_choice_off", resp
    assert plain.read()["current_hand"] is None and plain.read()["last_hand"] is None

    # Seven players fit Hold'em but not Five Card Draw (2 to 6 players).
    too_many = catalog["five-card-draw"]["max_players"] + 1
    assert too_many <= catalog["texas-holdem"]["max_players"]
    crowded = create_table(api, too_many, game="texas-holdem", options={"dealers_choice": True})
    resp = api.post(f"{crowded.path}/hands", {"game": "five-card-draw"}, token=crowded.admin)
    assert resp.status == 422, resp
    assert resp.json["code"] == "too_many_players", resp
    assert crowded.read()["current_hand"] is None and crowded.read()["last_hand"] is None
    resp = api.post(f"{crowded.path}/hands", {"game": "canasta"}, token=crowded.admin)
    assert resp.status == 422 and resp.json["code"] == "unknown_game", resp
    assert crowded.read()["last_hand"] is None
    # The same table plays a game that fits.
    hand_no = crowded.start_hand("omaha")
    assert crowded.hand(hand_no)["game"] == "omaha"


# --- bugs these tests found (fixed in 6fefb7a), kept as regressions -----------------------

def test_a_hand_decided_by_its_blinds_is_settled(room):
    """Heads-up Hold'em: the button posts the small blind of 25 with its whole stack; the big
    blind has nobody to act against, so the hand is at its showdown as it starts. The start
    must owe (and enqueue) the showdown job, or the hand and its table are stuck."""
    table = create_table(room.api, 2, game="texas-holdem", buy_ins=[25, 1000])
    hand_no = table.start_hand()
    hand = table.hand(hand_no)
    # Nobody is ever awaited; a quick worker may have settled it already.
    assert hand["status"] in ("showdown_pending", "ended") and hand["awaiting"] == [], hand
    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended", timeout=10,
                            diagnostics=room.diagnostics)
    assert len(final["result"]["hands"]) == 2, final["result"]
    check_hand(table, PlayedHand(hand_no, final, 0, {1: [], 2: []}), {1: 25, 2: 1000},
               "texas-holdem")
    for seat, stack in table.stacks().items():  # and the table goes on
        if stack == 0:
            add_chips(table, seat, 100)
    # (The next hand may be decided by its blinds too, and already settled, if the short
    # stack won: that it starts is the point.)
    assert table.start_hand() == hand_no + 1


def test_an_all_in_bet_for_less_on_an_open_pair_street_offers_no_raise_to_less():
    """In-process (the cards must be chosen): seat 1 is left 13 chips after third street,
    shows a pair on fourth street and opens with an all-in bet of 13, less than the small
    bet of 20. Seat 2 may call, fold or raise to a total above 13, never to 0 (it was
    offered {"type": "raise", "min": 0, "max": 0} and "raise to 0" was accepted)."""
    game = games.game("seven-card-stud")
    options = resolve_options(game.options, {"rules": "cardroom"})
    assert options["open_pair_big_bet"] and options["small_bet"] == 20 and options["ante"] == 5
    seats = ({"seat": 1, "name": "short", "stack": 38, "player_id": "a"},  # 5 + 20 + 13
             {"seat": 2, "name": "deep", "stack": 1000, "player_id": "b"})
    for n in range(2000):  # a deck where seat 1 shows a pair on fourth street and opens
        state = game.initial_state(options)
        start = StartHand(hand_no=1, button=1, seats=seats, server_seed=f"{n:064x}",
                          client_seeds={})
        state = reduce(game.evolve, game.decide(state, start), state)
        while state.betting_round == 1 and state.status == "betting":  # 20 each
            seat = state.awaiting[0]
            kinds = [a["type"] for a in game.legal_actions(state, seat)]
            kind = next(k for k in ("complete", "call", "check") if k in kinds)
            state = reduce(game.evolve, game.decide(state, Act(seat=seat, type=kind)), state)
        up = state.seat(1).up_cards
        if state.betting_round == 2 and state.awaiting == (1,) and up[0][0] == up[1][0]:
            break
    else:
        pytest.fail("no deck in 2000 gives seat 1 an open pair on fourth street")
    assert {"type": "bet", "min": 13, "max": 13, "step": 20, "all_in": 13} in \
        game.legal_actions(state, 1)
    state = reduce(game.evolve, game.decide(state, Act(seat=1, type="bet", amount=13)), state)
    raises = [a for a in game.legal_actions(state, 2) if a["type"] == "raise"]
    assert all(a["min"] > 13 for a in raises), raises
    with pytest.raises(DomainError):
        game.decide(state, Act(seat=2, type="raise", amount=0))
