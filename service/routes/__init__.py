"""One blueprint per resource; each route reads the request and calls the service layer."""

from __future__ import annotations

import hashlib

from flask import current_app, request
from marshmallow import Schema

from domain.fairness import canonical_json
from service.problems import ApiError
from service.room import Cardroom, ClientKey


def room() -> Cardroom:
    return current_app.extensions["cardroom"]


def body(schema: Schema) -> dict:
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # nested deeper than the JSON parser goes
        data = None
    if data is None and request.get_data():
        raise ApiError(400, "malformed_json", "the body is not valid JSON")
    return schema.load(data if data is not None else {})


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
