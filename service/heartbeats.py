"""An RQ worker's heartbeats, renewed seldom. RQ renews a worker's key (three commands) at
every step of its loop, three times a job, though the key lives for minutes (``worker_ttl``
plus a minute): a renewal within ``HEARTBEAT_EVERY`` seconds of the last one is skipped. A
job's own heartbeat (with its timeout) is always sent."""

from __future__ import annotations

import time

HEARTBEAT_EVERY = 10.0  # seconds between a worker's renewals, at most (RQ's TTL: 480)


class SeldomRenewed:
    """For an RQ worker class: ``renewal_skipped(timeout)`` before each heartbeat."""

    _next_renewal = 0.0  # time.monotonic() before which a renewal is skipped

    def renewal_skipped(self, timeout: int | None) -> bool:
        if timeout is not None:  # a job's heartbeat, not a renewal
            return False
        if time.monotonic() < self._next_renewal:
            return True
        self._next_renewal = time.monotonic() + HEARTBEAT_EVERY
        return False
