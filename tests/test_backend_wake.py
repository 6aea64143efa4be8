"""The embedded worker thread sleeps until a job is enqueued: it does not poll the queue.

The sweep interval is stretched to an hour, so the thread's only way out of its sleep
within the test is the signal an enqueue gives. Every wait of the thread is recorded
with what it returned (True: signalled; False: its timeout ran out).
"""

from __future__ import annotations

import threading

import pytest

from service import backend as backend_module
from tests.test_infra import set_key, wait_for
from tests.test_testhooks import _a_hand_at_its_showdown

AN_HOUR = 3600.0


@pytest.fixture
def waits(fake_backend, monkeypatch):
    """The worker thread's waits on ``job_enqueued``: [timeout, result or None while asleep]."""
    monkeypatch.setattr(backend_module, "SWEEP_INTERVAL", AN_HOUR)
    recorded, real_wait = [], fake_backend.job_enqueued.wait

    def recording_wait(timeout=None):
        entry = [timeout, None]
        if threading.current_thread().name == "cardroom-worker":
            recorded.append(entry)
        entry[1] = real_wait(timeout)
        return entry[1]

    monkeypatch.setattr(fake_backend.job_enqueued, "wait", recording_wait)
    return recorded


def asleep(waits) -> bool:
    return bool(waits) and waits[-1][1] is None


def test_a_showdown_enqueued_by_the_app_wakes_the_sleeping_worker(client, fake_backend, waits):
    fake_backend.start_worker_thread()
    wait_for(lambda: asleep(waits), what="the worker thread to go to sleep")
    hand_path, admin = _a_hand_at_its_showdown(client)  # its last action enqueues the job
    wait_for(lambda: client.get(hand_path, headers=admin).get_json()["status"] == "ended",
             what="the worker thread to settle the showdown")
    first_timeout, first_result = waits[0]
    assert first_timeout > AN_HOUR / 2, "the thread slept for a poll interval, not until the sweep"
    assert first_result is True, "the thread woke from a timeout, not from the enqueue"
    assert all(result is not False for _, result in waits), waits  # no wait timed out


def test_any_enqueue_on_the_backend_queue_wakes_the_worker(fake_backend, waits):
    fake_backend.start_worker_thread()
    for n in range(3):
        wait_for(lambda: asleep(waits), what="the worker thread to go to sleep")
        fake_backend.queue.enqueue(set_key, f"k{n}", "done")
        wait_for(lambda: fake_backend.rq.get(f"k{n}") == b"done", what=f"job {n}")
    assert [result for _, result in waits[:3]] == [True, True, True], waits
    assert all(result is not False for _, result in waits), waits  # no wait timed out


def test_stopping_wakes_the_sleeping_worker(fake_backend, waits):
    thread = fake_backend.start_worker_thread()
    wait_for(lambda: asleep(waits), what="the worker thread to go to sleep")
    fake_backend.stop_worker_thread(timeout=20)
    assert not thread.is_alive(), "the worker thread slept through its stop"
    assert waits[-1][1] is True
