"""``cardroom worker``: a real RQ worker process on ``REDIS_URL``.

It listens on the cardroom queue in the main thread and runs each job in
process (``SimpleWorker``: no fork, so SIGKILL leaves no orphaned job
process behind). A daemon sweeper thread calls ``enqueue_owed_jobs`` about
once a second. SIGTERM or SIGINT stops it after the current job (a second
one stops it at once).
"""

from __future__ import annotations

import logging
import threading
import time

from rq import SimpleWorker

from service.backend import SWEEP_INTERVAL, Backend
from service.config import Config


class _Worker(SimpleWorker):
    """Remembers whether a signal stopped it (else Redis was lost: exit 1)."""

    stopped_by_signal = False

    def request_stop(self, signum, frame):
        self.stopped_by_signal = True
        super().request_stop(signum, frame)


def _sweep_forever(backend: Backend) -> None:
    while True:
        backend.sweep()
        time.sleep(SWEEP_INTERVAL)


def run_worker(config: Config) -> int:
    """Work the queue until stopped; 0 after SIGTERM/SIGINT, 1 if RQ gave up."""
    if not config.redis_url:
        raise SystemExit(
            "cardroom worker needs REDIS_URL (e.g. redis://127.0.0.1:6379/0); "
            "without it, `cardroom serve` runs jobs in an embedded worker thread"
        )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    backend = Backend.from_config(config)
    threading.Thread(
        target=_sweep_forever, args=(backend,), name="cardroom-sweeper", daemon=True
    ).start()
    worker = _Worker([backend.queue], connection=backend.redis)
    worker.work(logging_level="INFO")
    return 0 if worker.stopped_by_signal else 1
