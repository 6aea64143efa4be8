"""Concurrent requests over real HTTP (``cardroom serve`` with 2 processes on a real Redis).

What is correct, read from ``service/room.py`` ``Cardroom.act``: with an
``expected_version`` the version is checked before the move is judged, and the append
itself is conditional on that version (one Lua script), so of two different moves sent
together by the player to act with the same version, one is applied (201) and the other
gets 409 ``version_conflict`` carrying the winner's version -- never a 403/422 for the
turn having moved, and never two sets of events. An ``Idempotency-Key`` makes retries
(sequential or concurrent) answer with the first result and append nothing more.
"""

from __future__ import annotations

import random
import threading
import uuid

from service.store import hand_stream

from .client import choose_action, create_table

EVENT_OF = {"check": "PlayerChecked", "call": "PlayerCalled", "bet": "BetPlaced",
            "raise": "PlayerRaised", "fold": "PlayerFolded", "draw": "CardsDrawn"}


def race(*calls, timeout: float = 30.0) -> list:
    """Run the calls in threads released together by a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait(timeout)
            results[i] = call()
        except BaseException as exc:  # reported below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c), daemon=True) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), f"a request hung for over {timeout} s"
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def two_different_moves(rng: random.Random, me: dict, seat: int) -> list[dict] | None:
    moves: dict[str, dict] = {}
    for _ in range(50):
        move = choose_action(rng, me, seat)
        moves.setdefault(repr(sorted(move.items())), move)
        if len(moves) >= 4:
            break
    distinct = list(moves.values())
    non_fold = [m for m in distinct if m["type"] != "fold"]
    pool = non_fold if len(non_fold) >= 2 else distinct
    return rng.sample(pool, 2) if len(pool) >= 2 else None


def race_through_one_hand(table, store, rng, players: int) -> int:
    hand_no = table.start_hand()
    stream = hand_stream(table.table_id, hand_no)
    races = 0
    for _ in range(200):
        admin_view = table.hand(hand_no)
        if admin_view["status"] not in ("betting", "drawing"):
            return races
        seat = admin_view["to_act"]
        me = table.hand(hand_no, table.tokens[seat])
        version = me["version"]
        moves = two_different_moves(rng, me, seat)
        if moves is None:
            resp = table.act(hand_no, seat, {**choose_action(rng, me, seat),
                                             "expected_version": version})
            assert resp.status == 201, resp
            continue
        if races % 2:  # half the races pin the version with If-Match instead of the body
            calls = [lambda m=m: table.act(hand_no, seat, m, headers={"If-Match": f'"{version}"'})
                     for m in moves]
        else:
            calls = [lambda m=m: table.act(hand_no, seat, {**m, "expected_version": version})
                     for m in moves]
        answers = race(*calls)
        races += 1
        statuses = sorted(a.status for a in answers)
        assert statuses == [201, 409], (
            f"race {races} at v{version}, seat {seat} sending {moves}: {answers}")
        winner_index = next(i for i, a in enumerate(answers) if a.status == 201)
        winner, loser = answers[winner_index], answers[1 - winner_index]
        move = moves[winner_index]
        body = winner.json
        assert loser.content_type == "application/problem+json", loser
        assert loser.json["code"] == "version_conflict", loser
        # No worker runs here, so nothing but the winner wrote after `version`.
        assert loser.json["current_version"] == body["version"], (loser, body)
        stored = store.read(stream, after=version)
        assert len(store.read(stream)) == body["version"], "the stream is not at the winner's version"
        assert [e.version for e in stored] == list(range(version + 1, body["version"] + 1))
        assert [e.event_id for e in stored] == [e["event_id"] for e in body["events"]], (
            "the stream holds other events than the winner's")
        assert stored[0].type == EVENT_OF[move["type"]], (move, stored[0])
        assert stored[0].actor == f"seat:{seat}"
        if move["type"] in ("bet", "raise"):
            assert stored[0].data["to"] == move["amount"]
        if move["type"] == "draw":
            assert sorted(stored[0].openings[f"/discarded/{i}"]["value"]
                          for i in range(len(move["cards"]))) == sorted(move["cards"])
        acting = [e for e in stored if e.type in EVENT_OF.values()]
        assert len(acting) == 1, f"two moves recorded for one turn: {[e.type for e in stored]}"
    raise AssertionError("the hand did not reach its showdown in 200 turns")


def test_two_racing_moves_one_wins_one_gets_409(api, store):
    rng = random.Random(3)
    total_races = 0
    for players in (2, 3, 4):
        table = create_table(api, players)
        total_races += race_through_one_hand(table, store, rng, players)
    assert total_races >= 10, f"only {total_races} races were run"


# --- idempotency -----------------------------------------------------------------

def _pending_turn(table, hand_no):
    admin_view = table.hand(hand_no)
    assert admin_view["status"] in ("betting", "drawing"), admin_view
    seat = admin_view["to_act"]
    return seat, table.hand(hand_no, table.tokens[seat])


def test_retried_action_with_same_idempotency_key_answers_the_first_result(api, store):
    rng = random.Random(11)
    table = create_table(api, 3)
    hand_no = table.start_hand()
    stream = hand_stream(table.table_id, hand_no)
    seat, me = _pending_turn(table, hand_no)
    move = {**choose_action(rng, me, seat, allow_fold=False), "expected_version": me["version"]}
    key = f"retry-{uuid.uuid4()}"
    first = table.act(hand_no, seat, move, headers={"Idempotency-Key": key})
    assert first.status == 201, first
    after_first = store.version(stream)
    assert after_first == first.json["version"]
    ids = {e["command_id"] for e in first.json["events"]}  # one command's: one digest
    assert len(ids) == 1 and key not in ids and None not in ids, first.json
    # A plain retry (same body, now-stale expected_version) gets the first answer; the same
    # key with another body is refused; nothing is appended either time.
    again = table.act(hand_no, seat, move, headers={"Idempotency-Key": key})
    assert (again.status, again.json) == (201, first.json), (first, again)
    other = table.act(hand_no, seat, {"type": "fold"}, headers={"Idempotency-Key": key})
    assert (other.status, other.json["code"]) == (422, "idempotency_key_reused"), other
    assert store.version(stream) == after_first, "a retried command appended events"
    # The same key is another command for the next player (the key is per seat).
    seat2, me2 = _pending_turn(table, hand_no)
    assert seat2 != seat
    move2 = {**choose_action(rng, me2, seat2, allow_fold=False), "expected_version": me2["version"]}
    second = table.act(hand_no, seat2, move2, headers={"Idempotency-Key": key})
    assert second.status == 201 and second.json["version"] > after_first, second


def test_concurrent_retries_with_one_idempotency_key_get_one_answer(api, store):
    """Several copies of one command at once (a client retrying on a timeout): every copy
    gets the same 201 body and the stream gets one set of events. Repeated for many turns
    so that copies land on both sides of the first one's write."""
    rng = random.Random(12)
    copies = 6
    rounds = 0
    refused: list[str] = []
    for players in (3, 4, 5):
        table = create_table(api, players)
        hand_no = table.start_hand()
        stream = hand_stream(table.table_id, hand_no)
        while table.hand(hand_no)["status"] in ("betting", "drawing"):
            seat, me = _pending_turn(table, hand_no)
            move = choose_action(rng, me, seat, allow_fold=False)
            pinned = rounds % 2 == 0
            if pinned:
                move["expected_version"] = me["version"]
            key = f"k-{uuid.uuid4()}"
            answers = race(*[lambda: table.act(hand_no, seat, move,
                                               headers={"Idempotency-Key": key})] * copies)
            rounds += 1
            ok = [a for a in answers if a.status == 201]
            assert ok, f"round {rounds}: no copy of {move} was applied: {answers}"
            bad = [a for a in answers if a.status != 201]
            if bad:
                refused.append(f"round {rounds} ({'with' if pinned else 'without'} "
                               f"expected_version): " + ", ".join(
                                   f"{a.status} {(a.json or {}).get('code')}" for a in bad))
            bodies = [a.json for a in ok]
            assert all(b == bodies[0] for b in bodies), bodies
            # Whatever the answers, one set of events only.
            assert store.version(stream) == bodies[0]["version"], "more than one set of events"
            stored = store.read(stream, after=me["version"])
            assert [e.event_id for e in stored] == [e["event_id"] for e in bodies[0]["events"]]
            assert sum(e.type in EVENT_OF.values() for e in stored) == 1
    assert rounds >= 10
    assert not refused, (
        f"copies of one idempotent command were refused instead of getting the first answer "
        f"in {len(refused)} of {rounds} rounds of {copies} concurrent copies:\n"
        + "\n".join(refused))


def test_concurrent_retries_of_start_hand_with_one_key_get_one_answer(api, store):
    """The same for ``POST .../hands`` (admin): copies of one start get the first answer,
    not 409 ``hand_in_progress``, and exactly one hand is opened."""
    from service.store import table_stream

    refused = []
    for attempt in range(8):
        table = create_table(api, 2)
        key = f"start-{uuid.uuid4()}"
        answers = race(*[lambda: api.post(f"{table.path}/hands", {}, token=table.admin,
                                          headers={"Idempotency-Key": key})] * 6)
        ok = [a for a in answers if a.status == 201]
        assert ok, answers
        assert all(a.json == ok[0].json for a in ok), answers
        opened = [e for e in store.read(table_stream(table.table_id)) if e.type == "HandOpened"]
        assert len(opened) == 1, f"{len(opened)} hands opened by one idempotent command"
        refused += [f"attempt {attempt}: {a.status} {(a.json or {}).get('code')}"
                    for a in answers if a.status != 201]
    assert not refused, "copies of one start_hand were refused:\n" + "\n".join(refused)
