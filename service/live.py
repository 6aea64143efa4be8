"""Live events: a hand followed as Server-Sent Events (``GET .../events/stream``).

A stream opens with the hand as the caller may see it (``event: snapshot``), sends each
new event with the hand just after it (``event: event``), and closes after ``event:
end``; every message's ``id`` is its version, so a client that reconnects with
``Last-Event-ID`` gets exactly the events after it (and no snapshot). It waits on a
blocking ``XREAD`` (``EventStore.wait``), never polls, and sends a ``: heartbeat``
comment after ``Config.sse_heartbeat`` seconds of silence. Under gunicorn it also looks
every ``CLIENT_CHECK`` seconds whether the client has closed its connection, and ends then,
rather than at its next write (a heartbeat away); and as its process begins to stop
(``STOPPING``, set on gunicorn's SIGTERM, SIGINT or SIGQUIT), so that the process stops
within a second, not at gunicorn's graceful timeout (30 s, past ``docker stop``'s 10).
Each stream holds a server thread, so a process serves at most ``Config.max_streams`` at
once (``cardroom serve`` adds that many threads); past it a client gets 503
``too_many_streams`` at once. So that one client cannot hold them all, an address holds at most
``Config.max_streams_per_address`` of a process's streams; past that it gets 429
``too_many_streams_from_address``.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections import Counter
from typing import Any, Callable, Iterator

from flask import Response

from domain.views import Viewer
from service import metrics
from service.backend import READ_TIMEOUT, store_unavailable
from service.problems import ApiError
from service.reads import Reads, Snapshot
from service.store import Envelope, EventStore, UnreadableRecord

log = logging.getLogger(__name__)

RETRY_AFTER = 5  # seconds, the Retry-After of a refused stream
# A blocking read must come back before the Redis client's socket timeout.
LONGEST_WAIT = READ_TIMEOUT - 1.0
CLIENT_CHECK = 1.0  # seconds between looks at whether a stream's client has gone
# Set as this process begins to stop: its streams end (their clients resume elsewhere).
STOPPING = threading.Event()


class StreamSlots:
    """The streams this process holds, at most ``limit`` in all and ``per_address`` for
    each client address (0: no bound of its own), and the gauge of those open."""

    def __init__(self, limit: int, per_address: int = 0):
        self.limit, self.per_address = limit, per_address
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, address: str) -> None:
        """A slot for a stream to ``address``; ApiError (503 or 429) if none is left."""
        retry = {"Retry-After": str(RETRY_AFTER)}
        with self._lock:
            if sum(self._held.values()) >= self.limit:
                raise ApiError(503, "too_many_streams", f"this server already streams to "
                               f"{self.limit} clients; try again shortly", retry,
                               max_streams=self.limit)
            if self.per_address and self._held[address] >= self.per_address:
                raise ApiError(429, "too_many_streams_from_address", "this server process "
                               f"already streams to your address {self.per_address} times; "
                               "close one first", retry, max_streams_per_address=self.per_address)
            self._held[address] += 1
        metrics.SSE_STREAMS_OPEN.inc()

    def give_back(self, address: str) -> None:
        with self._lock:
            self._held -= Counter({address: 1})
        metrics.SSE_STREAMS_OPEN.dec()


def respond(reads: Reads, slots: StreamSlots, heartbeat: float, snapshot: Snapshot,
            viewer: Viewer, after: int | None, address: str,
            client: socket.socket | None = None) -> Response:
    """The stream's response; ApiError when the process or ``address`` holds its bound
    of streams. A bad ``after`` or hand is refused (``Reads.follow`` checks them)
    before a slot is taken. ``client``: the connection's socket, when the server gives it."""
    paced = Paced(reads.store, heartbeat, client_gone=_gone(client) if client else None)
    followed = reads.follow(snapshot, viewer, after, paced.wait)
    slots.take(address)
    response = Response(paced.messages(followed), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    response.call_on_close(lambda: slots.give_back(address))
    return response


class Paced:
    """A stream's text, with a heartbeat comment after ``heartbeat`` seconds of silence:
    each wait for new events lasts until the next heartbeat is due."""

    def __init__(self, store: EventStore, heartbeat: float, clock=time.monotonic,
                 client_gone: Callable[[], bool] | None = None):
        self.store, self.heartbeat, self.clock = store, heartbeat, clock
        self.client_gone = client_gone
        self.quiet_since = clock()

    def wait(self, stream: str, version: int) -> list[Envelope]:
        due = self.quiet_since + self.heartbeat - self.clock()
        longest = CLIENT_CHECK if self.client_gone else LONGEST_WAIT
        return self.store.wait(stream, version, min(max(due, 0.001), longest))

    def messages(self, followed: Iterator[tuple[str, int, Any]]) -> Iterator[str]:
        """It opens with a comment, so the client has the response's headers at once. A
        store that fails mid-stream closes it: the client resumes with Last-Event-ID."""
        yield ": open\n\n"
        self.quiet_since = self.clock()
        try:
            for kind, version, data in followed:
                if kind == "idle" and (STOPPING.is_set()
                                       or self.client_gone and self.client_gone()):
                    return
                if kind == "idle" and self.clock() - self.quiet_since < self.heartbeat:
                    continue
                yield (": heartbeat\n\n" if kind == "idle" else
                       f"id: {version}\nevent: {kind}\ndata: {json.dumps(data)}\n\n")
                self.quiet_since = self.clock()
        except UnreadableRecord as error:  # its headers are sent: the stream can only end
            log.error("an event stream closed: a stored record does not decode: %s", error)
        except Exception as error:
            if not store_unavailable(error):
                raise
            log.warning("an event stream closed: the event store is unavailable (%s)", error)


def _gone(client: socket.socket) -> Callable[[], bool]:
    """Whether the client has closed ``client`` (a peek finds its end) or reset it. Where
    a peek cannot tell (a TLS socket refuses one), the next heartbeat's write will."""
    def gone() -> bool:
        try:
            return client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, ValueError):  # nothing to read: still there; or no peek
            return False
        except OSError:
            return True
    return gone
