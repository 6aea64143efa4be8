"""What a table costs in Redis memory: bytes per table, per hand and per event.

Run from the repository root:
    python benchmarks/memory.py [--tables 20] [--hands 10] [--players 3] [--game five-card-draw]
                                [--archive]

Starts a private ``redis-server`` on a free loopback port (it needs the binary), then
plays, through the Flask app in this process (the same writes as ``cardroom serve``)
with the showdown jobs run here too, ``--hands`` hands on each of ``--tables`` tables of
``--players`` players (random legal moves, every command sent with an Idempotency-Key).
It reports ``INFO memory``'s ``used_memory`` before and after, and ``MEMORY USAGE key
SAMPLES 0`` of every key, summed by kind (measured once the tables are seated, before
any hand, and again after the hands), with ``XLEN`` of every stream for the events.
With ``--archive`` it plays with ``CARDROOM_ARCHIVE_AFTER`` set (so every hand that ends
is indexed for the archiver), then archives every ended hand (``service.retention``, as
``CARDROOM_ARCHIVE_AFTER=0`` would) and measures again: a hand's bytes before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from uuid import uuid4

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.processes import TEST_KEYS, RedisServer  # noqa: E402

os.environ.update(TEST_KEYS)  # the showdown jobs run in this process

from service.app import create_app  # noqa: E402
from service.backend import Backend  # noqa: E402
from service.config import Config  # noqa: E402
from service.retention import archive_ended_hands  # noqa: E402
from service.store import EventStore  # noqa: E402
from tests.integration.client import choose_action  # noqa: E402

KINDS = [  # (kind, pattern of its keys), first match wins
    ("table stream", r"^t:\{[^}]+\}:events$"),
    ("hand streams", r"^t:\{[^}]+\}:hand:\d+:events$"),
    ("hand archives", r"^t:\{[^}]+\}:hand:\d+:archive$"),
    ("receipts", r"^t:\{[^}]+\}:hand:\d+:receipt$"),
    ("idempotency records (TTL 24 h)", r"^t:\{[^}]+\}:idem:"),
    ("other table keys", r"^t:\{"),
    ("RQ's keys (jobs kept 1 h; on RQ_REDIS_URL if set)", r"^rq:"),
    ("`cardroom:ended-hands` (until archived)", r"^cardroom:ended-hands$"),
    ("other", r""),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--game", default="five-card-draw")
    parser.add_argument("--archive", action="store_true",
                        help="then archive every ended hand and measure again")
    args = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("needs the redis-server binary")
    with tempfile.TemporaryDirectory() as workdir:
        server = RedisServer(binary, Path(workdir)).start()
        try:
            measure(server.url, args)
        finally:
            server.stop()


def measure(url: str, args) -> None:
    if args.archive:  # the hands are indexed as they end, by the app and the jobs alike
        os.environ["CARDROOM_ARCHIVE_AFTER"] = "3600"
    backend = Backend.from_config(Config.from_env({**os.environ, "REDIS_URL": url}))
    http = create_app(backend=backend).test_client()
    redis = backend.redis
    before = used_memory(redis)
    rng = random.Random(20261122)
    tables = [seated_table(http, args) for _ in range(args.tables)]
    seated = usage_by_kind(redis)
    for table in tables:
        for _ in range(args.hands):
            play_hand(http, backend, table, rng)
    after = used_memory(redis)
    played = usage_by_kind(redis)
    report(args, before, after, seated, played, redis)
    if args.archive:
        archive_every_hand(redis)
        report_archived(args, after, used_memory(redis), played, usage_by_kind(redis))


def seated_table(http, args) -> dict:
    created = post(http, "/v1/tables", {"game": args.game, "max_seats": max(args.players, 2)})
    table = {"path": f"/v1/tables/{created['table_id']}",
             "admin": created["admin_token"], "players": {}}
    for n in range(args.players):
        joined = post(http, f"{table['path']}/players", {"name": f"p{n}", "buy_in": 100000})
        table["players"][joined["seat"]] = joined["token"]
    return table


def play_hand(http, backend: Backend, table: dict, rng: random.Random) -> None:
    hand_no = post(http, f"{table['path']}/hands", {}, table["admin"])["hand_no"]
    hand_path = f"{table['path']}/hands/{hand_no}"
    while True:
        hand = get(http, hand_path, table["admin"])
        if hand["status"] == "showdown_pending":
            assert backend.run_jobs(), f"no showdown job for {hand_path}"
            continue
        if hand["status"] == "ended":
            return
        seat = hand["to_act"] if hand["to_act"] is not None else rng.choice(hand["awaiting"])
        me = get(http, hand_path, table["players"][seat])
        post(http, f"{hand_path}/actions",
             {**choose_action(rng, me, seat), "expected_version": me["version"]},
             table["players"][seat])


def post(http, path: str, body: dict, token: str | None = None) -> dict:
    headers = {"Idempotency-Key": uuid4().hex}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    response = http.post(path, json=body, headers=headers)
    assert response.status_code in (200, 201), (path, body, response.get_json())
    return response.get_json()


def get(http, path: str, token: str) -> dict:
    response = http.get(path, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, (path, response.get_json())
    return response.get_json()


def used_memory(redis) -> int:
    return int(redis.info("memory")["used_memory"])


def usage_by_kind(redis) -> dict[str, Counter]:
    """kind -> Counter(keys, bytes, events)."""
    totals: dict[str, Counter] = {kind: Counter() for kind, _ in KINDS}
    for raw in redis.scan_iter(count=1000):
        key = raw.decode()
        kind = next(k for k, pattern in KINDS if re.search(pattern, key))
        totals[kind]["keys"] += 1
        totals[kind]["bytes"] += redis.memory_usage(key, samples=0)
        if "stream" in kind:
            totals[kind]["events"] += redis.xlen(key)
    return totals


def report(args, before: int, after: int, seated: dict, played: dict, redis) -> None:
    hands = args.tables * args.hands
    version = redis.info("server")["redis_version"]
    print(f"## {args.tables} tables x {args.hands} hands of {args.game}, {args.players} players"
          f"\n\nRedis {version}, {platform.machine()}, {cpu_model()}\n")
    print("| keys | after seating: keys, bytes | after the hands: keys, bytes, events |"
          " bytes per event |")
    print("| --- | --- | --- | --- |")
    for kind, _ in KINDS:
        s, p = seated[kind], played[kind]
        if not p["keys"]:
            continue
        per_event = f"{p['bytes'] / p['events']:.0f}" if "stream" in kind else ""
        print(f"| {kind} | {s['keys']}, {s['bytes']} | {p['keys']}, {p['bytes']}, "
              f"{p['events']} | {per_event} |")
    kept = ("table stream", "hand streams", "receipts")
    table_bytes = sum(seated[k]["bytes"] for k in kept) / args.tables
    hand_bytes = sum(played[k]["bytes"] - seated[k]["bytes"] for k in kept) / hands
    hand_events = sum(played[k]["events"] - seated[k]["events"] for k in kept) / hands
    idem = (played["idempotency records (TTL 24 h)"]["bytes"]
            - seated["idempotency records (TTL 24 h)"]["bytes"]) / hands
    print(f"\n- a seated table, before any hand: {table_bytes:.0f} bytes (its stream)")
    print(f"- a hand (its stream, its receipt, its events on the table's stream): "
          f"{hand_bytes:.0f} bytes, {hand_events:.1f} events")
    print(f"- idempotency records, while they live (24 h): {idem:.0f} bytes per hand")
    print(f"- INFO memory used_memory: {before} before, {after} after: "
          f"{(after - before) / hands:.0f} bytes per hand, all included")


def archive_every_hand(redis) -> None:
    store = EventStore(redis)
    while archive_ended_hands(store, 0.0, batch=1000):
        pass


def report_archived(args, played_memory: int, archived_memory: int, played: dict,
                    archived: dict) -> None:
    hands = args.tables * args.hands
    streams = played["hand streams"]
    print("\n## After archiving every ended hand\n\n| keys | keys, bytes |\n| --- | --- |")
    for kind, _ in KINDS:
        if archived[kind]["keys"]:
            print(f"| {kind} | {archived[kind]['keys']}, {archived[kind]['bytes']} |")
    stored = archived["hand streams"]["bytes"] + archived["hand archives"]["bytes"]
    print(f"\n- a hand's events: {streams['bytes'] / hands:.0f} bytes as a stream, "
          f"{stored / hands:.0f} bytes archived ({stored / streams['bytes']:.0%})")
    kept = ("hand streams", "hand archives", "receipts")
    print(f"- a hand kept for good (its events and its receipt; its 2 table events apart): "
          f"{sum(played[k]['bytes'] for k in kept) / hands:.0f} bytes before, "
          f"{sum(archived[k]['bytes'] for k in kept) / hands:.0f} after")
    print(f"- INFO memory used_memory: {played_memory} before archiving, {archived_memory} "
          f"after: {(played_memory - archived_memory) / hands:.0f} bytes per hand freed")


def cpu_model() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return re.search(r"Model name:\s*(.+)", text).group(1).strip()
    except (OSError, AttributeError):
        return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    main()
