"""Live events: a hand followed as Server-Sent Events (``GET .../events/stream``).

A stream opens with the hand as the caller may see it (``event: snapshot``), sends each
new event with the hand just after it (``event: event``), and closes after ``event:
end``; every message's ``id`` is its version, so a client that reconnects with
``Last-Event-ID`` gets exactly the events after it (and no snapshot). It waits on a
blocking ``XREAD`` (``EventStore.wait``), never polls, and sends a ``: heartbeat``
comment after ``Config.sse_heartbeat`` seconds of silence. Each stream holds a server
thread, so a process serves at most ``Config.max_streams`` at once (``cardroom serve``
adds that many threads); past it a client gets 503 ``too_many_streams`` at once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Iterator

from flask import Response

from domain.views import Viewer
from service import metrics
from service.backend import READ_TIMEOUT, store_unavailable
from service.problems import problem
from service.reads import Reads, Snapshot
from service.store import Envelope, EventStore

log = logging.getLogger(__name__)

RETRY_AFTER = 5  # seconds, the Retry-After of a 503 too_many_streams
# A blocking read must come back before the Redis client's socket timeout.
LONGEST_WAIT = READ_TIMEOUT - 1.0


class StreamSlots:
    """How many more streams this process may open (and the gauge of those open)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit) if limit else None

    def take(self) -> bool:
        taken = self._free is not None and self._free.acquire(blocking=False)
        if taken:
            metrics.SSE_STREAMS_OPEN.inc()
        return taken

    def give_back(self) -> None:
        self._free.release()
        metrics.SSE_STREAMS_OPEN.dec()


def respond(reads: Reads, slots: StreamSlots, heartbeat: float, snapshot: Snapshot,
            viewer: Viewer, after: int | None) -> Response:
    """The stream's response, or 503 ``too_many_streams`` when every slot is taken. A bad
    ``after`` or hand is refused (``Reads.follow`` checks them) before a slot is taken."""
    paced = Paced(reads.store, heartbeat)
    followed = reads.follow(snapshot, viewer, after, paced.wait)
    if not slots.take():
        refused = problem(503, "too_many_streams", f"this server already streams to "
                          f"{slots.limit} clients; try again shortly", max_streams=slots.limit)
        refused.headers["Retry-After"] = str(RETRY_AFTER)
        return refused
    response = Response(paced.messages(followed), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    response.call_on_close(slots.give_back)
    return response


class Paced:
    """A stream's text, with a heartbeat comment after ``heartbeat`` seconds of silence:
    each wait for new events lasts until the next heartbeat is due."""

    def __init__(self, store: EventStore, heartbeat: float, clock=time.monotonic):
        self.store, self.heartbeat, self.clock = store, heartbeat, clock
        self.quiet_since = clock()

    def wait(self, stream: str, version: int) -> list[Envelope]:
        due = self.quiet_since + self.heartbeat - self.clock()
        return self.store.wait(stream, version, min(max(due, 0.001), LONGEST_WAIT))

    def messages(self, followed: Iterator[tuple[str, int, Any]]) -> Iterator[str]:
        """It opens with a comment, so the client has the response's headers at once. A
        store that fails mid-stream closes it: the client resumes with Last-Event-ID."""
        yield ": open\n\n"
        self.quiet_since = self.clock()
        try:
            for kind, version, data in followed:
                if kind == "idle" and self.clock() - self.quiet_since < self.heartbeat:
                    continue
                yield (": heartbeat\n\n" if kind == "idle" else
                       f"id: {version}\nevent: {kind}\ndata: {json.dumps(data)}\n\n")
                self.quiet_since = self.clock()
        except Exception as error:
            if not store_unavailable(error):
                raise
            log.warning("an event stream closed: the event store is unavailable (%s)", error)
