"""One blueprint per resource; each route reads the request and calls the service layer."""

from __future__ import annotations

import functools
import hashlib

from flask import current_app, request
from marshmallow import Schema
from werkzeug.exceptions import RequestEntityTooLarge

from domain.fairness import canonical_json
from service.problems import ApiError
from service.room import Cardroom, ClientKey


def room() -> Cardroom:
    return current_app.extensions["cardroom"]


def refuse_large_body() -> None:
    """Before every route: a body over ``MAX_CONTENT_LENGTH`` (``Config.max_body_bytes``)
    gets 413 before the route reads the store or parses it. A Content-Length over it is
    refused unread. A chunked body is read here, at most one byte past the limit (Werkzeug
    would cut it at the limit without a word), and kept for ``body()``."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if limit is None:
        return
    if request.content_length is not None:
        if request.content_length > limit:
            raise RequestEntityTooLarge()
    elif "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        request.max_content_length = limit + 1
        if len(request.get_data()) > limit:
            raise RequestEntityTooLarge()


def body(schema: Schema) -> dict:
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # nested deeper than the JSON parser goes
        data = None
    if data is None and request.get_data():
        raise ApiError(400, "malformed_json", "the body is not valid JSON")
    return schema.load(data if data is not None else {})


def params(schema: Schema) -> dict:
    """The request's query parameters, validated; without any, the schema's defaults
    (loaded once: most requests have none, and a load is not free)."""
    return schema.load(request.args) if request.args else dict(_defaults(schema))


@functools.cache
def _defaults(schema: Schema) -> dict:
    return schema.load({})


def client_key(payload: dict | None = None) -> ClientKey | None:
    """The request's Idempotency-Key, bound to a fingerprint of the request (method, path
    and validated body), so that the same key with another request can be refused."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= 200:
        raise ApiError(422, "invalid_idempotency_key", "Idempotency-Key must be 1 to 200 characters")
    request_text = f"{request.method} {request.path}\n{canonical_json(payload or {})}"
    return ClientKey(key, hashlib.sha256(request_text.encode()).hexdigest())
