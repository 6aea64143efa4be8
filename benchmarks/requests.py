"""CPU time of one request, in process: a hand read, an action, and the floor route.

Run from the repository root, with a Redis of the benchmark's own (its database is
flushed):
    python benchmarks/requests.py REDIS_URL [--reads 1500] [--hands 40]

Through Flask's test client (no gunicorn, no network client in the way) on that Redis:
the CPU time of this process (``time.process_time``, so other work on a busy machine
counts less than in wall-clock figures) per hand read, per action (the first 11 actions
of 4-player Five Card Draw hands, so no showdown job is enqueued) and per request of
``benchmarks/floor.py``'s route; the best of three passes each. ``load.py`` measures
the same under gunicorn and concurrency; this is the steadier figure to compare
versions with. As under ``cardroom serve``, every request writes its JSON access line
(here to ``os.devnull``) and its metrics to a ``PROMETHEUS_MULTIPROC_DIR`` (a temporary
one unless set).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import shutil
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

from floor import create_floor_app  # noqa: E402
from load import SCRIPT  # noqa: E402
from service import logs  # noqa: E402
from service.app import create_app  # noqa: E402
from service.backend import Backend  # noqa: E402
from service.config import Config  # noqa: E402
from service.keys import new_key_pair  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("redis_url")
    parser.add_argument("--reads", type=int, default=1500)
    parser.add_argument("--hands", type=int, default=40)
    args = parser.parse_args(argv)
    logging.getLogger().addHandler(logs.json_handler(open(os.devnull, "w")))
    logging.getLogger().setLevel(logging.INFO)
    secret_key, signing_key = new_key_pair()
    config = Config(redis_url=args.redis_url, secret_key=secret_key, signing_key=signing_key)
    backend = Backend.from_config(config)
    backend.redis.flushdb()
    client = create_app(config, backend=backend).test_client()
    floor = create_floor_app(args.redis_url).test_client()

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

    def reads(n: int) -> float:
        hand, tokens = new_hand()
        start = time.process_time()
        for _ in range(n):
            assert client.get(hand, headers=tokens[2]).status_code == 200
        return (time.process_time() - start) / n

    def actions(hands: int) -> float:
        spent, count = 0.0, 0
        for _ in range(hands):
            hand, tokens = new_hand()
            seat = 2
            for action in SCRIPT[:-1]:
                headers = {**tokens[seat], "Idempotency-Key": uuid.uuid4().hex}
                start = time.process_time()
                done = client.post(f"{hand}/actions", json=action, headers=headers)
                spent, count = spent + time.process_time() - start, count + 1
                assert done.status_code == 201, done.json
                seat = [e for e in done.json["events"] if e["type"] == "ActionOn"][-1][
                    "data"]["seats"][0]
        return spent / count

    def floors(n: int) -> float:
        start = time.process_time()
        for _ in range(n):
            assert floor.get("/floor").status_code == 200
        return (time.process_time() - start) / n

    reads(50), actions(2), floors(100)  # warm: scripts loaded, lazy tables built
    for name, measure, n in (("hand read", reads, args.reads), ("action", actions, args.hands),
                             ("floor", floors, args.reads)):
        print(f"{name:9} {1000 * min(measure(n) for _ in range(3)):.3f} ms CPU a request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
