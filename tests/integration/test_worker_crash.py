"""A worker killed in the middle of a showdown job: the hand still ends, exactly once.

The first worker runs with ``CARDROOM_TEST_SHOWDOWN_PAUSE=30`` (the job sleeps before it
writes) and is SIGKILLed once it has taken the job. A second worker with
``CARDROOM_OWED_JOB_AFTER=1`` must find the owed showdown (its sweeper re-enqueues it)
and settle it; then running the job again appends nothing.
"""

from __future__ import annotations

import random
import signal
import time

from rq import Queue
from rq.job import Job, JobStatus

from service import jobs
from service.config import Config
from service.store import hand_stream, table_stream

from .client import choose_action, create_table
from .conftest import worker_logs

JOB_TIMEOUT = 30.0


def job_id(table_id: str, hand_no: int) -> str:
    return f"showdown-{table_id}-{hand_no}"


def wait_for(predicate, what: str, timeout: float, diagnostics=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} after {timeout:.0f} s\n{diagnostics()}")
        time.sleep(0.1)


def job_status(redis_db, jid: str):
    try:
        return Job.fetch(jid, connection=redis_db).get_status()
    except Exception:  # not there (yet)
        return None


def bring_to_showdown(table, rng) -> int:
    """Play a hand with nobody folding until it waits for its showdown."""
    hand_no = table.start_hand()
    for _ in range(200):
        view = table.hand(hand_no)
        if view["status"] not in ("betting", "drawing"):
            assert view["status"] == "showdown_pending", view
            return hand_no
        seat = view["to_act"]
        me = table.hand(hand_no, table.tokens[seat])
        move = choose_action(rng, me, seat, allow_fold=False)
        resp = table.act(hand_no, seat, {**move, "expected_version": me["version"]})
        assert resp.status == 201, resp
    raise AssertionError("no showdown after 200 moves")


def test_killed_worker_showdown_is_settled_once_by_another(api, store, redis_db, worker_process,
                                                           integration_redis_url):
    slow = worker_process(integration_redis_url, count=1, CARDROOM_TEST_SHOWDOWN_PAUSE="30")
    procs = list(slow)
    diagnostics = lambda: worker_logs(procs)  # noqa: E731
    table = create_table(api, 3, buy_in=1000)
    total = sum(table.stacks().values())
    hand_no = bring_to_showdown(table, random.Random(5))
    stream = hand_stream(table.table_id, hand_no)
    pending_version = store.version(stream)
    jid = job_id(table.table_id, hand_no)

    wait_for(lambda: job_status(redis_db, jid) == JobStatus.STARTED,
             "taken by the paused worker", 20, diagnostics)
    slow[0].send_signal(signal.SIGKILL)
    slow[0].wait(10)
    assert table.hand(hand_no)["status"] == "showdown_pending", "the paused job wrote anyway"
    assert store.version(stream) == pending_version
    assert store.owed_jobs(table.table_id, 0) == [f"showdown:{hand_no}"], (
        "the showdown should still be owed after its worker died")

    procs += worker_process(integration_redis_url, count=1, CARDROOM_OWED_JOB_AFTER="1")
    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "settled by the 2nd worker",
                            timeout=JOB_TIMEOUT, diagnostics=diagnostics)

    events = store.read(stream)
    types = [e.type for e in events]
    assert types.count("ShowdownEvaluated") == 1, types
    assert types.count("HandEnded") == 1, types
    assert types[-1] == "HandEnded", types
    assert types[:pending_version] == [e.type for e in events[:pending_version]]
    settled = [e for e in store.read(table_stream(table.table_id))
               if e.type == "HandSettled" and e.data["hand_no"] == hand_no]
    assert len(settled) == 1, f"{len(settled)} HandSettled for hand {hand_no}"
    stacks = table.stacks()
    assert sum(stacks.values()) == total, stacks
    assert {int(k): v for k, v in settled[0].data["stacks"].items()} == stacks
    assert final["version"] == len(events)
    assert store.owed_jobs(table.table_id, 0) == [], "the settled showdown is still owed"
    assert table.audit(hand_no)["valid"] is True

    # Let the sweeper run a few more times, then run the job again on purpose: nothing more.
    time.sleep(2.5)
    versions = (store.version(stream), store.version(table_stream(table.table_id)))
    assert versions == (len(events), store.version(table_stream(table.table_id)))
    queue = Queue(Config().queue_name, connection=redis_db)
    jobs.enqueue_showdown(queue, table.table_id, hand_no)
    wait_for(lambda: job_status(redis_db, jid) in (JobStatus.FINISHED, JobStatus.FAILED),
             "the repeated job finished", 20, diagnostics)
    job = Job.fetch(jid, connection=redis_db)
    assert job.get_status() == JobStatus.FINISHED, (job.get_status(), diagnostics())
    assert job.return_value() is False, "a second run of the job claims it settled the hand"
    assert (store.version(stream), store.version(table_stream(table.table_id))) == versions, (
        "the repeated showdown job appended events")
    assert sum(table.stacks().values()) == total
    assert all(p.poll() is None for p in procs[1:]), "the second worker died\n" + diagnostics()


def test_showdown_owed_without_any_enqueue_is_swept_and_settled(api, store, redis_db,
                                                                 worker_process,
                                                                 integration_redis_url):
    """The job is lost before any worker sees it (queue emptied): the sweeper finds it."""
    table = create_table(api, 2, buy_in=1000)
    hand_no = bring_to_showdown(table, random.Random(9))
    Queue(Config().queue_name, connection=redis_db).empty()  # drops the job with the queue
    assert job_status(redis_db, job_id(table.table_id, hand_no)) is None
    assert store.owed_jobs(table.table_id, 0) == [f"showdown:{hand_no}"]
    procs = worker_process(integration_redis_url, count=2, CARDROOM_OWED_JOB_AFTER="1")
    table.wait_hand(hand_no, lambda h: h["status"] == "ended", "settled after the sweep",
                    timeout=JOB_TIMEOUT, diagnostics=lambda: worker_logs(procs))
    types = [e.type for e in store.read(hand_stream(table.table_id, hand_no))]
    assert types.count("HandEnded") == 1 and types.count("ShowdownEvaluated") == 1, types
    settled = [e for e in store.read(table_stream(table.table_id)) if e.type == "HandSettled"]
    assert len(settled) == 1
    assert sum(table.stacks().values()) == 2000
