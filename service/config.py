"""Runtime configuration of cardroom, read from the environment.

``REDIS_URL`` unset (or empty) selects the embedded mode: an in-process
fakeredis server and a worker thread. Everything else has a default, so
``Config()`` is a working embedded configuration.

``REDIS_URL`` holds the events; with ``REDIS_CLUSTER=true`` it names one node of a
Redis Cluster. ``RQ_REDIS_URL`` is the job queue's Redis (RQ does not support
Cluster): it defaults to ``REDIS_URL`` and is required with a cluster.

``CARDROOM_ARCHIVE_AFTER`` (seconds, unset: off) has the sweepers compact each hand that
ended at least that long ago (``service.retention``).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Mapping

from redis.connection import parse_url

from service.keys import Keys, keys_for, parse_key


@dataclass(frozen=True)
class Rate:
    """A rate limit: bursts of up to ``requests``, refilled at ``requests`` per ``seconds``."""

    requests: int
    seconds: int


@dataclass(frozen=True)
class Config:
    redis_url: str | None = None  # REDIS_URL; None = embedded fakeredis
    host: str = "127.0.0.1"  # HOST
    port: int = 8000  # PORT
    queue_name: str = "cardroom"  # RQ queue for showdown jobs
    owed_job_after: float = 10.0  # CARDROOM_OWED_JOB_AFTER, seconds
    secret_key: str | None = None  # CARDROOM_SECRET_KEY, hex; see service.keys
    signing_key: str | None = None  # CARDROOM_SIGNING_KEY, hex; see service.keys
    max_body_bytes: int = 65536  # CARDROOM_MAX_BODY_BYTES; a larger request body gets 413
    max_streams: int = 32  # CARDROOM_MAX_STREAMS; open event streams per process
    max_streams_per_address: int = 8  # CARDROOM_MAX_STREAMS_PER_ADDRESS, of those; 0 = no bound
    sse_heartbeat: float = 10.0  # CARDROOM_SSE_HEARTBEAT; seconds between heartbeat comments
    rate_limit: Rate | None = None  # CARDROOM_RATE_LIMIT=N/S, per token or address; None = off
    table_rate_limit: Rate | None = None  # CARDROOM_TABLE_RATE_LIMIT=N/S, new tables per address
    redis_cluster: bool = False  # REDIS_CLUSTER=true: REDIS_URL is a node of a Redis Cluster
    rq_redis_url: str | None = None  # RQ_REDIS_URL; None = REDIS_URL
    archive_after: float | None = None  # CARDROOM_ARCHIVE_AFTER, seconds; None = never
    client_silence: float = 30.0  # CARDROOM_CLIENT_SILENCE, seconds; see service.refusals
    # CARDROOM_MAX_REQUESTS_PER_ADDRESS: requests one peer address has under way at once in a
    # process (each holds a thread); 0 = no bound. See service.refusals
    max_requests_per_address: int = 16
    metrics_port: int | None = None  # CARDROOM_METRICS_PORT: a worker's own metrics, on HOST
    # CARDROOM_TRUSTED_PROXIES: proxies in front of the API, each adding the address it was
    # sent from to X-Forwarded-For; the client's address is the one the outermost added
    trusted_proxies: int = 0

    def __post_init__(self):
        if self.redis_cluster and not self.redis_url:
            raise ValueError("REDIS_CLUSTER=true needs REDIS_URL, the address of a cluster node")
        if self.redis_cluster and not self.rq_redis_url:
            raise ValueError("REDIS_CLUSTER=true needs RQ_REDIS_URL, a Redis for the job queue "
                             "apart from the cluster (RQ does not support Redis Cluster)")
        if self.redis_cluster and parse_url(self.redis_url).get("db", 0) != 0:
            raise ValueError("REDIS_URL names a database other than 0, and a Redis Cluster has "
                             "only database 0 (REDIS_CLUSTER=true)")
        if self.rq_redis_url and not self.redis_url:
            raise ValueError("RQ_REDIS_URL needs REDIS_URL (without it, the embedded mode "
                             "keeps its jobs in process)")

    @property
    def embedded(self) -> bool:
        return not self.redis_url

    @property
    def rq_url(self) -> str | None:
        """The job queue's Redis: ``RQ_REDIS_URL``, else ``REDIS_URL``."""
        return self.rq_redis_url or self.redis_url

    @property
    def rq_apart(self) -> bool:
        """Whether the job queue lives on another Redis than the events."""
        return self.redis_cluster or self.rq_url != self.redis_url

    def keys(self) -> Keys:
        """The configured keys, or this process's ephemeral pair (see ``service.keys``)."""
        return keys_for(self.secret_key, self.signing_key)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Config":
        """Build a Config from environment variables; raise ValueError on bad values."""
        default = cls()
        return cls(
            redis_url=_redis_url(environ, "REDIS_URL"),
            host=environ.get("HOST") or default.host,
            port=_port(_number(environ, "PORT", int, default.port)),
            owed_job_after=_number(
                environ, "CARDROOM_OWED_JOB_AFTER", float, default.owed_job_after
            ),
            secret_key=_key(environ, "CARDROOM_SECRET_KEY"),
            signing_key=_key(environ, "CARDROOM_SIGNING_KEY"),
            max_body_bytes=_number(
                environ, "CARDROOM_MAX_BODY_BYTES", int, default.max_body_bytes
            ),
            max_streams=_number(environ, "CARDROOM_MAX_STREAMS", int, default.max_streams),
            max_streams_per_address=_number(environ, "CARDROOM_MAX_STREAMS_PER_ADDRESS", int,
                                            default.max_streams_per_address),
            sse_heartbeat=_positive(_number(
                environ, "CARDROOM_SSE_HEARTBEAT", float, default.sse_heartbeat
            ), "CARDROOM_SSE_HEARTBEAT"),
            rate_limit=_rate(environ, "CARDROOM_RATE_LIMIT"),
            table_rate_limit=_rate(environ, "CARDROOM_TABLE_RATE_LIMIT"),
            redis_cluster=_flag(environ, "REDIS_CLUSTER"),
            rq_redis_url=_redis_url(environ, "RQ_REDIS_URL"),
            archive_after=_seconds(environ, "CARDROOM_ARCHIVE_AFTER"),
            client_silence=_positive(_number(
                environ, "CARDROOM_CLIENT_SILENCE", float, default.client_silence
            ), "CARDROOM_CLIENT_SILENCE"),
            max_requests_per_address=_number(environ, "CARDROOM_MAX_REQUESTS_PER_ADDRESS", int,
                                             default.max_requests_per_address),
            trusted_proxies=_number(environ, "CARDROOM_TRUSTED_PROXIES", int,
                                    default.trusted_proxies),
            metrics_port=_optional_port(environ, "CARDROOM_METRICS_PORT"),
        )


