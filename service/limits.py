"""Rate limits, kept in Redis so that they hold across every API process.

``CARDROOM_RATE_LIMIT=N/S`` limits each bearer token (by the token's SHA-256, never the
token) and, for requests without one, each client address. ``CARDROOM_TABLE_RATE_LIMIT=N/S``
limits ``POST /v1/tables`` per address; table creation counts against it instead of the
general limit when it is set (an import that makes a table, ``POST /v1/imports/phh``
without ``table_id``, against both). Both are off when unset, and then no Redis call is
made.

Each limit is a GCRA (generic cell rate algorithm, the token bucket without a refill job):
a client may send up to N requests at once, and one more every S/N seconds after that.
One key per client holds the time its bucket is full again; one script call (one round
trip, one key, so it runs on Redis Cluster) checks and counts a request, timed by Redis
``TIME`` so that every process shares one clock. Past the limit: 429 ``rate_limited`` with
``Retry-After``, the whole seconds until the next request is allowed.

Made-up tokens: a token's bucket is full the first time it is seen, so a client sending a
new random token with every request would never be limited. So a request sent with a token
to a route that reads none (``routes.takes_token``) counts against its address's bucket
alone, before it runs; and one to a route that reads tokens counts against its token's
bucket alone only if ``service.auth`` recognised the token at the table it names: any other
(made up, of another table, for a table that does not exist) also counts against its
address's bucket, once it is answered. Valid tokens cost no extra round trip and never
spend the address's allowance at the routes that read them: each was handed out to a
request without one (creating a table, taking a seat), which the address's bucket counted.
When the address's bucket refuses such a request, an error answer (nothing was done)
becomes the 429, while a success stands (its work is done); and this process refuses every
request with a token from that address, valid or not, until the bucket lets the next one in
(``Blocks``, no Redis call). Requests without a token are
refused by the address's bucket itself. Each process learns of a block from a refusal of its
own, and the bucket is shared in Redis, so the limit holds across processes.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from flask import Flask, current_app, g, request
from redis.exceptions import RedisError

from service import auth
from service.addresses import client_address
from service.config import Rate
from service.problems import ApiError, answer
from service.room import hash_token
from service.routes import without_stray
from service.store import Script

# Monitoring and documentation are never limited: probes and the reference always answer.
EXEMPT_PATHS = frozenset({"/", "/healthz", "/metrics", "/docs", "/openapi.yaml",
                          "/openapi.json"})
MAX_BLOCKS = 10_000  # addresses this process remembers as blocked (each a few hundred bytes)
TOKEN_LIMIT, ADDRESS_LIMIT = "this token's rate limit", "this address's rate limit"
TABLE_LIMIT = "this address's limit on new tables"
NOT_VALID_HERE = ", which counts requests with tokens that are not valid here"

# KEYS[1]: the client's key. ARGV: S and N of the rate N/S.
# The key holds the theoretical arrival time (TAT) in microseconds of Redis TIME: the
# moment the client's bucket is full again. Returns 0 (counted) or the microseconds to
# wait before the next request is allowed (not counted).
_GCRA_LUA = """
local period = tonumber(ARGV[1]) * 1000000
local interval = period / tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or 0), now)
if tat > now + period then
  -- spent under a slower rate (a restart changed it): now spent under this one
  tat = now + period
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil(period / 1000))
end
local wait = tat + interval - period - now
if wait > 0 then
  return math.ceil(wait)
end
local new_tat = math.ceil(tat + interval)
-- at least 1 ms: at a rate past one a microsecond, new_tat can round to now
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
           math.max(1, math.ceil((new_tat - now) / 1000)))
