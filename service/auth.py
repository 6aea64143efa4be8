"""Bearer tokens: random, shown once, stored only as SHA-256 hashes in the table's events."""

from __future__ import annotations

import hmac
import re
from typing import Any, Callable

from flask import request

from domain.table import TableState
from domain.views import Viewer, as_dealt
from service.problems import ApiError
from service.reads import NotFound
from service.room import hash_token

_RECOGNISED = "cardroom.token_recognised"  # in the request's WSGI environ
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750's b64token


def viewer(table: TableState, hand: Callable[[], Any] | None = None,
           left: int | None = None) -> Viewer:
    """Who the request's token says the caller is, at this table. ``hand``: the state of
    the hand asked for (called only for the token of a player who has left the table, who
    still reads the hands they were dealt into, their receipts above all). ``left``: a seat
    whose former players are recognised too (to be answered a retry of their leave)."""
    environ = request.environ
    scheme, _, token = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <token>")
    if not _TOKEN68.fullmatch(token):  # two headers arrive joined by a comma
        raise ApiError(401, "unauthorized", "send one Authorization header, of one bearer "
                       "token (letters, digits and -._~+/ then any =)")
    digest = hash_token(token)
    caller = (_holder(digest, table) or (hand and _dealt_in_before_leaving(digest, table, hand))
              or (left is not None and _left(digest, table, left)) or None)
    environ[_RECOGNISED] = caller is not None  # (a held table may have known it, a read not)
    if caller is None:
        raise ApiError(403, "forbidden", "this token gives no access to this table")
    return caller


def recognised() -> bool:
    """Whether ``viewer`` found this request's bearer token at the table it names. A request
    whose token was not found (made up, of another table, or sent where no token is read)
    counts against its address too (``service.limits``)."""
    return request.environ.get(_RECOGNISED, False)


def _holder(digest: str, table: TableState) -> Viewer | None:
    if hmac.compare_digest(digest, table.admin_token_hash):
        return Viewer("admin")
    if hmac.compare_digest(digest, table.auditor_token_hash):
        return Viewer("auditor")
    for seat in table.seats:
        if hmac.compare_digest(digest, seat.token_hash):
            return Viewer("player", seat.seat, seat.player_id)
    return None


def _left(digest: str, table: TableState, seat: int) -> Viewer | None:
    for former in table.left:
        if former.seat == seat and hmac.compare_digest(digest, former.token_hash):
            return Viewer("player", former.seat, former.player_id)
    return None


def _dealt_in_before_leaving(digest: str, table: TableState, hand: Callable[[], Any],
                             ) -> Viewer | None:
    for seat in table.left:
        if hmac.compare_digest(digest, seat.token_hash):
            former = Viewer("player", seat.seat, seat.player_id)
            try:
                dealt_in = as_dealt(former, hand()).seat is not None
            except NotFound:  # told as any other hand they were not dealt into
                return None
            return former if dealt_in else None
    return None


def require(table: TableState, *roles: str, seat: int | None = None,
            hand: Callable[[], Any] | None = None, left: int | None = None) -> Viewer:
    """The caller, if their role is one of ``roles`` (a player only for ``seat``, if given).
    ``hand`` and ``left``: as ``viewer``'s."""
    caller = viewer(table, hand, left)
    if caller.role not in roles:
        raise ApiError(403, "forbidden", f"this needs the {' or '.join(roles)} token")
    if caller.role == "player" and seat is not None and caller.seat != seat:
        raise ApiError(403, "not_your_seat", f"this token is for seat {caller.seat}, not {seat}")
    return caller
