"""A hand brought to its showdown is handed to the job that settles it (``service.handover``):
the job replays nothing it was handed, settles as one that replays everything, reads on
where a stream moved on, and takes nothing it cannot open. On the embedded fakeredis."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import zlib

import pytest
from rq import SimpleWorker

from benchmarks.audit import SCRIPT
from benchmarks.audit import to_the_showdown as tables_at_the_showdown
from service import handover
from service.app import create_app
from service.backend import Backend
from service.config import Config
from service.keys import new_key_pair
from service.room import Cardroom
from service.store import EventStore, hand_stream
from tests.conftest import make_table
from tests.processes import ROOT
from tests.test_api import play_to_showdown


@pytest.fixture
def store(fake_backend):
    return fake_backend.redis


@pytest.fixture
def keys():
    return Config(**dict(zip(("secret_key", "signing_key"), new_key_pair()))).keys()


def room_on(redis, keys) -> Cardroom:
    """A process's Cardroom: its own replay cache, no job queue."""
    return Cardroom(EventStore(redis, keys), keys, None)


def replays(room: Cardroom, table_id: str) -> list[str]:
    """The types of the events of hand 1 that ``room`` reads (to replay them) from now on."""
    seen, read_on, stream = [], room.store.read_on, hand_stream(table_id, 1)

    def counted(heads):
        read = read_on(heads)
        seen.extend(envelope.type for (name, *_), (_, envelopes) in zip(heads, read)
                    for envelope in envelopes if name == stream)
        return read
    room.store.read_on = counted
    return seen


def settled_as_replayed(redis, keys, table_id: str, worker: Cardroom) -> None:
    """The hand has ended, its audit passes, and a process that replays it anew holds what
    the worker holds."""
    fresh = room_on(redis, keys)
    assert fresh.hand(table_id, 1).state.status == "ended"
    assert fresh.audit(table_id, 1)["valid"]
    assert worker.hand(table_id, 1).state == fresh.hand(table_id, 1).state
    assert worker.table(table_id).state == fresh.table(table_id).state


def test_a_handed_over_hand_is_settled_without_replaying_it(store, keys):
    api, worker = room_on(store, keys), room_on(store, keys)
    (table_id,) = tables_at_the_showdown(api, 1)
    assert handover.take_over(worker, table_id, 1, handover.hand_over(api, table_id, 1))
    replayed = replays(worker, table_id)
    assert worker.settle_showdown(table_id, 1)
    assert replayed == []
    settled_as_replayed(store, keys, table_id, worker)


def test_a_hand_not_handed_over_is_replayed_and_settles_the_same(store, keys):
    api, worker = room_on(store, keys), room_on(store, keys)
    (table_id,) = tables_at_the_showdown(api, 1)
    replayed = replays(worker, table_id)
    assert worker.settle_showdown(table_id, 1)
    assert replayed[0] == "HandStarted" and len(replayed) > len(SCRIPT)
    settled_as_replayed(store, keys, table_id, worker)


def test_a_hand_settled_since_its_hand_over_is_read_on_from_it_and_settled_once(store, keys):
    api, worker = room_on(store, keys), room_on(store, keys)
    (table_id,) = tables_at_the_showdown(api, 1)
    sealed = handover.hand_over(api, table_id, 1)
    assert room_on(store, keys).settle_showdown(table_id, 1)  # another worker, first
    assert handover.take_over(worker, table_id, 1, sealed)
    replayed = replays(worker, table_id)
    assert not worker.settle_showdown(table_id, 1)
    assert replayed and "HandEnded" in replayed and "HandStarted" not in replayed
    settled_as_replayed(store, keys, table_id, worker)


def test_what_the_worker_holds_later_is_not_replaced_by_an_older_hand_over(store, keys):
    api, worker = room_on(store, keys), room_on(store, keys)
    (table_id,) = tables_at_the_showdown(api, 1)
    sealed = handover.hand_over(api, table_id, 1)
    assert worker.settle_showdown(table_id, 1)  # the worker read it and settled it already
    held = worker.cache.base(hand_stream(table_id, 1))
    assert handover.take_over(worker, table_id, 1, sealed)
    assert worker.cache.base(hand_stream(table_id, 1)) is held
    assert not worker.settle_showdown(table_id, 1)  # settled once


