"""Hands: start one, read it as the caller may see it, act in it, and audit it."""

from __future__ import annotations

import re
from contextlib import suppress

from flask import Blueprint, current_app, request
from marshmallow import ValidationError

from domain.commands import Act
from domain.errors import DomainError
from domain.views import as_dealt
from service import live, schemas
from service.addresses import client_address
from service.auth import require
from service.problems import ApiError
from service.room import NotSeated, seats
from service.routes import (answered, body, client_key, invalid_query, query, room, takes_query,
                            takes_token)

hands = Blueprint("hands", __name__, url_prefix="/v1/tables/<table_id>/hands")


@hands.post("")
@takes_token
def start_hand(table_id: str):
    table = room().table(table_id)
    require(table.state, "admin")
    request = body(schemas.start_hand)
    return answered(room().start_hand(table_id, request["game"], client_key(request), table),
                    201)


@hands.get("/<int:hand_no>")
@takes_query
@takes_token
def read_hand(table_id: str, hand_no: int):
    cardroom = room()
    snapshot = cardroom.snapshot(table_id, hand_no)
    caller = require(snapshot.table.state, "admin", "auditor", "player", hand=_state(snapshot))
    at = query(schemas.hand_query)["at"]
    view = cardroom.hand_view(table_id, hand_no, caller, at, snapshot)
    return view, 200, {"ETag": f'"{view["version"]}"'}


@hands.post("/<int:hand_no>/actions")
@takes_token
def act(table_id: str, hand_no: int):
    snapshot, caller = _held_or_read(table_id, hand_no)
    try:
        action = body(schemas.action)
        expected = action["expected_version"]
        if expected is None and request.headers.get("If-Match"):
            expected = _version_from_etag(request.headers["If-Match"])
        command = Act(seat=caller.seat, type=action["type"], amount=action["amount"],
                      cards=tuple(action["cards"]))
        pinned = {**action, "expected_version": expected}  # by the body or If-Match alike
        return answered(room().act(table_id, hand_no, caller, command, expected,
                                   client_key(pinned), snapshot), 201)
    except (ApiError, ValidationError, NotSeated) as refused:
        # a player who has left is recognised only to be answered a retry: else 403
        if (snapshot.held or isinstance(refused, NotSeated)
                or not seats(snapshot.table.state, caller)):
            require(room().snapshot(table_id, hand_no).table.state, "player")  # 403 first
        raise


def _held_or_read(table_id: str, hand_no: int):
    """The table and hand as this process holds them, if it does and the token is a
    player's there (the move's append checks that neither has moved on), else as read now;
    and the caller: with an Idempotency-Key, also a player who has left since being dealt
    into the hand, to be answered a retry of their move (``Cardroom.act``)."""
    held = room().held(table_id, hand_no)
    if held is not None:
        with suppress(ApiError):
            return held, require(held.table.state, "player")
    snapshot = room().snapshot(table_id, hand_no)
    retry = "Idempotency-Key" in request.headers
    return snapshot, require(snapshot.table.state, "player",
                             hand=_state(snapshot) if retry else None)


@hands.get("/<int:hand_no>/events")
@takes_query
@takes_token
def events(table_id: str, hand_no: int):
    snapshot = room().snapshot(table_id, hand_no)
    caller = require(snapshot.table.state, "admin", "auditor", "player", hand=_state(snapshot))
    after = query(schemas.events_query)["after"]
    version = snapshot.the_hand().version
    if after > version:  # as the event stream refuses a Last-Event-ID past the hand's end
        raise invalid_query({"after": [f"hand {hand_no} has events 1 to {version}; after "
                                       f"must be 0 to {version}"]})
    return {"events": room().hand_events(table_id, hand_no, caller, after, snapshot)}


@hands.get("/<int:hand_no>/events/stream")
@takes_query
@takes_token
def event_stream(table_id: str, hand_no: int):
    snapshot = room().snapshot(table_id, hand_no)
    caller = require(snapshot.table.state, "admin", "auditor", "player", hand=_state(snapshot))
    given = query(schemas.stream_query)["last_event_id"]
    header = request.headers.get("Last-Event-ID")
    after = (_last_event_id(header, "the Last-Event-ID header") if header is not None
             else _last_event_id(given, "the query parameter last_event_id"))
    config = current_app.extensions["backend"].config
    return live.respond(room(), current_app.extensions["streams"], config.sse_heartbeat,
                        snapshot, caller, after, client_address(request.remote_addr),
                        request.environ.get("gunicorn.socket"))


@hands.get("/<int:hand_no>/history")
@takes_query
@takes_token
def history(table_id: str, hand_no: int):
    caller = require(room().table(table_id).state, "admin", "auditor", "player",
                     hand=_read_state(table_id, hand_no))
    if query(schemas.history_query)["format"] == "phh":
        return room().phh(table_id, hand_no, caller), 200, {
            "Content-Type": "application/toml; charset=utf-8"}
    if caller.role != "auditor" and room().hand(table_id, hand_no).state.status != "ended":
        raise DomainError("hand_not_ended", "the history is open to players once the hand ends")
    return room().history(table_id, hand_no, caller)


@hands.get("/<int:hand_no>/receipt")
@takes_token
def receipt(table_id: str, hand_no: int):
    hand = _read_state(table_id, hand_no)
    caller = require(room().table(table_id).state, "auditor", "player", hand=hand)
    if caller.role == "player" and as_dealt(caller, hand()).seat is None:
        raise ApiError(403, "forbidden", "receipts are for the seats dealt into the hand and "
                       "the auditor")
    return room().receipt(table_id, hand_no)


@hands.get("/<int:hand_no>/audit")
@takes_token
def audit(table_id: str, hand_no: int):
    snapshot = room().snapshot(table_id)  # not the hand: the audit reads it afresh
    require(snapshot.table.state, "auditor")
    return room().audit(table_id, hand_no, snapshot)


def _state(snapshot):
    """The hand's state, asked for only where a token is of a player who has left."""
    return lambda: snapshot.the_hand().state


def _read_state(table_id: str, hand_no: int):
    """As ``_state``, the hand read when asked for."""
    return lambda: room().hand(table_id, hand_no).state


def _last_event_id(value: str | None, named: str) -> int | None:
    if value is None:
        return None
    if not re.fullmatch(r"\s*[0-9]{1,15}\s*", value):
        raise ApiError(422, "invalid_last_event_id", f"{named} must be the version of an "
                       "event of the hand, a whole number")
    return int(value)


def _version_from_etag(value: str) -> int | None:
    """The version an ``If-Match`` names; None for ``*`` (any version: the move is not
    pinned, as without the header). Only the tag a read answers, as it was written: a
    weak tag (``W/"17"``) never matches under If-Match's strong comparison (RFC 9110), and
    ``"017"`` is another tag than ``"17"``."""
    if value.strip() == "*":
        return None
    match = re.fullmatch(r'\s*"(0|[1-9][0-9]{0,15})"\s*', value)
    if match is None:
        raise ApiError(422, "invalid_if_match", 'If-Match must be a version tag like "17", '
                       "as a read's ETag gives it")
    return int(match.group(1))
