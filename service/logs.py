"""Structured logs: one JSON object a line, on stderr, and the request id they carry.

``cardroom serve`` calls ``configure`` in each API process: every record of the
``logging`` module becomes a line such as ``{"time", "level", "logger", "message",
"pid", "request_id", ...}``. The logger ``cardroom.access`` writes one line per request
(``log_request``: method, path, route, status, duration_ms, remote_addr, table_id), in
place of gunicorn's access log; it never logs a header or a query string, so neither a
token nor ``Authorization`` reaches a log. Any other record written while a request is
being answered (a store outage, say) carries that request's id.

The request id is the client's ``X-Request-Id`` when it is sane (1 to 128 characters
among letters, digits and ``-_.:+/=``), else 32 fresh random hex digits; every response echoes
it in ``X-Request-Id``, and every problem+json body in ``request_id``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from datetime import datetime, timezone
from functools import lru_cache

from flask import Request, has_request_context, request
from gunicorn import glogging

from service import jsonio

access_log = logging.getLogger("cardroom.access")

_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:+/=-]{1,128}")
_REQUEST_ID = "cardroom.request_id"  # where a request keeps its id, in its WSGI environ
_MADE_TABLE = "cardroom.made_table"  # the table a request made, in its WSGI environ


def request_id(asked: Request | None = None) -> str | None:
    """The id of the request being answered, ``asked`` or else the current one (made on
    first use and kept in its WSGI environ), or None outside one."""
    if asked is None:
        if not has_request_context():
            return None
        asked = request._get_current_object()
    environ = asked.environ
    if _REQUEST_ID not in environ:
        given = environ.get("HTTP_X_REQUEST_ID", "")
        environ[_REQUEST_ID] = (given if _SANE_REQUEST_ID.fullmatch(given)
                                else os.urandom(16).hex())
    return environ[_REQUEST_ID]


def made_table(table_id: str) -> None:
    """Name the table the current request made in its access line (its path has none)."""
    request.environ[_MADE_TABLE] = table_id


def log_request(asked: Request, route: str, status: int, seconds: float,
                request_id: str) -> None:
    """The access line of ``asked``, written for every request, so made as cheaply as it
    can be: where every handler it reaches is a ``json_handler`` (as under ``cardroom
    serve``), written to them without a log record; else as a record made directly (no
    ``findCaller``, no second look-up of the request id)."""
    if not access_log.isEnabledFor(logging.INFO):
        return
    method, path = asked.method, asked.path
    fields = {"method": method, "path": path, "route": route,
              "status": status, "duration_ms": round(seconds * 1000, 3),
              "remote_addr": asked.remote_addr,
              "table_id": (asked.view_args or {}).get("table_id",
                                                      asked.environ.get(_MADE_TABLE))}
    handlers = _json_handlers(access_log)
    if handlers is None:  # a handler of another kind (a test's capture, say)
        access_log.handle(access_log.makeRecord(
            access_log.name, logging.INFO, __file__, 0, "%s %s %s", (method, path, status),
            None, extra={"fields": fields, "request_id": request_id}))
        return
    text = json_line(time.time(), "INFO", access_log.name, f"{method} {path} {status}",
                     os.getpid(), request_id, fields)
    for handler in handlers:
        handler.write_line(text)


def _json_handlers(logger: logging.Logger) -> list[JsonLines] | None:
    """The handlers an INFO record of ``logger`` reaches, if each is a ``JsonLines`` that
    takes it as it is (no filter but the request id's, no level above INFO); else None."""
    if logger.filters:
        return None
    found = []
    while logger is not None:
        for handler in logger.handlers:
            if (type(handler) is not JsonLines or handler.level > logging.INFO
                    or len(handler.filters) != 1):
                return None
            found.append(handler)
        logger = logger.parent if logger.propagate else None
    return found


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON; ``extra={"fields": {...}}`` adds fields to it."""

    def format(self, record: logging.LogRecord) -> str:
        return json_line(record.created, record.levelname, record.name, record.getMessage(),
                         record.process, getattr(record, "request_id", None),
                         getattr(record, "fields", {}),
                         record.exc_info and self.formatException(record.exc_info))


def json_line(created: float, level: str, logger: str, message: str, pid: int | None,
              request_id: str | None, fields: dict, exception: str | None = None) -> str:
    line = {"time": _utc_time(created), "level": level, "logger": logger, "message": message,
            "pid": pid}
    if request_id:
        line["request_id"] = request_id
    line.update(fields)
    if exception:
        line["exception"] = exception
    # JSON leaves U+2028 and U+2029 raw, and str.splitlines() breaks a line at them
    text = jsonio.dumps(line, default=str)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _utc_time(timestamp: float) -> str:
    """As ``datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec=
    "milliseconds")`` (microseconds rounded as it does), the whole second made once:
    every access line asks."""
    second, fraction = divmod(timestamp, 1)
    micro = round(fraction * 1_000_000)
    if micro == 1_000_000:
        second, micro = second + 1, 0
    return f"{_utc_second(int(second))}.{micro // 1000:03d}+00:00"


@lru_cache(maxsize=2)
def _utc_second(second: int) -> str:
    return datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


class RequestIdFilter(logging.Filter):
    """Stamps every record written while a request is answered with its id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id()
        return True


class GunicornLogger(glogging.Logger):
    """gunicorn's own lines (workers started and stopped, requests it refuses before the
    app sees them) as JSON too, so that every line on stderr parses; its line of a refused
    request without the request's words (see ``warning``)."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            handler.setFormatter(JsonFormatter())

    def warning(self, msg, *args, **kwargs) -> None:
        """gunicorn's "Invalid request from ip=...: <error>" quotes the line it could not
        parse, which may be an ``Authorization`` header; its refusal's access line
        (``service.refusals``) says what was refused instead."""
        refused = _REFUSED.match(str(msg) % args if args else str(msg))
        if refused:
            msg, args = "Invalid request from ip=%s (its line is not logged)", (refused[1],)
        super().warning(msg, *args, **kwargs)

    def exception(self, msg, *args, **kwargs) -> None:
        """A client that went silent past ``CARDROOM_CLIENT_SILENCE`` (its socket's read or
        write failed with EAGAIN, ``service.refusals``) is a line of its own, not an error
        with a traceback: one a silent connection, which anyone can open."""
        if isinstance(sys.exc_info()[1], BlockingIOError):
            self.info("a client went silent mid-request; its connection is closed",
                      extra={"fields": {"remote_addr": getattr(serving, "peer", None)}})
            return
        super().exception(msg, *args, **kwargs)


serving = threading.local()  # ``peer``: the address of the connection this thread serves
_REFUSED = re.compile(r"Invalid request from ip=(\S*?): ")


class JsonLines(logging.StreamHandler):
    """``json_handler``'s: JSON lines on a stream, also given already made (an access
    line, which is written for every request, skips the making of a record)."""

    def write_line(self, text: str) -> None:
        with self.lock:
            try:
                self.stream.write(text + self.terminator)
                self.flush()
            except Exception:  # as emit does: a broken stream must not fail the request
                self.handleError(None)


def json_handler(stream=None) -> logging.Handler:
    handler = JsonLines(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    return handler


def configure(level: int = logging.INFO) -> None:
    """Send every log record of this process to stderr as JSON lines (once)."""
    logging.logThreads = logging.logMultiprocessing = False  # no line shows them
    root = logging.getLogger()
    if not any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        root.addHandler(json_handler())
    root.setLevel(level)
