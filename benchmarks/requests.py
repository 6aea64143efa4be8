"""CPU time of one request, in process: a hand read, an action, and the floor route.

Run from the repository root, with a Redis of the benchmark's own (its database is
flushed; one holding keys that no benchmark wrote is refused):
    python benchmarks/requests.py REDIS_URL [--reads 1500] [--hands 40] [--instructions]

Each request is one WSGI call of the app, its environ built beforehand (no gunicorn, no
network client, no test client in the way), on that Redis:
the CPU time of this process (``time.process_time``, so other work on a busy machine
counts less than in wall-clock figures) per hand read, per action (the first 11 actions
of 4-player Five Card Draw hands, so no showdown job is enqueued) and per request of
``benchmarks/floor.py``'s route; the best of three passes each. ``load.py`` measures
the same under gunicorn and concurrency; this is the steadier figure to compare
versions with. As under ``cardroom serve``, every request writes its JSON access line
(here to ``os.devnull``) and its metrics to a ``PROMETHEUS_MULTIPROC_DIR`` (a temporary
one unless set).

``--instructions`` counts instead of timing: each kind runs twice under valgrind's callgrind
(on the machine: Debian's ``valgrind``), once with its requests and once preparing them only,
and the difference in instructions is divided by the number of requests. The counts hardly
move with other work on the machine, where the times above can move by a third; they leave
out what the kernel does (the sockets), which is about the same for every request.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:  # before prometheus_client is imported
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cardroom-bench-")
    atexit.register(shutil.rmtree, os.environ["PROMETHEUS_MULTIPROC_DIR"], True)

from benchmarks.scratch import emptied  # noqa: E402
from floor import create_floor_app  # noqa: E402
from load import SCRIPT  # noqa: E402
from service import logs  # noqa: E402
from service.app import create_app  # noqa: E402
from service.backend import Backend  # noqa: E402
from service.config import Config  # noqa: E402
from service.keys import new_key_pair  # noqa: E402
from werkzeug.test import EnvironBuilder  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("redis_url")
    parser.add_argument("--reads", type=int, default=1500)
    parser.add_argument("--hands", type=int, default=40)
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under valgrind instead of timing")
    parser.add_argument("--only", choices=KINDS, help=argparse.SUPPRESS)  # one count's run
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.instructions:
        return count_instructions(args)
    logging.getLogger().addHandler(logs.json_handler(open(os.devnull, "w")))
    logging.getLogger().setLevel(logging.INFO)
    secret_key, signing_key = new_key_pair()
    config = Config(redis_url=args.redis_url, secret_key=secret_key, signing_key=signing_key)
    backend = Backend.from_config(config)
    emptied(backend.redis)
    app = create_app(config, backend=backend)
    client, floor = app.test_client(), create_floor_app(args.redis_url)

    def new_hand():
        table = client.post("/v1/tables", json={"game": "five-card-draw"}).json
        tokens = {}
        for n in range(4):
            seated = client.post(f"/v1/tables/{table['table_id']}/players",
                                 json={"name": f"p{n}", "buy_in": 1000}).json
            tokens[seated["seat"]] = {"Authorization": f"Bearer {seated['token']}"}
        started = client.post(f"/v1/tables/{table['table_id']}/hands",
                              headers={"Authorization": f"Bearer {table['admin_token']}"}).json
        return f"/v1/tables/{table['table_id']}/hands/{started['hand_no']}", tokens

    def reads(n: int, send: bool = True) -> float:
        hand, tokens = new_hand()
        asked = [environ(hand, headers=tokens[2]) for _ in range(n)]
        start = time.process_time()
        for one in asked if send else ():
            assert answer(app, one)[0] == 200
        return (time.process_time() - start) / n

    def actions(hands: int, send: bool = True) -> float:
        spent, count = 0.0, 0
        for _ in range(hands):
            hand, tokens = new_hand()
            seat = 2
            for action in SCRIPT[:-1]:
                one = environ(f"{hand}/actions", "POST", {
                    **tokens[seat], "Idempotency-Key": uuid.uuid4().hex}, action)
                if not send:
                    continue
                start = time.process_time()
                status, done = answer(app, one)
                spent, count = spent + time.process_time() - start, count + 1
                assert status == 201, done
                seat = [e for e in json.loads(done)["events"] if e["type"] == "ActionOn"][-1][
                    "data"]["seats"][0]
        return spent / max(count, 1)

    def floors(n: int, send: bool = True) -> float:
        asked = [environ("/floor") for _ in range(n)]
        start = time.process_time()
        for one in asked if send else ():
            assert answer(floor, one)[0] == 200
        return (time.process_time() - start) / n

    reads(50), actions(2), floors(100)  # warm: scripts loaded, lazy tables built
    kinds = {"read": (reads, args.reads), "action": (actions, args.hands),
             "floor": (floors, args.reads)}
    if args.only:
        measure, n = kinds[args.only]
        measure(n, send=not args.prepare_only)
        return 0
    for kind, (measure, n) in kinds.items():
        print(f"{KINDS[kind]:9} {1000 * min(measure(n) for _ in range(3)):.3f} ms CPU a request")
    return 0


def environ(path: str, method: str = "GET", headers: dict | None = None,
            body: dict | None = None) -> dict:
    """The WSGI environ of a request from a client on loopback, as gunicorn would pass it."""
    made = EnvironBuilder(path=path, method=method, headers=headers, json=body).get_environ()
    made["REMOTE_ADDR"] = "127.0.0.1"
    return made


def answer(app, environ: dict) -> tuple[int, bytes]:
    """``app``'s status and body for ``environ``: one WSGI call, as gunicorn makes it."""
    status = []
    body = app(environ, lambda line, headers, exc_info=None: status.append(line))
    try:
        return int(status[0].split()[0]), b"".join(body)
    finally:
        body.close()


def count_instructions(args) -> int:
    """Instructions per request of each kind: a run of it under callgrind, less a run that
    prepares the same requests (tables, seats, hands, warm-up) without sending them."""
    def collected(kind: str, prepare_only: bool) -> int:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                   sys.executable, __file__, args.redis_url, "--only", kind,
                   "--reads", str(args.reads), "--hands", str(args.hands)]
        run = subprocess.run(command + ["--prepare-only"] * prepare_only, capture_output=True,
                             text=True, check=True)
        return int(re.search(r"Collected : (\d+)", run.stderr)[1])

    for kind in KINDS:
        count = args.hands * (len(SCRIPT) - 1) if kind == "action" else args.reads
        spent = collected(kind, False) - collected(kind, True)
        print(f"{KINDS[kind]:9} {spent / count:,.0f} instructions a request", flush=True)
    return 0


KINDS = {"read": "hand read", "action": "action", "floor": "floor"}


if __name__ == "__main__":
    sys.exit(main())
