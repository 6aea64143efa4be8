"""Rate limits, kept in Redis so that they hold across every API process.

``CARDROOM_RATE_LIMIT=N/S`` limits each bearer token (by the token's SHA-256, never the
token) and, for requests without one, each client address. ``CARDROOM_TABLE_RATE_LIMIT=N/S``
limits ``POST /v1/tables`` per address; table creation counts against it instead of the
general limit when it is set. Both are off when unset, and then no Redis call is made.

Each limit is a GCRA (generic cell rate algorithm, the token bucket without a refill job):
a client may send up to N requests at once, and one more every S/N seconds after that.
One key per client holds the time its bucket is full again; one script call (one round
trip, one key, so it runs on Redis Cluster) checks and counts a request, timed by Redis
``TIME`` so that every process shares one clock. Past the limit: 429 ``rate_limited`` with
``Retry-After``, the whole seconds until the next request is allowed.
"""

from __future__ import annotations

import math

from flask import Flask, request

from service.config import Rate
from service.problems import ApiError
from service.room import hash_token

# Monitoring and documentation are never limited: probes and the reference always answer.
EXEMPT_PATHS = frozenset({"/", "/healthz", "/metrics", "/docs", "/openapi.yaml",
                          "/openapi.json"})

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
local wait = tat + interval - period - now
if wait > 0 then
  return math.ceil(wait)
end
local new_tat = math.ceil(tat + interval)
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return 0
"""


def register(app: Flask, redis, general: Rate | None, tables: Rate | None) -> None:
    """Check every request against its limit before the route runs; nothing when both
    limits are off."""
    if general or tables:
        app.before_request(Limiter(redis, general, tables).check)


class Limiter:
    def __init__(self, redis, general: Rate | None, tables: Rate | None):
        self.general, self.tables = general, tables
        self._script = redis.register_script(_GCRA_LUA)

    def check(self) -> None:
        if request.path in EXEMPT_PATHS or request.endpoint == "static":
            return
        limit = self._limit()
        if limit is None:
            return
        rate, key, whose = limit
        wait = int(self._script(keys=[key], args=[rate.seconds, rate.requests]))
        if wait > 0:
            retry_after = max(1, math.ceil(wait / 1_000_000))
            raise ApiError(429, "rate_limited", f"over {whose} of {rate.requests} requests per "
                           f"{rate.seconds} seconds; try again in {retry_after} s",
                           headers={"Retry-After": str(retry_after)})

    def _limit(self) -> tuple[Rate, str, str] | None:
        """The rate this request counts against, the key of its bucket, and whose limit
        it is."""
        address = request.remote_addr or "unknown"
        if self.tables and request.endpoint == "tables.create_table":
            return (self.tables, f"cardroom:rate:tables:{address}",
                    "this address's limit on new tables")
        if self.general is None:
            return None
        token = _bearer_token()
        if token:
            return (self.general, f"cardroom:rate:token:{hash_token(token)}",
                    "this token's rate limit")
        return self.general, f"cardroom:rate:address:{address}", "this address's rate limit"


def _bearer_token() -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None
