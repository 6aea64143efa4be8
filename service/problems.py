"""Errors as RFC 9457 problem details with a stable ``code``, mapped in one place."""

from __future__ import annotations

from flask import Flask, jsonify, request
from marshmallow import ValidationError
from redis.exceptions import ResponseError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, RequestEntityTooLarge

from domain.errors import DomainError
from service.backend import Outage, store_unavailable
from service.logs import request_id
from service.reads import NotFound, shown
from service.room import NotSeated, StaleVersion
from service.store import UnreadableRecord

# Domain refusals are 422 unless they are about who may act or about timing.
DOMAIN_STATUS = {"not_your_turn": 403, "not_in_hand": 403, "hand_in_progress": 409,
                 "hand_not_ended": 409,
                 "table_full": 409, "seat_changed": 409, "busy": 409, "table_exists": 409}
STORE_RETRY_AFTER = 5  # seconds, the Retry-After of a 503 store_unavailable


class StoreUnavailable(Exception):
    """The event store cannot be used right now (raised where a route checks it itself)."""


class ApiError(Exception):
    def __init__(self, status: int, code: str, detail: str,
                 headers: dict[str, str] | None = None, **extra):
        super().__init__(detail)
        self.status, self.code, self.detail, self.extra = status, code, detail, extra
        self.headers = headers or {}


_ACRONYMS = {"uri": "URI", "json": "JSON", "phh": "PHH", "id": "ID"}


def _title(code: str) -> str:
    """``uri_too_long``: "URI too long"."""
    words = [_ACRONYMS.get(word, word) for word in code.split("_")]
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def problem_body(status: int, code: str, detail: str, request_id: str | None,
                 **extra) -> dict:
    return {"type": f"/problems/{code}", "title": _title(code),
            "status": status, "detail": detail, "code": code, **extra,
            "request_id": request_id}


def problem(status: int, code: str, detail: str, **extra):
    response = jsonify(problem_body(status, code, detail, request_id(), **extra))
    response.status_code = status
    response.mimetype = "application/problem+json"
    return response


def answer(error: ApiError):
    """The problem response of ``error``, with its headers."""
    response = problem(error.status, error.code, error.detail, **error.extra)
    response.headers.update(error.headers)
    return response


def register(app: Flask) -> Outage:
    """The app's problem answers; the outage of the store they report, which ends once a
    request finds the store answering (``store_answers``) or a new connection does."""
    outage = Outage(app.logger, "answering 503 store_unavailable", remind_every=60.0)

    app.register_error_handler(ApiError, answer)

    @app.errorhandler(DomainError)
    def domain_error(error: DomainError):
        return problem(DOMAIN_STATUS.get(error.code, 422), error.code, error.message,
                       **error.extra)

    @app.errorhandler(NotFound)
    def not_found(error: NotFound):
        return problem(404, error.code, error.message)

    @app.errorhandler(NotSeated)
    def not_seated(error: NotSeated):
        return problem(403, "forbidden", str(error))

    @app.errorhandler(StaleVersion)
    def stale(error: StaleVersion):
        return problem(409, "version_conflict", f"the hand is at version {error.current}",
                       current_version=error.current)

    @app.errorhandler(ValidationError)
    def invalid(error: ValidationError):
        return problem(422, "invalid_request", "the request body is not valid",
                       errors=error.messages)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(error: RequestEntityTooLarge):
        limit = app.config["MAX_CONTENT_LENGTH"]
        return problem(413, "payload_too_large", f"the request body is larger than {limit} bytes",
                       max_body_bytes=limit)

    @app.errorhandler(MethodNotAllowed)
    def not_allowed(error: MethodNotAllowed):
        allowed = ", ".join(sorted(error.valid_methods or ()))
        response = problem(405, "method_not_allowed", f"{shown(request.method, 16)} is not "
                           f"allowed at {shown(request.path, 128)}, which takes {allowed}")
        response.headers["Allow"] = allowed
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        code = (error.name or "error").lower().replace(" ", "_")
        response = problem(error.code or 500, code, error.description or error.name)
        response.headers.extend((name, value) for name, value in error.get_headers()
                                if name.lower() != "content-type")  # such as a 405's Allow
        return response

    @app.errorhandler(UnreadableRecord)
    def unreadable(error: UnreadableRecord | ResponseError):
        """Something other than this service wrote the record: no traceback of ours."""
        app.logger.error("a stored record does not decode: %s", error)
        return problem(500, "stored_record_unreadable", "a stored record of this table does "
                       "not decode, or is no event the rules apply; the hand's audit names it, "
                       "unless it is the table's own")

    @app.after_request
    def store_answers(response):
        """A success of a route that reads the store ends an outage, logged once (not an
        OPTIONS, which Flask answers without the route)."""
        if (outage.is_down and response.status_code < 300 and request.method != "OPTIONS"
                and _reads_the_store(request.endpoint)):
            outage.up()
        return response

    @app.errorhandler(StoreUnavailable)
    def store_down(error: Exception):
        """503 with Retry-After: Redis is down, unreachable, loading, busy or read-only.
        Logged when it begins and once a minute while it lasts, not at every request, and
        once when a request finds it answering again (``store_answers``)."""
        outage.down(error)
        response = problem(503, "store_unavailable",
                           "the event store is unavailable; try again shortly")
        response.headers["Retry-After"] = str(STORE_RETRY_AFTER)
        return response

    @app.errorhandler(Exception)
    def unexpected(error: Exception):
        if store_unavailable(error):
            return store_down(error)
        if isinstance(error, ResponseError) and str(error).startswith("WRONGTYPE"):
            return unreadable(error)  # a key of another type than this service writes
        app.logger.exception("unhandled error")
        return problem(500, "internal_error", "an unexpected error occurred")
    return outage


def _reads_the_store(endpoint: str | None) -> bool:
    """Every route reads the store before it answers but the meta ones (the catalog, the
    API's description, the pages; ``/healthz`` does read it) and the static files."""
    if endpoint is None or endpoint == "static":
        return False
    return not endpoint.startswith("meta.") or endpoint == "meta.healthz"