@pytest.mark.parametrize("spoiled", ["another key", "another hand", "a byte changed",
                                     "other rules", "truncated"])
def test_a_hand_over_that_does_not_open_is_ignored_and_the_hand_replayed(store, keys, spoiled,
                                                                        monkeypatch):
    api, worker = room_on(store, keys), room_on(store, keys)
    (table_id,) = tables_at_the_showdown(api, 1)
    sealed, hand_no = handover.hand_over(api, table_id, 1), 1
    if spoiled == "another key":
        api.keys = Config(**dict(zip(("secret_key", "signing_key"), new_key_pair()))).keys()
        sealed = handover.hand_over(api, table_id, 1)
    elif spoiled == "another hand":
        hand_no = 2
    elif spoiled == "a byte changed":
        sealed = sealed[:40] + bytes([sealed[40] ^ 1]) + sealed[41:]
    elif spoiled == "other rules":
        monkeypatch.setattr(handover, "_rules", lambda: "0" * 64)
    else:
        sealed = sealed[:8]
    assert not handover.take_over(worker, table_id, hand_no, sealed)
    assert worker.cache.base(hand_stream(table_id, 1)).version == 0
    assert worker.settle_showdown(table_id, 1)
    settled_as_replayed(store, keys, table_id, worker)


def test_the_api_enqueues_the_hand_sealed_and_its_worker_settles_it(redis_url):
    """Not embedded (a real Redis, its jobs run by an RQ worker): the job carries the hand,
    and the job queue's Redis holds none of its state in the clear."""
    backend = Backend.from_config(Config(redis_url=redis_url))
    backend.redis.flushdb()
    app = create_app(backend=backend)
    table_id = _table_at_the_showdown(app.test_client())
    room = app.extensions["cardroom"]
    (job,) = backend.queue.get_jobs()
    held = job.args[2]
    assert isinstance(held, bytes)
    plain = pickle.dumps(room.cache.base(hand_stream(table_id, 1)).state,
                         pickle.HIGHEST_PROTOCOL)
    stored = zlib.decompress(backend.rq.hget(job.key, "data"))
    assert not any(plain[i:i + 32] in stored for i in range(0, len(plain) - 32, 8))
    SimpleWorker([backend.queue], connection=backend.rq).work(burst=True)
    assert room_on(backend.redis, room.keys).hand(table_id, 1).state.status == "ended"
    backend.redis.close()


def test_an_embedded_app_hands_nothing_over_its_job_thread_shares_its_cache(fake_backend):
    app = create_app(backend=fake_backend)
    _table_at_the_showdown(app.test_client())
    (job,) = fake_backend.queue.get_jobs()
    assert job.args[2] is None


def _table_at_the_showdown(client) -> str:
    table = make_table(client)
    assert client.post(f"/v1/tables/{table['id']}/hands",
                       headers=table["admin"]).status_code == 201
    play_to_showdown(client, table, 1)
    return table["id"]


def test_a_hand_over_is_bound_to_the_rules_its_process_loaded_not_to_later_files(tmp_path):
    """Files replaced in place (an upgrade) while a process runs, before its first hand over:
    its states, pickled by the rules it loaded, are not bound to the new ones, which a
    process started since holds."""
    for package in ("domain", "service"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    events = tmp_path / "domain" / "events.py"
    script = ("import pathlib, sys\n"
              "from service import handover\n"
              "if sys.argv[1] == 'upgrade':\n"
              f"    path = pathlib.Path({str(events)!r})\n"
              "    path.write_text(path.read_text() + '# upgraded\\n')\n"
              "print(handover._context('t', 1))\n")

    def context(*args: str) -> str:
        return subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, check=True,
                              env={**os.environ, "PYTHONPATH": str(tmp_path)},
                              capture_output=True, text=True).stdout
    old = context("upgrade")  # loaded the old rules, then the files changed
    assert context("") != old  # a process started since, with the new rules
