"""Embedded mode end to end: ``cardroom serve`` without REDIS_URL (fakeredis + worker thread)."""

from __future__ import annotations

import random

from .client import check_no_card_leaks, create_table, play_hand
from .test_real_server import check_ended_hand


def test_embedded_serve_plays_a_hand_to_a_worker_thread_showdown(embedded_server):
    api = embedded_server.api
    assert api.get("/healthz").status == 200
    table = create_table(api, 3, buy_in=1000)
    total = sum(table.stacks().values())
    played = play_hand(table, random.Random(7), allow_fold=False,
                       diagnostics=embedded_server.log)
    # Nobody folded, so the hand went to showdown_pending and only the worker thread
    # (there is no other worker) could have settled it.
    history = table.history(played.hand_no)["events"]
    types = [e["type"] for e in history]
    assert "StreetStarted" in types and any(
        e["type"] == "StreetStarted" and e["data"]["kind"] == "showdown" for e in history), types
    assert types.count("ShowdownEvaluated") == 1, types
    settled = [e for e in history if e["type"] in ("ShowdownEvaluated", "PotAwarded", "HandEnded")]
    assert {e["actor"] for e in settled} == {"worker"}, settled
    assert len(played.final["result"]["hands"]) == 3
    check_ended_hand(table, played, total)
    check_no_card_leaks(played.seen_before_end, history)
    # And the table goes on: a second hand, with folds allowed, also ends.
    second = play_hand(table, random.Random(8), diagnostics=embedded_server.log)
    check_ended_hand(table, second, total)
