"""The database a benchmark empties before it writes: one that holds nothing, or only what
a benchmark wrote there before (``MARK`` says so). Any other is refused, since it may be
the database of the stack being measured."""

from __future__ import annotations

MARK = "cardroom:benchmark:scratch"


def emptied(redis) -> None:
    """Flush ``redis``'s database and mark it as a benchmark's; SystemExit, touching
    nothing, if it holds keys no benchmark wrote."""
    held = redis.dbsize()
    if held and not redis.exists(MARK):
        raise SystemExit(f"the database holds {held} keys that no benchmark wrote; give the "
                         "benchmark a database of its own (another /N at the end of the URL)")
    redis.flushdb()
    redis.set(MARK, "")