def _flag(environ: Mapping[str, str], name: str) -> bool:
    raw = environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ValueError(f"{name} must be true or false, got {raw!r}")


def _redis_url(environ: Mapping[str, str], name: str) -> str | None:
    raw = environ.get(name) or None
    if raw is not None:
        try:
            parse_url(raw)
        except ValueError as error:  # its message never holds the URL (nor its password)
            raise ValueError(f"{name} must be a Redis URL such as redis://127.0.0.1:6379/0: "
                             f"{error}") from None
    return raw


def _key(environ: Mapping[str, str], name: str) -> str | None:
    raw = environ.get(name, "").strip()
    return parse_key(name, raw) if raw else None


def _rate(environ: Mapping[str, str], name: str) -> Rate | None:
    """``N/S`` (N requests per S seconds, whole numbers from 1); unset or empty: no limit."""
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    match = re.fullmatch(r"([0-9]{1,9})\s*/\s*([0-9]{1,9})", raw)
    if match is None or 0 in (requests := int(match[1]), seconds := int(match[2])):
        raise ValueError(f"{name} must be N/S, N requests per S seconds (whole numbers from 1, "
                         f"such as 100/60), got {raw!r}")
    return Rate(requests, seconds)


def _number(environ: Mapping[str, str], name: str, kind: type, default):
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        number = "a whole number" if kind is int else "a number"  # 1.5 is a number
        raise ValueError(f"{name} must be {number}, got {raw!r}") from None
    if not math.isfinite(value):  # nan and inf pass every comparison below, or fail every one
        raise ValueError(f"{name} must be a finite number, got {raw!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {raw!r}")
    return value


def _seconds(environ: Mapping[str, str], name: str) -> float | None:
    """A number of seconds from 0; unset or empty: None (off)."""
    return _number(environ, name, float, None)


def _port(value: int, name: str = "PORT") -> int:
    if not 1 <= value <= 65535:
        raise ValueError(f"{name} must be a TCP port, 1 to 65535, got {value}")
    return value


def _optional_port(environ: Mapping[str, str], name: str) -> int | None:
    """A TCP port; unset or empty: None."""
    value = _number(environ, name, int, None)
    return None if value is None else _port(value, name)


def _positive(value, name: str):
    if not value > 0:
        raise ValueError(f"{name} must be more than 0, got {value!r}")
    return value
