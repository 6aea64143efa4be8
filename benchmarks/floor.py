"""The floor of cardroom's own stack: the least a request that touches Redis can cost.

Run from the repository root, beside ``cardroom serve`` on the same Redis:
    REDIS_URL=redis://127.0.0.1:6379/0 python benchmarks/floor.py --port P [--workers 2]
                                                                    [--threads 8]

Serves a plain Flask app with one route, ``GET /floor``: one ``EVALSHA`` of a trivial
script (registered once per process) on ``REDIS_URL``, and a small JSON answer. It runs
under exactly the gunicorn settings of ``cardroom serve`` (``service.cli.gunicorn_options``:
the same worker class, processes and threads), so ``benchmarks/load.py --floor URL``
can report every figure of the service as a ratio to this route, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FLOOR_LUA = "return redis.call('INCR', KEYS[1])"


def create_floor_app(redis_url: str):
    import redis
    from flask import Flask

    app = Flask(__name__)
    client = redis.Redis.from_url(redis_url)
    script = client.register_script(FLOOR_LUA)

    @app.get("/floor")
    def floor():
        return {"floor": int(script(keys=["cardroom:bench:floor"]))}

    return app


def main(argv: list[str] | None = None) -> int:
    from service.cli import THREADS, WORKERS, Gunicorn, gunicorn_options
    from service.config import Config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--threads", type=int, default=THREADS,
                        help="as cardroom serve's --threads; both add CARDROOM_MAX_STREAMS")
    args = parser.parse_args(argv)
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        parser.error("set REDIS_URL (the Redis that cardroom serve uses)")
    print(f"floor: http://{args.host}:{args.port}/floor on {args.workers} processes x "
          f"{args.threads} threads", flush=True)
    threads = args.threads + Config.from_env().max_streams  # as cardroom serve does
    Gunicorn(lambda: create_floor_app(redis_url),
             gunicorn_options(args.host, args.port, args.workers, threads)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
