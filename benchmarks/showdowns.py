"""CPU of a ``cardroom worker`` per showdown job: RQ's bookkeeping and the job itself.

Run from the repository root, on a Redis whose database it may flush (one holding keys
that no benchmark wrote is refused):
    python benchmarks/showdowns.py --redis-url URL [--hands 100] [--stage all] 2>/dev/null

``--stage prepare`` flushes the database, plays ``--hands`` Five Card Draw hands of 4
players up to their showdown through the service layer (``Cardroom``, with the test keys
of ``tests/processes.py``) and enqueues each hand's showdown job, as the API does.
``--stage work`` runs the worker class of ``cardroom worker`` (``service.worker``) in
burst mode, in this process, until the queue is empty, logging as that worker does (on
stderr), and prints its CPU time per job (``time.process_time``: the first job, which
imports and loads what every later one uses, is left out of the timing). ``--stage
all`` (the default) does both.

Instructions are steadier than CPU time on a busy machine: prepare ``--hands`` N1 and
N2, run ``--stage work`` of each under ``valgrind --tool=callgrind
--callgrind-out-file=/dev/null`` (with ``PYTHONHASHSEED=0``) and divide the difference of
the two counts by N2 - N1.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.processes import TEST_KEYS  # noqa: E402

os.environ.update(TEST_KEYS)  # the worker's jobs read their keys from the environment

from benchmarks.audit import to_the_showdown  # noqa: E402
from benchmarks.scratch import emptied  # noqa: E402
from service import handover, jobs, logs, metrics  # noqa: E402
from service.backend import Backend, connect  # noqa: E402
from service.config import Config  # noqa: E402
from service.room import Cardroom  # noqa: E402
from service.store import EventStore  # noqa: E402
from service.worker import _Worker  # noqa: E402


def prepare(config: Config, hands: int) -> None:
    """Flush the database; ``hands`` hands brought to their showdown, each job enqueued."""
    backend = Backend.from_config(config)
    emptied(backend.redis)
    keys = config.keys()
    def enqueue(table_id: str, hand_no: int) -> None:  # as the API does (not embedded)
        jobs.enqueue_showdown(backend.queue, table_id, hand_no,
                              handover.hand_over(room, table_id, hand_no))

    room = Cardroom(EventStore(backend.redis, keys), keys, enqueue)
    to_the_showdown(room, hands)
    assert backend.queue.count == hands


def work(config: Config) -> tuple[int, float]:
    """Work the queue with the worker class of ``cardroom worker``: the jobs timed (all but
    the first) and their CPU seconds."""
    logs.configure()
    metrics.job_metrics()
    connection = connect(config.rq_url)
    jobs.run_in_worker(config, connection)  # as ``cardroom worker`` does
    worker = _Worker([config.queue_name], connection=connection)
    worker.work(burst=True, max_jobs=1, logging_level="INFO")  # the warm-up, untimed
    timed = worker.queues[0].count
    start = time.process_time()
    worker.work(burst=True, logging_level="INFO")
    seconds = time.process_time() - start
    assert not worker.queues[0].failed_job_registry.count, "a showdown job failed"
    return timed, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--stage", choices=("prepare", "work", "all"), default="all")
    args = parser.parse_args(argv)
    config = Config(redis_url=args.redis_url, **{
        "secret_key": TEST_KEYS["CARDROOM_SECRET_KEY"],
        "signing_key": TEST_KEYS["CARDROOM_SIGNING_KEY"]})
    os.environ["REDIS_URL"] = args.redis_url
    if args.stage != "work":
        prepare(config, args.hands)
    if args.stage != "prepare":
        timed, seconds = work(config)
        logging.shutdown()
        print(f"showdown jobs: {1000 * seconds / max(timed, 1):.3f} ms CPU a job "
              f"({timed} timed, the first left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
