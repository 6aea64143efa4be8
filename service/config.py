"""Runtime configuration of cardroom, read from the environment.

``REDIS_URL`` unset (or empty) selects the embedded mode: an in-process
fakeredis server and a worker thread. Everything else has a default, so
``Config()`` is a working embedded configuration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class Config:
    redis_url: str | None = None  # REDIS_URL; None = embedded fakeredis
    host: str = "127.0.0.1"  # HOST
    port: int = 8000  # PORT
    queue_name: str = "cardroom"  # RQ queue for showdown jobs
    owed_job_after: float = 10.0  # CARDROOM_OWED_JOB_AFTER, seconds

    @property
    def embedded(self) -> bool:
        return not self.redis_url

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Config":
        """Build a Config from environment variables; raise ValueError on bad numbers."""
        default = cls()
        return cls(
            redis_url=environ.get("REDIS_URL") or None,
            host=environ.get("HOST") or default.host,
            port=_number(environ, "PORT", int, default.port),
            owed_job_after=_number(
                environ, "CARDROOM_OWED_JOB_AFTER", float, default.owed_job_after
            ),
        )


def _number(environ: Mapping[str, str], name: str, kind: type, default):
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {raw!r}")
    return value
