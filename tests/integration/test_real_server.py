"""Whole hands against a real ``cardroom serve`` (2 gunicorn processes) and real RQ workers."""

from __future__ import annotations

import os
import random

import pytest

from domain.fairness import verify_history

from .client import check_no_card_leaks, create_table, opened, play_hand
from .conftest import worker_logs

HANDS = int(os.environ.get("CARDROOM_INTEGRATION_HANDS", "4"))
SEED = int(os.environ.get("CARDROOM_INTEGRATION_SEED", "20240611"))


def check_ended_hand(table, played, total_chips: int) -> None:
    hand_no, final = played.hand_no, played.final
    # The seed goes to the auditor only (reveal: auditor); result present; chips conserved.
    assert final["server_seed"] is None, f"hand {hand_no}: the admin got the seed"
    assert table.hand(hand_no, table.auditor)["server_seed"], "the auditor has no seed"
    assert final["result"] is not None and final["result"]["pots"], final
    stacks = table.stacks()
    assert sum(stacks.values()) == total_chips, (
        f"after hand {hand_no} the table holds {sum(stacks.values())}, not {total_chips}: {stacks}")
    assert table.read()["current_hand"] is None
    assert sum(final["result"]["net"].values()) == 0, final["result"]
    # The audit of the hand is valid, every check passing.
    audit = table.audit(hand_no)
    assert audit["valid"] is True, audit
    assert all(c["ok"] for c in audit["checks"]), audit
    assert {c["name"] for c in audit["checks"]} >= {"hash_chain"}, audit
    # The history (auditor) ends with HandEnded, versions 1..n, and agrees with the table.
    history = table.history(hand_no)
    events = history["events"]
    assert history["status"] == "ended"
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "HandEnded", [e["type"] for e in events]
    assert sum(e["type"] == "HandEnded" for e in events) == 1
    assert {int(k): v for k, v in events[-1]["data"]["stacks"].items()} == {
        s: stacks[s] for s in map(int, events[-1]["data"]["stacks"])}, (
        "the hand's final stacks and the table's stacks disagree")
    assert final["version"] == len(events)
    # The auditor's history passes the verifier, the whole deck included.
    checks = verify_history(history)
    assert all(c["ok"] and not c.get("skipped") for c in checks), checks
    # Players may read the history once the hand ended; it ends the same way and verifies.
    for seat, token in table.tokens.items():
        mine = table.history(hand_no, token)
        assert [e["event_id"] for e in mine["events"]] == [e["event_id"] for e in events]
        assert all(c["ok"] for c in verify_history(mine)), verify_history(mine)
        # Nobody sees a folded hand or another's unshown down cards even after the end.
        shown = {h["seat"] for h in final["result"]["hands"]}
        for e in mine["events"]:
            if e["type"] == "CardsDealt" and e["data"]["seat"] not in shown | {seat}:
                assert e["openings"] == {}, f"seat {seat} sees unshown cards after the end: {e}"
    check_no_card_leaks(played.seen_before_end, events)


@pytest.mark.parametrize("players,workers", [(2, 1), (6, 2)])
def test_hands_to_the_end_on_real_server_and_workers(api, live_server, worker_process,
                                                     integration_redis_url, players, workers):
    procs = worker_process(integration_redis_url, count=workers)
    rng = random.Random(SEED + players)
    table = create_table(api, players, buy_in=2000)
    total = sum(table.stacks().values())
    assert total == 2000 * players

    def diagnostics() -> str:
        return worker_logs(procs) + "\n" + live_server.log()

    showdowns = 0
    for number in range(HANDS):
        # The first hand never folds, so at least one hand goes to a worker's showdown.
        played = play_hand(table, rng, allow_fold=number > 0, diagnostics=diagnostics)
        showdowns += played.final["result"]["hands"] != []
        check_ended_hand(table, played, total)
    assert showdowns >= 1
    assert all(p.poll() is None for p in procs), "a worker died\n" + diagnostics()


def test_history_closed_to_players_until_the_end(api, live_server):
    table = create_table(api, 2)
    hand_no = table.start_hand()
    for token in table.tokens.values():
        resp = api.get(f"{table.hand_path(hand_no)}/history", token=token)
        assert resp.status == 409 and resp.json["code"] == "hand_not_ended", resp
    # The auditor may, but the seed, the deck and every down card stay hidden until the end.
    history = table.history(hand_no)
    started = history["events"][0]
    assert started["type"] == "HandStarted" and "/deck" not in started["openings"], started
    assert history["server_seed"] is None
    dealt = [e for e in history["events"] if e["type"] == "CardsDealt"]
    assert dealt and all(e["openings"] == {} for e in dealt), dealt
    assert all(isinstance(c, dict) for e in dealt for c in opened(e)["cards"]), dealt
    assert table.hand(hand_no, table.auditor)["server_seed"] is None
