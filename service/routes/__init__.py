"""One blueprint per resource; each route reads the request and calls the service layer."""

from __future__ import annotations

from flask import current_app, request
from marshmallow import Schema

from service.problems import ApiError
from service.room import Cardroom


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


def idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= 200:
        raise ApiError(422, "invalid_idempotency_key", "Idempotency-Key must be 1 to 200 characters")
    return key
