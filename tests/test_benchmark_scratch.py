"""The benchmarks that flush their database refuse one holding what no benchmark wrote."""

from __future__ import annotations

import fakeredis
import pytest

from benchmarks.scratch import emptied


def test_a_database_of_the_stack_is_refused_untouched():
    redis = fakeredis.FakeRedis()
    redis.set("cardroom:table:{t1}:events", "a table")
    with pytest.raises(SystemExit, match="1 keys that no benchmark wrote"):
        emptied(redis)
    assert redis.keys() == [b"cardroom:table:{t1}:events"]


def test_an_empty_database_or_a_benchmark_s_own_is_emptied_and_marked():
    redis = fakeredis.FakeRedis()
    emptied(redis)
    redis.set("written by the benchmark", "1")
    emptied(redis)
    assert redis.keys() == [b"cardroom:benchmark:scratch"]
