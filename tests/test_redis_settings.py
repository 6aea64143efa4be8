"""REDIS_CLUSTER and RQ_REDIS_URL: which Redis holds the events and which the job queue,
and the errors of a Redis Cluster that mean the store is unavailable. (Hands played on a
real cluster: ``tests/integration/test_cluster.py``.)"""

from __future__ import annotations

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st
from redis.connection import HiredisRespSerializer

from service.backend import Backend, connect, store_unavailable
from service.config import Config

EVENTS, JOBS = "redis://127.0.0.1:7000/0", "redis://127.0.0.1:7100/0"  # never connected to


def test_the_job_queue_shares_the_events_redis_unless_told_otherwise():
    config = Config.from_env({"REDIS_URL": EVENTS})
    assert (config.rq_url, config.rq_apart, config.redis_cluster) == (EVENTS, False, False)
    backend = Backend.from_config(config)
    assert backend.rq is backend.redis and backend.queue.connection is backend.redis


def test_rq_redis_url_moves_the_job_queue_to_a_redis_of_its_own():
    config = Config.from_env({"REDIS_URL": EVENTS, "RQ_REDIS_URL": JOBS})
    assert (config.redis_url, config.rq_url, config.rq_apart) == (EVENTS, JOBS, True)
    backend = Backend.from_config(config)
    assert backend.queue.connection is backend.rq and backend.rq is not backend.redis
    assert backend.rq.connection_pool.connection_kwargs["port"] == 7100
    assert backend.redis.connection_pool.connection_kwargs["port"] == 7000


@pytest.mark.parametrize("raw, expected", [("true", True), ("TRUE", True), ("1", True),
                                           ("false", False), ("0", False), ("", False)])
def test_redis_cluster_is_a_flag(raw, expected):
    config = Config.from_env({"REDIS_URL": EVENTS, "RQ_REDIS_URL": JOBS, "REDIS_CLUSTER": raw})
    assert config.redis_cluster is expected
    assert config.rq_apart  # a cluster always keeps the queue apart; here RQ_REDIS_URL does


def test_a_cluster_keeps_the_job_queue_apart_even_at_the_same_address():
    config = Config.from_env({"REDIS_URL": EVENTS, "RQ_REDIS_URL": EVENTS,
                              "REDIS_CLUSTER": "true"})
    assert config.rq_apart  # one client could not be both a RedisCluster and RQ's Redis


@pytest.mark.parametrize("environ, named", [
    ({"REDIS_URL": EVENTS, "REDIS_CLUSTER": "true"}, "RQ_REDIS_URL"),
    ({"REDIS_CLUSTER": "true", "RQ_REDIS_URL": JOBS}, "REDIS_URL"),
    ({"RQ_REDIS_URL": JOBS}, "REDIS_URL"),
    ({"REDIS_URL": EVENTS, "RQ_REDIS_URL": JOBS, "REDIS_CLUSTER": "maybe"}, "REDIS_CLUSTER"),
    ({"REDIS_URL": "redis://127.0.0.1:7000/3", "RQ_REDIS_URL": JOBS, "REDIS_CLUSTER": "true"},
     "REDIS_URL names a database other than 0"),
    ({"REDIS_URL": "redis://127.0.0.1:7000?db=1", "RQ_REDIS_URL": JOBS, "REDIS_CLUSTER": "1"},
     "REDIS_URL names a database other than 0"),
])
def test_incomplete_redis_settings_are_refused_with_the_missing_name(environ, named):
    with pytest.raises(ValueError, match=named):
        Config.from_env(environ)


def test_cardroom_refuses_to_start_on_a_cluster_without_rq_redis_url(cardroom_process):
    for command in ("serve", "worker"):
        proc = cardroom_process(command, REDIS_URL=EVENTS, REDIS_CLUSTER="true")
        assert proc.wait(20) == 2, proc.log_path.read_text()  # a bad setting: exit 2, one line
        assert "RQ_REDIS_URL" in proc.log_path.read_text()


@pytest.mark.parametrize("error, unavailable", [
    (redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"), True),
    (redis.exceptions.MasterDownError("MASTERDOWN Link with MASTER is down"), True),
    (redis.exceptions.ClusterError("TTL exhausted."), True),
    (redis.exceptions.TryAgainError("TRYAGAIN Multiple keys request during rehashing"), True),
    (redis.exceptions.SlotNotCoveredError('Slot "12" is not covered by the cluster.'), True),
    (redis.exceptions.RedisClusterException(
        "Redis Cluster cannot be connected. Please provide at least one reachable node: "
        "Error 111 connecting to 127.0.0.1:7000. Connection refused."), True),
    (redis.exceptions.RedisClusterException(
        "All slots are not covered after query all startup_nodes. 5461 of 16384 covered..."),
     True),
    (redis.exceptions.RedisClusterException(
        "EVALSHA - all keys must map to the same key slot"), False),
    (redis.exceptions.RedisClusterException(
        "ERROR: Calling pipelined function evalsha is blocked when running redis in "
        "cluster mode..."), False),
])
def test_which_cluster_errors_mean_the_store_is_unavailable(error, unavailable):
    assert store_unavailable(error) is unavailable


def test_an_unreachable_cluster_counts_as_unavailable():
    """No node answers at 127.0.0.1:1: the cluster client's error means "unavailable"
    (a 503, a worker that waits), not a bug."""
    with pytest.raises(redis.exceptions.RedisClusterException) as refused:
        connect("redis://127.0.0.1:1/0", cluster=True)
    assert store_unavailable(refused.value), refused.value


_ARGUMENTS = st.one_of(st.binary(max_size=20), st.text(max_size=20), st.integers(),
                       st.floats(allow_nan=False, allow_infinity=False),
                       st.binary(max_size=20).map(bytearray),
                       st.binary(max_size=20).map(memoryview))


@given(st.sampled_from(["GET", "XADD", "CONFIG GET", "client setname", b"SCRIPT LOAD", b"HSET"]),
       st.lists(_ARGUMENTS, max_size=6))
def test_connect_packs_a_command_as_redis_py_does(name, arguments):
    """``connect``'s clients pack a plain command without redis-py's look at every argument
    first, to the same bytes; a name of two words is split as redis-py splits it."""
    packer = connect(EVENTS).connection_pool.connection_kwargs["command_packer"]
    assert b"".join(packer.pack(name, *arguments)) == b"".join(
        HiredisRespSerializer().pack(name, *arguments))


def test_connect_refuses_what_redis_py_refuses():
    packer = connect(EVENTS).connection_pool.connection_kwargs["command_packer"]
    with pytest.raises(redis.DataError):
        packer.pack("SET", "key", None)
