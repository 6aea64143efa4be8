"""One blueprint per resource; each route reads the request and calls the service layer."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Any
from urllib.parse import quote

from flask import Request, current_app, redirect, request
from gunicorn.http.errors import NoMoreData, ParseException
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import (ClientDisconnected, MethodNotAllowed, NotFound,
                                 RequestEntityTooLarge)
from werkzeug.routing import IntegerConverter, RequestRedirect
from werkzeug.wsgi import get_path_info

from domain.fairness import canonical_json
from service import jsonio
from service.problems import ApiError
from service.refusals import CLOSE_CONNECTION
from service.reads import shown
from service.room import Cardroom, ClientKey, Replayed


def room() -> Cardroom:
    return current_app.extensions["cardroom"]


class Number(IntegerConverter):
    """Flask's ``<int:...>`` in path segments, written as a number is written everywhere
    else in the API: the digits 0-9 without leading zeros (Werkzeug's also takes
    ``01`` and other scripts' digits, such as ``\uff11``, for 1), 16 at most. A path
    otherwise written names no route: 404."""

    regex = r"(?:0|[1-9][0-9]{0,15})"


def check_request(asked: Request, body_limit: int | None):
    """Before every route: the request's path, body and query, each checked as the function
    of its name says (``asked``: the request, looked up once for all of them)."""
    return (without_stray_slashes(asked) or refuse_transfer_codings(asked)
            or refuse_large_body(asked, body_limit) or refuse_stray_body(asked)
            or refuse_unknown_query(asked))


def refuse_transfer_codings(asked: Request) -> None:
    """A body sent with a transfer coding besides ``chunked`` (``gzip, chunked``) gets 501,
    as RFC 9112 says, before it is read: gunicorn takes the chunks off, not the rest."""
    given = asked.environ.get("HTTP_TRANSFER_ENCODING")
    if given and {c.strip() for c in given.lower().split(",")} - {"chunked"}:
        _close_connection(asked)
        raise ApiError(501, "unsupported_transfer_coding", "the request body must be sent "
                       f"chunked or with a Content-Length, uncompressed: Transfer-Encoding "
                       f"{shown(given)} is not taken")


def refuse_large_body(asked: Request, limit: int | None) -> None:
    """A body over ``limit`` (``Config.max_body_bytes``) gets 413 before the route reads the
    store or parses it. A Content-Length over it is refused unread. A chunked body is read
    here, at most one byte past the limit (Werkzeug would cut it at the limit without a
    word), and kept for ``body()``."""
    environ = asked.environ
    if limit is None or not (environ.get("CONTENT_LENGTH")
                             or environ.get("HTTP_TRANSFER_ENCODING")):
        return  # no body: most requests
    if asked.content_length is not None:
        if asked.content_length > limit:
            _close_connection(asked)  # gunicorn would close it anyway, its answer saying keep-alive
            raise RequestEntityTooLarge()
    elif "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        asked.max_content_length = limit + 1
        try:
            data = read_body(asked)
        except (ParseException, NoMoreData) as error:  # gunicorn's: the chunks do not parse
            _close_connection(asked)
            raise ApiError(400, "bad_request", "the chunked request body is malformed "
                           f"({type(error).__name__})") from None
        if len(data) > limit:
            raise RequestEntityTooLarge()


# The methods of the routes that read no request body (every POST and PUT route reads one)
NO_BODY_METHODS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


def refuse_stray_body(asked: Request) -> None:
    """A body not declared as JSON, or compressed, gets 415 on every route, also one that
    reads no body (a GET, a DELETE), as ``body()`` refuses it on the others. A JSON body
    there is ignored (RFC 9110 gives a GET's content no meaning): clients that send ``{}``
    with every request keep working. An empty body, with ``Content-Length: 0`` or chunked,
    is none; a path no route takes gets its 404 or 405 instead."""
    environ = asked.environ
    sent = environ.get("CONTENT_LENGTH", "0") != "0" or environ.get("HTTP_TRANSFER_ENCODING")
    if not (sent and asked.method in NO_BODY_METHODS and asked.url_rule is not None):
        return  # most requests: the rest is not looked at
    coding = content_coding(asked)
    if (coding or not asked.is_json) and read_body(asked):
        came = (f"with Content-Encoding {shown(coding)}" if coding
                else f"as {asked.mimetype}" if asked.mimetype else "with no Content-Type")
        raise ApiError(415, "unsupported_media_type", f"{asked.method} {shown(asked.path, 128)} "
                       "reads no request body, and one not sent as uncompressed JSON is refused "
                       f"(this one came {came}); send none")


def content_coding(asked: Request) -> str:
    """The body's ``Content-Encoding`` (lower case), or "" when it is sent as it is."""
    coding = asked.environ.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    return "" if coding == "identity" else coding


def read_body(asked: Request) -> bytes:
    """The request's body (read once, then kept). 408 if the client went silent while
    sending it (``service.refusals``); 400 if it ended short of its Content-Length: a
    body cut off is not taken for a whole one that happens to parse."""
    try:
        data = asked.get_data()
    except (BlockingIOError, ClientDisconnected) as error:  # Werkzeug's: a read that failed
        _close_connection(asked)
        if isinstance(error, BlockingIOError) or isinstance(error.__context__, BlockingIOError):
            raise ApiError(408, "request_timeout", "the client sent no more of the request "
                           "body for too long") from None  # the read's bound passed: EAGAIN
        raise ApiError(400, "bad_request", "the client stopped sending the request body") from None
    if asked.content_length is not None and len(data) < asked.content_length:
        _close_connection(asked)
        raise ApiError(400, "bad_request", f"the request body ended after {len(data)} of the "
                       f"{asked.content_length} bytes its Content-Length gives")
    return data


def _close_connection(asked: Request) -> None:
    """After this answer (``service.refusals``): what follows a body cut off or malformed
    would be read as the next request."""
    close = asked.environ.get(CLOSE_CONNECTION)
    if close is not None:
        close()


def without_stray(path: str) -> str:
    """``path`` with single slashes and none at the end ("" for the root)."""
    return re.sub("//+", "/", path).rstrip("/")


def without_stray_slashes(asked: Request):
    """A path that names a route but for a trailing slash (``/v1/games/``) or a doubled one
    (``/v1//games``) is redirected to it (GET and HEAD, 308, to a path: Werkzeug's own
    redirect of a doubled slash names the host the request gave) or, for other methods,
    refused with a 404 whose detail names it (a redirected write may be sent again without
    its body by a careless client). A method that route does not take gets its 405 at once.
    A path that starts with a doubled slash (``//v1/tables``) is one too, though Werkzeug's
    ``path`` drops it and routes the request."""
    sent = asked.environ.get("PATH_INFO", "")  # the path's bytes, as latin-1 (WSGI)
    if not (sent.startswith("//")
            or isinstance(asked.routing_exception, (NotFound, RequestRedirect))):
        return None
    mended = without_stray(sent).encode("latin-1")
    if mended == sent.encode("latin-1"):
        return None
    path, target = get_path_info(asked.environ), mended.decode(errors="replace")
    methods = current_app.create_url_adapter(asked).allowed_methods(target) if target else []
    if not methods:
        return None
    if asked.method not in methods:
        raise MethodNotAllowed(valid_methods=methods)
    if asked.method in ("GET", "HEAD"):  # to the bytes sent, even those that are no UTF-8
        query = asked.query_string.decode("latin-1")
        return redirect(quote(asked.script_root) + quote(mended) + (f"?{query}" if query else ""),
                        308)
    how = ("without the trailing slash" if "//" not in path.rstrip("/")
           else "with single slashes and none at the end")
    raise ApiError(404, "not_found", f"there is no route at {shown(path, 128)}; the path is "
                   f"{shown(target, 128)}, {how}")


def body(schema: Schema) -> dict:
    """The request's JSON body, validated by ``schema``. A body that is not declared as
    JSON gets 415; an empty body without a Content-Type stands for ``{}``."""
    asked = request._get_current_object()  # one look-up, not one per use
    data = read_body(asked)
    coding = content_coding(asked)
    if data and coding:
        raise ApiError(415, "unsupported_media_type", "the request body must be sent "
                       f"uncompressed: Content-Encoding {shown(coding)} is not taken",
                       headers={"Accept-Encoding": "identity"})  # RFC 7694
    if not asked.is_json and data:
        came = f"as {asked.mimetype}" if asked.mimetype else "with no Content-Type"
        raise ApiError(415, "unsupported_media_type", "the request body must be JSON, sent "
                       f"with Content-Type: application/json (this one came {came})")
    if not data:
        return schema.load({})
    try:
        value = jsonio.loads(data)
        _NAMES_ONCE.decode(data.decode())
    except jsonio.Refused as refused:
        why = f"the body cannot be taken as JSON: {refused}"
        raise ApiError(400, "malformed_json", why) from None
    except ValueError:  # also: not UTF-8, or UTF-8 led by a BOM
        raise ApiError(400, "malformed_json", "the body is not valid JSON in UTF-8, "
                       "without a byte order mark") from None
    except RecursionError:  # read by orjson (to 1,024 levels), not by the standard library
        raise ApiError(400, "malformed_json", "the body cannot be taken as JSON: it nests "
                       "deeper than about a thousand levels") from None
    return schema.load(value)  # JSON that is not an object (null too) is 422 invalid_request


def _names_once(pairs: list[tuple[str, Any]]) -> None:
    """Refuses an object that names a key twice: readers of JSON disagree on which of the
    two counts (ours would keep the last), so neither is taken."""
    seen = set()
    for name, _ in pairs:
        if name in seen:
            raise ApiError(400, "malformed_json", f"the body names {shown(name)!r} twice in one "
                           "object; each name may be given once")
        seen.add(name)


_NAMES_ONCE = json.JSONDecoder(object_pairs_hook=_names_once)


def client_key(payload: dict | None = None) -> ClientKey | None:
    """The request's Idempotency-Key, bound to a fingerprint of the request (method, path
    and validated body), so that the same key with another request can be refused."""
    asked = request._get_current_object()
    key = asked.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= 200:
        raise ApiError(422, "invalid_idempotency_key", "Idempotency-Key must be 1 to 200 characters")
    if "," in key:  # the server joins a header given twice with one: which key was meant?
        raise ApiError(422, "invalid_idempotency_key", "Idempotency-Key must be given once, "
                       "and hold no comma")
    request_text = f"{asked.method} {asked.path}\n{canonical_json(payload or {})}"
    return ClientKey(key, hashlib.sha256(request_text.encode()).hexdigest())


def takes_query(view):
    """Marks a route that reads query parameters (with ``query``); every other route gets
    422 ``invalid_query`` for any (``refuse_unknown_query``)."""
    view.takes_query = True
    return view


def takes_token(view):
    """Marks a route that may recognise a bearer token (``service.auth``); a token sent to
    any other route counts against its address's rate limit (``service.limits``)."""
    view.takes_token = True
    return view


def refuse_unknown_query(asked: Request) -> None:
    """Under ``/v1`` (not the pages, whose links may carry anything): a query parameter
    given more than once, or given to a route that takes none, gets 422 ``invalid_query``
    naming it."""
    rule = asked.url_rule
    if (not asked.query_string or rule is None or not rule.rule.startswith("/v1/")
            or not asked.args):
        return
    repeated = {name: ["given more than once"] for name in asked.args
                if len(asked.args.getlist(name)) > 1}
    if repeated:
        raise invalid_query(repeated)
    if not getattr(current_app.view_functions[rule.endpoint], "takes_query", False):
        raise invalid_query({name: ["this route takes no query parameters"]
                             for name in asked.args})


def query(schema: Schema) -> dict:
    """The query parameters, validated by ``schema``: a bad one gets 422 ``invalid_query``
    naming it as a query parameter. Without any, the schema's defaults (loaded once: most
    requests have none, and a load is not free; nor is parsing an empty query string)."""
    if not request.query_string or not request.args:
        return dict(_defaults(schema))
    try:
        return schema.load(request.args)
    except ValidationError as error:
        raise invalid_query(error.messages) from None


def invalid_query(messages: dict) -> ApiError:
    named = "; ".join(f"query parameter '{name}': {_text(problems)}"
                      for name, problems in messages.items())
    return ApiError(422, "invalid_query", named, errors=messages)


@functools.cache
def _defaults(schema: Schema) -> dict:
    return schema.load({})


def _text(messages) -> str:
    return " ".join(map(str, messages)) if isinstance(messages, list) else str(messages)


def answered(result: dict, status: int):
    """A write's answer; one replayed to a retry (same Idempotency-Key, same request) is
    marked with ``Idempotent-Replayed: true``."""
    return result, status, {"Idempotent-Replayed": "true"} if isinstance(result, Replayed) else {}
