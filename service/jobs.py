"""RQ jobs: showdowns are settled by workers, and owed jobs that were lost are re-enqueued.

The write that brings a hand to its showdown also records, atomically, that a
showdown job is owed; the job's own write clears the marker. A marker older
than ``Config.owed_job_after`` means the job was lost (a worker died, the
enqueue never happened) and the sweeper enqueues it again. Settling is
conditional on the hand's version, so running a job twice settles once.
"""

from __future__ import annotations

import os
import time

from rq import Queue, get_current_job

from service.config import Config
from service.room import SHOWDOWN_JOB, Cardroom
from service.store import EventStore


def settle_showdown(table_id: str, hand_no: int) -> bool:
    connection = get_current_job().connection
    # Fault injection for the crash tests: hold the job here so a test can kill the worker.
    time.sleep(float(os.environ.get("CARDROOM_SHOWDOWN_PAUSE", "0")))
    keys = Config.from_env().keys()
    return Cardroom(EventStore(connection, keys), keys, None).settle_showdown(table_id, hand_no)


def enqueue_showdown(queue: Queue, table_id: str, hand_no: int) -> None:
    queue.enqueue(settle_showdown, table_id, hand_no,
                  job_id=f"showdown-{table_id}-{hand_no}", result_ttl=3600)


def enqueue_owed_jobs(backend) -> int:
    """Re-enqueue every showdown owed for longer than ``owed_job_after``; how many."""
    store = EventStore(backend.redis)
    count = 0
    for table_id in store.table_ids():
        for job in store.owed_jobs(table_id, backend.config.owed_job_after):
            name, _, hand_no = job.partition(":")
            if name == SHOWDOWN_JOB:
                enqueue_showdown(backend.queue, table_id, int(hand_no))
                count += 1
    return count