return 0
"""


def _exempt(path: str) -> bool:
    """An exempt path, also with a stray slash (``/docs/``): that request is redirected to it
    (``service.routes.without_stray_slashes``), not counted."""
    if path in EXEMPT_PATHS:
        return True
    stray = path.endswith("/") or "//" in path
    return stray and (without_stray(path) or "/") in EXEMPT_PATHS


def register(app: Flask, redis, general: Rate | None, tables: Rate | None) -> None:
    """Check every request against its limit before the route runs, and count a request
    whose token was not recognised against its address after; nothing when both limits are
    off. The limiter is ``app.extensions["limiter"]``."""
    if not (general or tables):
        return
    limiter = Limiter(redis, general, tables)
    app.extensions["limiter"] = limiter
    app.before_request(limiter.check)
    if general:
        app.after_request(limiter.count_unrecognised_token)


class Limiter:
    def __init__(self, redis, general: Rate | None, tables: Rate | None):
        self.general, self.tables = general, tables
        self.blocks = Blocks()
        self._script = Script(redis, _GCRA_LUA)

    def check(self) -> None:
        if _exempt(request.path) or request.endpoint == "static":
            return
        limit = self._limit()
        if limit is None:
            return
        rate, key, whose = limit
        if whose == TOKEN_LIMIT:
            blocked = self.blocks.seconds_left(_address())
            if blocked:
                raise _refusal(rate, ADDRESS_LIMIT, blocked, NOT_VALID_HERE)
        wait = self._count(rate, key)
        if wait:
            raise _refusal(rate, whose, wait)
        g.counted_by_token = whose == TOKEN_LIMIT

    def count_unrecognised_token(self, response):
        """After a request counted against its token's bucket alone: unless the route
        recognised the token, count it against the address's bucket as well."""
        if not g.get("counted_by_token") or auth.recognised():
            return response
        try:
            wait = self._count(self.general, _address_key(_address()))
        except RedisError:
            return response  # the answer is decided; the next request meets the outage
        if not wait:
            return response
        self.blocks.add(_address(), wait)
        if response.status_code < 400:
            return response  # its work is done: the block starts with the next request
        return answer(_refusal(self.general, ADDRESS_LIMIT, wait, NOT_VALID_HERE))

    def count_new_table(self) -> None:
        """A table made by another route than ``POST /v1/tables`` (an import without
        ``table_id``, known once its body is read) counts against the table limit too."""
        if self.tables is None:
            return
        wait = self._count(self.tables, _tables_key(_address()))
        if wait:
            raise _refusal(self.tables, TABLE_LIMIT, wait)

    def _count(self, rate: Rate, key: str) -> float:
        """0 if the request is counted in the bucket at ``key``, else the seconds to wait
        (not counted)."""
        return int(self._script(keys=[key], args=[rate.seconds, rate.requests])) / 1_000_000

    def _limit(self) -> tuple[Rate, str, str] | None:
        """The rate this request counts against, the key of its bucket, and whose limit
        it is. Only the POST makes a table: an OPTIONS of ``/v1/tables`` (a browser's
        preflight, say) counts as any other request does."""
        if (self.tables and request.endpoint == "tables.create_table"
                and request.method == "POST"):
            return self.tables, _tables_key(_address()), TABLE_LIMIT
        if self.general is None:
            return None
        token = _bearer_token()
        if token and getattr(current_app.view_functions.get(request.endpoint), "takes_token",
                             False):
            return self.general, f"cardroom:rate:token:{hash_token(token)}", TOKEN_LIMIT
        return self.general, _address_key(_address()), ADDRESS_LIMIT


class Blocks:
    """The addresses this process refuses requests with tokens from, each until a time of
    ``clock``. Bounded: expired entries are dropped from the oldest end as others come, and
    past ``MAX_BLOCKS`` the oldest goes (its address is still limited by its bucket in
    Redis; the block only spares the round trip and the route)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, size: int = MAX_BLOCKS):
        self.clock, self.size = clock, size
        self._until: dict[str, float] = {}  # in the order added, so roughly of expiry
        self._lock = threading.Lock()

    def add(self, address: str, seconds: float) -> None:
        with self._lock:
            now = self.clock()
            self._until.pop(address, None)
            while self._until:
                oldest, until = next(iter(self._until.items()))
                if until > now and len(self._until) < self.size:
                    break
                del self._until[oldest]
            self._until[address] = now + seconds

    def seconds_left(self, address: str) -> float:
        """The seconds ``address`` stays blocked; 0 if it is not."""
        with self._lock:
            left = self._until.get(address, 0) - self.clock()
            if left <= 0:
                self._until.pop(address, None)
            return max(left, 0)


def _refusal(rate: Rate, whose: str, seconds: float, why: str = "") -> ApiError:
    retry_after = max(1, math.ceil(seconds))
    return ApiError(429, "rate_limited", f"over {whose} of {_count(rate.requests, 'request')} "
                    f"per {_count(rate.seconds, 'second')}{why}; try again in {retry_after} s",
                    headers={"Retry-After": str(retry_after)})


def _count(number, thing: str) -> str:
    return f"{number:g} {thing}" + ("" if number == 1 else "s")


def _address() -> str:
    return client_address(request.remote_addr)


def _address_key(address: str) -> str:
    return f"cardroom:rate:address:{address}"


def _tables_key(address: str) -> str:
    return f"cardroom:rate:tables:{address}"


def count_new_table() -> None:
    """In a route that makes a table: 429 if the address is over its table limit."""
    limiter = current_app.extensions.get("limiter")
    if limiter is not None:
        limiter.count_new_table()


def _bearer_token() -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None
