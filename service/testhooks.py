"""Fault injection FOR TESTS ONLY: the one place where production code may pause on a test's
request. Nothing here is configuration; deployments never set these variables.

Each hook reads its environment variable once, when this module is imported. With the
variable unset (always, in production) the hook does nothing at all.

``CARDROOM_TEST_SHOWDOWN_PAUSE=<seconds>``: ``before_showdown()`` holds the showdown job
that long before it writes, so a test can kill the worker in the middle of a job
(tests/integration/test_worker_crash.py).
"""

from __future__ import annotations

import os
import time

SHOWDOWN_PAUSE = float(os.environ.get("CARDROOM_TEST_SHOWDOWN_PAUSE") or 0)


def before_showdown() -> None:
    """Tests only: wait ``CARDROOM_TEST_SHOWDOWN_PAUSE`` seconds; a no-op when it is unset."""
    if SHOWDOWN_PAUSE > 0:
        time.sleep(SHOWDOWN_PAUSE)
