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

So that one client sending a byte now and then cannot hold every thread, one peer address
(an IPv6 one by its /64) has at most ``CARDROOM_MAX_REQUESTS_PER_ADDRESS`` requests under
way at once in a process (16 by default, of 40 threads; an event stream is one as long as
it lasts, and a connection is one until it is closed). Past it a new one is answered 429
``too_many_requests_from_address`` at once, unread, and its connection closed. Three
addresses can still hold a process: facing the internet, a proxy that reads whole
requests belongs in front. The peer is a balancer's address behind one, so with
``CARDROOM_TRUSTED_PROXIES`` set there is no such bound: the proxy bounds its clients.

A connection that ends is closed by the thread that served it: gunicorn's own close waits
up to 2 s for the client to stop sending (so that the last of the answer is not lost to
a reset), and it waits on gunicorn's main thread, where a client that keeps sending would
hold every other connection of the process, and gunicorn's liveness check with them.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import struct
import threading
from collections import Counter

from gunicorn import util
from gunicorn.http import wsgi
from gunicorn.workers import gthread

from service import jsonio, live, logs, metrics
from service.addresses import client_address
from service.config import Config
from service.logs import access_log
from service.problems import problem_body


CLOSE_CONNECTION = "cardroom.close_connection"  # environ key: call it to close after the answer


def write_problem(sock, status: int, reason: str, detail: str, code: str | None = None,
                  extra_headers: str = "") -> None:
    """As gunicorn's ``util.write_error(sock, status_int, reason, mesg)``, in problem+json;
    ``code`` by default from the reason."""
    code = code or reason.lower().replace(" ", "_")
    request_id = os.urandom(16).hex()
    body = jsonio.dumps(problem_body(status, code, detail or reason, request_id)).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n"
            f"{extra_headers}X-Request-Id: {request_id}\r\n\r\n")
    metrics.count_unread(status)
    access_log.info("refused before the app: %s %s", status, reason,
                    extra={"fields": {"status": status, "code": code,
                                      "remote_addr": _peer(sock)},
                           "request_id": request_id})
    util.write_nonblock(sock, head.encode("latin-1") + body)


def _peer(sock) -> str | None:
    """The address the connection comes from (behind a proxy, the proxy's: the request
    that would name the client's was not read)."""
    try:
        return sock.getpeername()[0]
    except (OSError, IndexError, TypeError):  # gone, or not an IP socket
        return None


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGQUIT}


class ProblemThreadWorker(gthread.ThreadWorker):
    """gunicorn's ``gthread`` worker, its own refusals written by ``write_problem``, its
    connections ``SilenceBoundConnection``s."""

    arbiter_signals: queue.SimpleQueue | None = None  # set by ``post_fork``

    def init_process(self):
        util.write_error = write_problem  # the one place gunicorn writes its error pages
        config = Config.from_env()
        SilenceBoundConnection.silence = config.client_silence
        self.under_way = PerAddress(0 if config.trusted_proxies
                                    else config.max_requests_per_address)
        gthread.TConn = SilenceBoundConnection  # the one class its accept() makes them of
        wsgi.create = _closable(wsgi.create)  # the one place it makes a request's environ
        super().init_process()

    def handle(self, conn):
        """gunicorn's (in a request thread), within the bound of requests under way from
        the peer's address, and the connection closed here once it ends."""
        peer = conn.client[0] if isinstance(conn.client, tuple) else ""
        address = client_address(peer)
        logs.serving.peer = peer  # for a line gunicorn logs about this connection
        if not self.under_way.take(address):
            _refuse_busy(conn.sock, self.under_way.limit)
            return False
        try:
            kept = super().handle(conn)
            if kept is False:  # its close, up to 2 s, counts against the address too
                conn.close(graceful=True)
        finally:
            self.under_way.give_back(address)
        return kept

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
    def made(req, sock, *args, **kwargs):
        invited = req._expected_100_continue
        req._expected_100_continue = False  # gunicorn's, before the app has looked at it
        response, environ = create(req, sock, *args, **kwargs)
        environ[CLOSE_CONNECTION] = response.force_close
        if invited:
            environ["wsgi.input"] = _ContinueOnRead(environ["wsgi.input"], sock)
            response.force_close()  # a body never invited never comes: nothing to drain
        return response, environ
    return made


class _ContinueOnRead:
    """The body of a request whose client waits for ``100 Continue`` before it sends it
    (``Expect: 100-continue``): the interim answer goes out as the app first reads the
    body, so that a request refused unread (413, 429, 401, 415 ...) gets its answer at
    once and its body is never invited (RFC 9110, 10.1.1)."""

    def __init__(self, body, sock):
        self.body, self.sock = body, sock

    def _invite(self) -> None:
        if self.sock is not None:
            sock, self.sock = self.sock, None
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")

    def read(self, *args):
        self._invite()
        return self.body.read(*args)

    def readline(self, *args):
        self._invite()
        return self.body.readline(*args)

    def readlines(self, *args):
        self._invite()
        return self.body.readlines(*args)

    def __iter__(self):
        self._invite()
        return iter(self.body)


class PerAddress:
    """Requests under way in this process by address, at most ``limit`` each (0: no bound)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, address: str) -> bool:
        with self._lock:
            if self.limit and self._held[address] >= self.limit:
                return False
            self._held[address] += 1
            return True

    def give_back(self, address: str) -> None:
        with self._lock:
            self._held[address] -= 1
            if not self._held[address]:
                del self._held[address]


def _refuse_busy(sock, limit: int) -> None:
    """429 to a connection whose address is at its bound, before anything of it is read:
    what it sent already is taken first, so that closing does not reset the answer."""
    try:
        sock.setblocking(False)
        sock.recv(65536)
    except OSError:  # nothing to take now (EAGAIN), or the client has gone
        pass
    try:
        write_problem(sock, 429, "Too Many Requests",
                      f"this server process already serves {limit} requests from your "
                      "address; let one finish first", "too_many_requests_from_address",
                      "Retry-After: 1\r\n")
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


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

    def close(self, graceful=False):
        """Once: the thread that served the connection closes it (``handle``), and then
        gunicorn's main thread would again."""
        if self.sock.fileno() != -1:
            super().close(graceful)
