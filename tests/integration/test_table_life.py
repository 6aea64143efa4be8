"""A table's life over real HTTP: joins (also during a hand), chips added, players leaving;
the chips at the table always equal what was bought in, added and cashed out; and a seat's
next occupant never reads the previous occupant's folded cards."""

from __future__ import annotations

import random

from .client import choose_action, create_table, is_card, opened, play_hand
from .conftest import worker_logs


def play_with_folder(table, folder: int) -> int:
    """One hand where ``folder`` folds as soon as it faces a bet and the others bet, raise
    or call, so the folder is dealt cards and folds them. Returns the hand number."""
    rng = random.Random(folder)
    hand_no = table.start_hand()
    for _ in range(200):
        view = table.hand(hand_no)
        if view["status"] not in ("betting", "drawing"):
            return hand_no
        seat = view["to_act"]
        me = table.hand(hand_no, table.tokens[seat])
        legal = {a["type"]: a for a in me["legal_actions"]}
        if view["status"] == "drawing":
            move = choose_action(rng, me, seat)
        elif seat == folder:
            move = {"type": "fold"} if "fold" in legal else {"type": "check"}
        elif "bet" in legal:
            move = {"type": "bet", "amount": legal["bet"]["min"]}
        elif "call" in legal:
            move = {"type": "call"}
        else:
            move = {"type": "check"}
        resp = table.act(hand_no, seat, {**move, "expected_version": me["version"]})
        assert resp.status == 201, (move, resp)
    raise AssertionError("hand did not finish")


def test_chips_follow_joins_additions_and_leaves(api, worker_process, integration_redis_url):
    procs = worker_process(integration_redis_url)
    diagnostics = lambda: worker_logs(procs)  # noqa: E731
    rng = random.Random(99)
    table = create_table(api, 3, buy_in=500)
    expected = 1500

    def check_total(when: str):
        stacks = table.stacks()
        assert sum(stacks.values()) == expected, (
            f"{when}: the table holds {sum(stacks.values())}, expected {expected}: {stacks}")

    play_hand(table, rng, diagnostics=diagnostics)
    check_total("after hand 1")
    # Chips added between hands.
    resp = api.post(f"{table.path}/players/1/chips", {"amount": 300}, token=table.tokens[1])
    assert resp.status == 201, resp
    expected += 300
    check_total("after adding chips")
    # A player joins while a hand is being played, and is dealt into the next one.
    hand_no = table.start_hand()
    joined = api.post(f"{table.path}/players", {"name": "late", "buy_in": 700})
    assert joined.status == 201, joined
    late = joined.json["seat"]
    table.tokens[late] = joined.json["token"]
    expected += 700
    assert late not in {s["seat"] for s in table.hand(hand_no)["seats"]}
    for _ in range(200):
        view = table.hand(hand_no)
        if view["status"] not in ("betting", "drawing"):
            break
        seat = view["to_act"]
        me = table.hand(hand_no, table.tokens[seat])
        resp = table.act(hand_no, seat, {**choose_action(rng, me, seat),
                                         "expected_version": me["version"]})
        assert resp.status == 201, resp
    table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended", diagnostics=diagnostics)
    check_total("after a hand during which a player joined")
    assert table.stacks()[late] == 700
    played = play_hand(table, rng, diagnostics=diagnostics)
    assert late in {s["seat"] for s in played.final["seats"]}, "the late player was not dealt in"
    check_total("after the late player's first hand")
    # A player leaves between hands with their stack.
    leaving = 2
    stack = table.stacks()[leaving]
    left = api.request("DELETE", f"{table.path}/players/{leaving}", token=table.tokens[leaving])
    assert left.status == 200 and left.json["cashed_out"] == stack, left
    expected -= stack
    del table.tokens[leaving]
    check_total("after a player left")
    play_hand(table, rng, diagnostics=diagnostics)
    check_total("after a hand without the player who left")


def test_next_occupant_of_a_seat_cannot_read_the_previous_players_folded_cards(
        api, worker_process, integration_redis_url):
    procs = worker_process(integration_redis_url)
    table = create_table(api, 3, buy_in=1000)
    folder = 2
    hand_no = play_with_folder(table, folder)
    table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended",
                    diagnostics=lambda: worker_logs(procs))
    history = table.history(hand_no)["events"]
    folded = [e for e in history if e["type"] == "PlayerFolded"]
    assert [e["data"]["seat"] for e in folded] == [folder], "the script did not fold seat 2 only"
    dealt = [c for e in history if e["type"] == "CardsDealt" and e["data"]["seat"] == folder
             for c in opened(e)["cards"]]
    assert len(dealt) == 5 and all(is_card(c) for c in dealt)
    # Before leaving, the folder's neighbours cannot see the folded cards, even after the end.
    for seat in (1, 3):
        mine = table.history(hand_no, table.tokens[seat])["events"]
        assert not any(e["type"] == "CardsDealt" and e["data"]["seat"] == folder
                       and e["openings"] for e in mine)
    # The folder leaves; a stranger sits down in the same seat.
    left = api.request("DELETE", f"{table.path}/players/{folder}", token=table.tokens[folder])
    assert left.status == 200, left
    joined = api.post(f"{table.path}/players", {"name": "stranger", "buy_in": 100})
    assert joined.status == 201, joined
    assert joined.json["seat"] == folder, "the stranger did not get the freed seat"
    stranger = joined.json["token"]
    view = table.hand(hand_no, stranger)
    seen = next(s for s in view["seats"] if s["seat"] == folder)["cards"]
    assert all(c is None for c in seen), (
        f"a player seated after hand {hand_no} reads the folded cards of the seat's previous "
        f"occupant in the hand read: {seen}")
    events = table.history(hand_no, stranger)["events"]
    leaked = [e for e in events if e["type"] == "CardsDealt"
              and e["data"]["seat"] == folder and e["openings"]]
    assert not leaked, (
        f"a player seated after hand {hand_no} reads the folded cards of the seat's previous "
        f"occupant in the history: {leaked}")
