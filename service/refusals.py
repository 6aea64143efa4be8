"""Requests that gunicorn refuses before the app sees them, answered as problem+json.

A request line or header over gunicorn's limits (414, 431), a malformed request line or
header, a folded header, a body both chunked and sized (400): gunicorn answers these
itself, by default with an HTML page. ``cardroom serve``'s worker class answers them as
the app answers any bad request: ``application/problem+json`` with a stable ``code``
(gunicorn's reason, as Werkzeug's names become codes: ``request_header_fields_too_large``)
and a ``request_id`` equal to the ``X-Request-Id`` header, logged on the access line and
counted in the metrics (``metrics.count_unread``).

A client that goes silent in the middle of its request (its line, headers or body) for
``CARDROOM_CLIENT_SILENCE`` seconds (30 by default), or takes nothing of its answer for
as long, is disconnected (a line in the log, not an error: ``logs.GunicornLogger``):
gunicorn would hold a thread for it for ever. A body cut off so is answered 408
(``routes.read_body``). A client that sends a byte now and then is not caught by this:
behind a buffering proxy (``docs/scaling.md``) none reaches a thread.

After a body cut off or cut short, whatever the connection brings next is not a request:
the answer says ``Connection: close`` and the connection is closed (``CLOSE_CONNECTION``
in the environ; gunicorn ignores an app's own ``Connection`` header).
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import struct

from gunicorn import util
from gunicorn.http import wsgi
from gunicorn.workers import gthread

from service import jsonio, live, metrics
from service.config import Config
from service.logs import access_log
from service.problems import problem_body


CLOSE_CONNECTION = "cardroom.close_connection"  # environ key: call it to close after the answer


def write_problem(sock, status: int, reason: str, detail: str) -> None:
    """As gunicorn's ``util.write_error(sock, status_int, reason, mesg)``, in problem+json."""
    code = reason.lower().replace(" ", "_")
    request_id = os.urandom(16).hex()
    body = jsonio.dumps(problem_body(status, code, detail or reason, request_id)).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n"
            f"X-Request-Id: {request_id}\r\n\r\n")
    metrics.count_unread(status)
    access_log.info("refused before the app: %s %s", status, reason,
                    extra={"fields": {"status": status, "code": code},
                           "request_id": request_id})
    util.write_nonblock(sock, head.encode("latin-1") + body)


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGQUIT}


class ProblemThreadWorker(gthread.ThreadWorker):
    """gunicorn's ``gthread`` worker, its own refusals written by ``write_problem``, its
    connections ``SilenceBoundConnection``s."""

    arbiter_signals: queue.SimpleQueue | None = None  # set by ``post_fork``

    def init_process(self):
        util.write_error = write_problem  # the one place gunicorn writes its error pages
        SilenceBoundConnection.silence = Config.from_env().client_silence
        gthread.TConn = SilenceBoundConnection  # the one class its accept() makes them of
        wsgi.create = _closable(wsgi.create)  # the one place it makes a request's environ
        super().init_process()

    def init_signals(self):
        """gunicorn's, then any stop signal that reached this process between its fork and
        now sent again, to its own handlers. Until here it had the arbiter's handlers, which
        only queued the signal (in this process's copy of the arbiter's queue), so a worker
        stopped as it booted served on, and its arbiter waited out its graceful timeout
        before it killed it."""
        super().init_signals()
        caught = set()
        while self.arbiter_signals is not None and not self.arbiter_signals.empty():
            caught.add(self.arbiter_signals.get_nowait())
        for sig in sorted(caught & _STOP_SIGNALS):
            os.kill(os.getpid(), sig)

    def handle_exit(self, sig, frame):
        """SIGTERM: gunicorn lets the requests under way finish, for up to its graceful
        timeout; the event streams, which last as long as their hands, end within a
        ``live.CLIENT_CHECK`` (their clients resume with Last-Event-ID)."""
        live.STOPPING.set()
        super().handle_exit(sig, frame)

    def handle_quit(self, sig, frame):
        """SIGINT (Ctrl-C) and SIGQUIT (gunicorn's to its workers on SIGINT): gunicorn exits
        the main thread at once, but the interpreter still waits for the request threads;
        the event streams end as on SIGTERM, rather than holding the process until gunicorn
        kills it at its graceful timeout."""
        live.STOPPING.set()
        super().handle_quit(sig, frame)


def post_fork(arbiter, worker) -> None:
    """gunicorn's hook, in a worker just forked: the queue its arbiter's signal handlers,
    which it keeps until its ``init_signals``, put what they catch in."""
    worker.arbiter_signals = arbiter.SIG_QUEUE


def _closable(create):
    def made(*args, **kwargs):
        response, environ = create(*args, **kwargs)
        environ[CLOSE_CONNECTION] = response.force_close
        return response, environ
    return made


class SilenceBoundConnection(gthread.TConn):
    """gunicorn's connection, each read and write of its socket bounded by the kernel to
    ``silence`` seconds (``SO_RCVTIMEO``, ``SO_SNDTIMEO``: past it, the call fails with
    EAGAIN). Not Python's socket timeout, which would poll before every read and write."""

    silence = 30.0

    def __init__(self, *args):
        super().__init__(*args)
        micro = max(1, round(self.silence * 1_000_000))  # a zero timeval would be no bound
        bound = struct.pack("ll", *divmod(micro, 1_000_000))  # a timeval
        for option in (socket.SO_RCVTIMEO, socket.SO_SNDTIMEO):
            self.sock.setsockopt(socket.SOL_SOCKET, option, bound)
