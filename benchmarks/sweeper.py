"""CPU of idle `cardroom worker` processes beside many tables: the owed-showdown sweeper.

Run from the repository root:
    python benchmarks/sweeper.py [--tables 50000] [--owed 5] [--seconds 60] [--workers 2]
                                 [--recent 100] [--code DIR]

Starts a private ``redis-server`` on a free loopback port (it needs the binary) and
fills it with ``--tables`` tables: a few real ones made through the service (table
stream, seated players; a quarter with an ended hand, its stream and receipt), then
copied key by key (DUMP/RESTORE under each new table id, and the id added to
``cardroom:tables`` as ``create_table`` does). ``--recent`` of the copies with an
ended hand are indexed in ``cardroom:owed-tables`` as if their hand had just ended
(the sweeper has to find that they owe nothing). ``--owed`` more real tables have a
hand waiting for its showdown whose job was lost (the queue is emptied): the
sweepers must find and settle each once, ``CARDROOM_OWED_JOB_AFTER`` (default 10 s)
after it became owed.

Then it starts ``--workers`` real ``cardroom worker`` processes (with the test keys of
``tests/processes.py``), waits until RQ lists them all, and measures for ``--seconds``
the CPU time of each (utime + stime of ``/proc/<pid>/stat``) and of the redis-server,
as % of one core. ``--code DIR`` runs the workers from another checkout (e.g. a
``git archive`` of an older commit) to compare; the tables are made by this one.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from tests.processes import TEST_KEYS, free_port, stop_process, subprocess_env  # noqa: E402

os.environ.update(TEST_KEYS)  # this process makes tables the workers must be able to settle
os.environ.pop("CARDROOM_OWED_JOB_AFTER", None)

from service.backend import Backend  # noqa: E402
from service.config import Config  # noqa: E402
from service.store import OWED_TABLES_KEY, EventStore, hand_stream  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
CLONE_BATCH = 500


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def start_redis(workdir: Path) -> tuple[subprocess.Popen, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("needs the redis-server binary")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir)],
                            stdout=open(workdir / "redis.log", "wb"), stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while True:
        try:
            if redis.Redis.from_url(url).ping():
                return proc, url
        except redis.RedisError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"redis-server did not start; see {workdir / 'redis.log'}")
        time.sleep(0.05)


class Room:
    """Tables made through the HTTP API, on a Redis the benchmark owns."""

    def __init__(self, url: str):
        from service.app import create_app

        config = Config.from_env({**os.environ, "REDIS_URL": url})
        self.backend = Backend.from_config(config)
        self.http = create_app(backend=self.backend).test_client()

    def table(self, players: int, ended_hand: bool = False, showdown: bool = False) -> str:
        created = self.http.post("/v1/tables", json={"game": "five-card-draw",
                                                     "max_seats": 6}).json
        table_id = created["table_id"]
        tokens = {}
        for name in ("ann", "bob", "cy")[:players]:
            joined = self.http.post(f"/v1/tables/{table_id}/players",
                                    json={"name": name, "buy_in": 1000}).json
            tokens[joined["seat"]] = {"Authorization": f"Bearer {joined['token']}"}
        if ended_hand or showdown:
            admin = {"Authorization": f"Bearer {created['admin_token']}"}
            hand_no = self.http.post(f"/v1/tables/{table_id}/hands", headers=admin).json["hand_no"]
            moves = [(2, {"type": "bet", "amount": 25}), (3, {"type": "call"}),
                     (1, {"type": "call"})]
            moves += [(seat, {"type": "draw", "cards": []}) for seat in (2, 3, 1)]
            moves += [(seat, {"type": "check"}) for seat in (2, 3, 1)]
            for seat, body in moves:
                resp = self.http.post(f"/v1/tables/{table_id}/hands/{hand_no}/actions",
                                      json=body, headers=tokens[seat])
                assert resp.status_code == 201, resp.json
            if ended_hand:
                assert self.backend.run_jobs()
            else:
                self.backend.queue.empty()  # the job is lost: only the sweeper can find it
        return table_id


def clone(client: redis.Redis, template: str, new_ids: list[str]) -> None:
    """Copy every key of ``template`` under each new table id."""
    prefix = f"t:{{{template}}}:"
    keys = [k.decode() for k in client.scan_iter(match=prefix + "*")]
    dumps = [(k[len(prefix):], client.dump(k), max(client.pttl(k), 0)) for k in keys]
    for start in range(0, len(new_ids), CLONE_BATCH):
        pipe = client.pipeline(transaction=False)
        for table_id in new_ids[start:start + CLONE_BATCH]:
            for suffix, blob, ttl in dumps:
                pipe.restore(f"t:{{{table_id}}}:{suffix}", ttl, blob, replace=True)
        pipe.execute()


def settled(store: EventStore, table_id: str) -> bool:
    return any(e.type == "HandEnded" for e in store.read(hand_stream(table_id, 1)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=50_000)
    parser.add_argument("--owed", type=int, default=5)
    parser.add_argument("--recent", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout the workers run (default: this one)")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="cardroom-sweeper-bench-"))
    redis_proc, url = start_redis(workdir)
    workers: list[subprocess.Popen] = []
    try:
        client = redis.Redis.from_url(url)
        room = Room(url)
        store = EventStore(client)
        made = time.monotonic()
        idle_tpl, ended_tpl = room.table(players=2), room.table(players=3, ended_hand=True)
        n_ended = args.tables // 4
        ids = [f"bench{i:011d}" for i in range(args.tables - 2)]
        clone(client, ended_tpl, ids[:n_ended])
        clone(client, idle_tpl, ids[n_ended:])
        for table_id in ids[:args.recent]:
            store.index_owed_table(table_id)  # a hand just ended there: it owes nothing
        owed = [room.table(players=3, showdown=True) for _ in range(args.owed)]
        assert client.llen(room.backend.queue.key) == 0
        tables = len(ids) + 2 + len(owed)
        print(f"{tables} tables ({n_ended + 1} with an ended hand, {len(owed)} owing a lost "
              f"showdown job, {client.zcard(OWED_TABLES_KEY)} in {OWED_TABLES_KEY}), "
              f"{client.dbsize()} keys, {client.info('memory')['used_memory_human']}, made in "
              f"{time.monotonic() - made:.0f} s", flush=True)

        env = {"REDIS_URL": url}
        if args.code != ROOT:
            env["PYTHONPATH"] = str(args.code.resolve())
        for i in range(args.workers):
            log = open(workdir / f"worker-{i}.log", "wb")
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "service.cli", "worker"], cwd=args.code,
                env=subprocess_env(**env), stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 30
        while client.scard("rq:workers") < args.workers:
            if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
                raise SystemExit(f"the workers did not start; see {workdir}")
            time.sleep(0.1)
        time.sleep(1.0)  # let them finish starting up

        pids = [w.pid for w in workers] + [redis_proc.pid]
        before, started = [cpu_seconds(p) for p in pids], time.monotonic()
        time.sleep(args.seconds)
        after, elapsed = [cpu_seconds(p) for p in pids], time.monotonic() - started
        percent = [100 * (a - b) / elapsed for a, b in zip(after, before)]

        executions = sum(len(re.findall(r"Successfully completed", (workdir / f"worker-{i}.log")
                                        .read_text(errors="replace")))
                         for i in range(args.workers))
        print(render(args, tables, n_ended + 1, elapsed, percent, executions,
                     sum(settled(store, t) for t in owed), client.llen(room.backend.queue.key),
                     client.zcard(OWED_TABLES_KEY)))
    finally:
        for proc in workers:
            stop_process(proc, signal.SIGTERM)
        stop_process(redis_proc)
        shutil.rmtree(workdir, ignore_errors=True)


def render(args, tables, ended, elapsed, percent, executions, settled_count, queued,
           indexed) -> str:
    cpu = subprocess.run("lscpu | grep 'Model name'", shell=True, capture_output=True,
                         text=True).stdout.split(":", 1)[-1].strip()
    server = subprocess.run(["redis-server", "--version"], capture_output=True,
                            text=True).stdout.split()[2].removeprefix("v=")
    workers = percent[:-1]
    code = "" if args.code == ROOT else f" --code {args.code}"
    lines = [
        f"Machine: {os.cpu_count()} cores, {cpu or 'unknown CPU'}; Python "
        f"{platform.python_version()}; Redis {server}.",
        "",
        f"Command: `python benchmarks/sweeper.py --tables {args.tables} --owed {args.owed} "
        f"--recent {args.recent} --seconds {args.seconds:g} --workers {args.workers}{code}`",
        "",
        f"{tables:,} tables ({ended:,} with an ended hand); {args.recent} just-ended tables "
        f"indexed; {args.owed} lost showdown jobs; measured for {elapsed:.1f} s after the "
        "workers started.",
        "",
        "| process | CPU, % of one core |",
        "| --- | ---: |",
        *(f"| worker {i + 1} | {p:.2f} |" for i, p in enumerate(workers)),
        f"| **workers together** | **{sum(workers):.2f}** |",
        f"| redis-server | {percent[-1]:.2f} |",
        "",
        f"Owed showdowns settled: {settled_count} of {args.owed}; showdown jobs run: {executions}; "
        f"left in the queue: {queued}; left in `cardroom:owed-tables`: {indexed}.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
