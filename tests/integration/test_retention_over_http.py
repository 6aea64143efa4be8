"""Retention over real HTTP: ``cardroom serve`` and a ``cardroom worker`` on a real Redis,
both with ``CARDROOM_ARCHIVE_AFTER=1``; the worker's sweeper archives an ended hand, and
its reads over HTTP are the same bytes as before."""

from __future__ import annotations

import random
import time

from service.store import archive_key, hand_stream

from .client import create_table, play_hand
from .conftest import Server, worker_logs

DEADLINE = 60.0  # seconds to wait for the archive: generous, never a timing assertion


def test_a_worker_archives_an_ended_hand_and_its_reads_stay_the_same(
        integration_redis_url, redis_db, worker_process, tmp_path):
    server = Server(tmp_path / "serve.log", integration_redis_url, CARDROOM_ARCHIVE_AFTER="1")
    try:
        procs = worker_process(integration_redis_url, CARDROOM_ARCHIVE_AFTER="1")
        table = create_table(server.api, 3)
        hand_no = play_hand(table, random.Random(9), diagnostics=lambda: worker_logs(procs)).hand_no
        paths = [f"{table.hand_path(hand_no)}{suffix}" for suffix in
                 ("", "/events", "/history", "/history?format=phh", "/receipt", "/audit")]
        before = {path: server.api.get(path, token=table.auditor) for path in paths}
        assert all(r.status == 200 for r in before.values()), before
        assert before[paths[-1]].json["valid"]

        stream, archive = hand_stream(table.table_id, hand_no), archive_key(table.table_id, hand_no)
        deadline = time.monotonic() + DEADLINE
        while redis_db.exists(stream) or not redis_db.exists(archive):
            assert time.monotonic() < deadline, (
                f"hand {hand_no} not archived after {DEADLINE:.0f} s\n{worker_logs(procs)}")
            time.sleep(0.2)

        for path in paths:
            after = server.api.get(path, token=table.auditor)
            assert (after.status, after.raw) == (before[path].status, before[path].raw), path
        assert server.api.get(paths[-1], token=table.auditor).json["valid"]
    finally:
        server.stop()
