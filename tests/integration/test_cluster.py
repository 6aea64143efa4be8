"""Hands played through a real 3-master Redis Cluster, with the job queue on a Redis apart.

The test starts three ``redis-server --cluster-enabled yes`` nodes on free loopback ports
and joins them with ``redis-cli --cluster create`` (``tests.processes.RedisCluster``), a
plain ``redis-server`` for RQ, ``cardroom serve --workers 2`` with ``REDIS_CLUSTER=true``
and two ``cardroom worker`` processes. It plays hands on tables whose keys lie on
different masters, each to the end through the HTTP API, and asks every node which keys
it holds; the workers' sweepers clear the owed index on the cluster and archive the
ended hands (``CARDROOM_ARCHIVE_AFTER``), which read as before. Then it stops the
cluster: the API answers 503. With every master of a cluster hung, requests at once fail
rather than wait for one another. Skipped without ``redis-server`` or ``redis-cli``; under
``CI=true`` it fails.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
import urllib.request

import pytest
import redis
from redis.cluster import RedisCluster as ClusterClient

from service.backend import Rediscovering, connect, store_unavailable
from service.store import (ENDED_HANDS_KEY, OWED_TABLES_KEY, archive_key, hand_stream,
                           table_stream)
from tests.processes import RedisCluster, RedisServer, banner, free_port, redis_binary

from .client import Api, create_table, play_hand
from .test_live_stream import Reader, Stream, play
from .conftest import log_tail, worker_logs
from .test_real_server import check_ended_hand

pytestmark = pytest.mark.redis

START_TIMEOUT = 30.0  # for the API to answer /healthz; never asserted as a timing
MAX_TABLES = 30  # tables created, at most, to find one on each master
HANDS = 2  # per table: the first never folds, so a worker settles its showdown


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    server, cli = redis_binary("redis-server"), redis_binary("redis-cli")
    try:
        nodes = RedisCluster(server, cli, tmp_path_factory.mktemp("cluster")).start()
    except RuntimeError as error:
        pytest.fail(str(error))
    yield nodes
    nodes.stop()


@pytest.fixture(scope="module")
def rq_redis(tmp_path_factory):
    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("rq-redis")).start()
    yield server
    server.stop()


@pytest.mark.parametrize("settings, named", [
    ({"REDIS_CLUSTER": "true", "RQ_REDIS_URL": "node 1"}, "RQ_REDIS_URL"),
    ({}, "REDIS_URL"),  # a node, without REDIS_CLUSTER=true
    ({"REDIS_URL": "rq", "RQ_REDIS_URL": "node 2"}, "RQ_REDIS_URL"),
])
def test_a_cluster_node_where_a_plain_redis_is_needed_is_refused_at_startup(
        cluster, rq_redis, cardroom_process, settings, named):
    """(Before the test that stops the cluster.) A plain client of a node is answered MOVED
    for the keys of the others: every job, or most writes, would fail."""
    urls = {"node 1": cluster.nodes[1].url, "node 2": cluster.nodes[2].url, "rq": rq_redis.url}
    env = {"REDIS_URL": cluster.url, **{k: urls.get(v, v) for k, v in settings.items()}}
    for command in ("serve", "worker"):
        proc = cardroom_process(command, **env)
        assert proc.wait(20) == 2, log_tail(proc.log_path)
        assert f"error: {named} (" in proc.log_path.read_text(), log_tail(proc.log_path)
        assert "is a node of a Redis Cluster" in proc.log_path.read_text()


def test_hands_play_to_the_end_on_a_redis_cluster_with_separate_workers(
        cluster, rq_redis, cardroom_process):
    # Ended hands are archived 3 s after their end (retention), on their table's master.
    settings = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "true", "RQ_REDIS_URL": rq_redis.url,
                "CARDROOM_ARCHIVE_AFTER": "3"}
    port = free_port()
    serve = cardroom_process("serve", "--port", str(port), "--workers", "2", **settings)
    # Their sweepers look at owed showdowns after a second (not 10): they read and clear
    # the owed index on the cluster while the test runs.
    workers = [cardroom_process("worker", CARDROOM_OWED_JOB_AFTER="1", **settings)
               for _ in range(2)]

    def diagnostics() -> str:
        return worker_logs([serve, *workers])

    api = Api(f"http://127.0.0.1:{port}")
    _wait_healthy(api, serve)
    assert "Redis Cluster" in banner(serve.log_path.read_text())

    events = ClusterClient.from_url(cluster.url)
    tables = _one_table_per_master(api, events)
    rng = random.Random(20261122)
    first_histories = {}
    for table in tables.values():
        total = sum(table.stacks().values())
        for number in range(HANDS):
            played = play_hand(table, rng, allow_fold=number > 0, diagnostics=diagnostics)
            check_ended_hand(table, played, total)  # chips conserved, audit valid, ...
            if number == 0:
                first_histories[table.table_id] = table.history(played.hand_no)
                settled = [e for e in table.history(played.hand_no)["events"]
                           if e["type"] == "ShowdownEvaluated"]
                assert [e["actor"] for e in settled] == ["worker"], settled

    # A hand followed live: the event stream's blocking XREAD on the cluster client.
    table = next(iter(tables.values()))
    hand_no = table.start_hand()
    reader = Reader(Stream(api.base_url, table.hand_path(hand_no) + "/events/stream",
                           table.tokens[1]))
    play(table, hand_no, rng)
    sent = reader.result()
    final = table.wait_hand(hand_no, lambda h: h["status"] == "ended", "ended",
                            diagnostics=diagnostics)
    assert (sent[0]["event"], sent[-1]["event"]) == ("snapshot", "end"), sent
    assert [m["id"] for m in sent[1:-1]] == list(range(sent[0]["id"] + 1, final["version"] + 1))

    # Every master holds the keys of the table we found on it, and nothing of RQ's.
    for node_port, table in tables.items():
        node = redis.Redis(port=node_port)
        held = {key.decode() for key in node.keys("*")}
        mine = {key for key in held if key.startswith(f"t:{{{table.table_id}}}:")}
        assert table_stream(table.table_id) in mine, (node_port, sorted(held))
        assert any(":hand:" in key for key in mine), (node_port, sorted(mine))
        assert not any(key.startswith("rq:") for key in held), (node_port, sorted(held))
        for other in tables.values():
            if other is not table:
                assert not any(other.table_id in key for key in held), (node_port, other)
    # RQ's jobs are on the Redis apart, and no event is.
    rq_keys = {key.decode() for key in redis.Redis.from_url(rq_redis.url).keys("*")}
    for table in tables.values():
        assert f"rq:job:showdown-{table.table_id}-1" in rq_keys, sorted(rq_keys)
    assert not any(key.startswith("t:{") for key in rq_keys), sorted(rq_keys)
    # The sweepers empty the owed index (on the cluster) of the tables that owe nothing.
    deadline = time.monotonic() + START_TIMEOUT
    while events.zcard(OWED_TABLES_KEY) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert events.zcard(OWED_TABLES_KEY) == 0, events.zrange(OWED_TABLES_KEY, 0, -1)
    # The workers archive every ended hand; its history reads as before, its audit is valid.
    while events.zcard(ENDED_HANDS_KEY) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert events.zcard(ENDED_HANDS_KEY) == 0, events.zrange(ENDED_HANDS_KEY, 0, -1)
    for table in tables.values():
        assert not events.exists(hand_stream(table.table_id, 1))
        assert events.exists(archive_key(table.table_id, 1))
        assert table.history(1) == first_histories[table.table_id]
        assert table.audit(1)["valid"] is True
    assert all(w.poll() is None for w in workers), "a worker died\n" + diagnostics()

    # With a master lost, the cluster is down: its health check says so, though a node that
    # answers PING may be asked. With every node down, the API answers 503
    # store_unavailable (never 500).
    cluster.nodes[-1].stop()
    while b"cluster_state:fail" not in cluster.cli_reply(cluster.nodes[0], "CLUSTER", "INFO"):
        assert time.monotonic() < deadline + START_TIMEOUT, "the cluster never saw its loss"
        time.sleep(0.1)
    for _ in range(5):  # each asks a node at random
        assert api.get("/healthz").status == 503
    for node in cluster.nodes:
        node.stop()
    table = next(iter(tables.values()))
    for path in ("/healthz", table.path, table.hand_path(1)):
        response = api.get(path, token=table.admin)
        assert response.status == 503, (path, response)
        assert response.json["code"] == "store_unavailable", (path, response.json)


def _one_table_per_master(api: Api, events: ClusterClient) -> dict:
    """Three-player tables, created until each master holds one: master port -> table."""
    masters = {node.port for node in events.get_primaries()}
    assert len(masters) == 3, masters
    found = {}
    for _ in range(MAX_TABLES):
        table = create_table(api, 3, buy_in=1000)
        found.setdefault(events.get_node_from_key(table_stream(table.table_id)).port, table)
        if set(found) == masters:
            return found
    raise AssertionError(f"{MAX_TABLES} tables, all on the masters {sorted(found)} of "
                         f"{sorted(masters)}: are the table ids random?")


def _wait_healthy(api: Api, serve) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while serve.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(api.base_url + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("cardroom serve on the cluster is not healthy\n"
                         + log_tail(serve.log_path))


def test_a_cluster_whose_port_is_taken_before_it_starts_starts_on_new_ports(tmp_path):
    nodes = RedisCluster(redis_binary("redis-server"), redis_binary("redis-cli"), tmp_path)
    taken = nodes.nodes[-1].port
    with socket.socket() as squatter:  # as a connection's local port may take it meanwhile
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        nodes.start()
    try:
        assert taken not in [node.port for node in nodes.nodes]
        assert redis.Redis.from_url(nodes.url).ping()
        assert b"cluster_state:ok" in nodes.cli_reply(nodes.nodes[-1], "CLUSTER", "INFO")
    finally:
        nodes.stop()


def test_with_every_master_hung_requests_fail_instead_of_waiting_for_one_another(tmp_path):
    """redis-py asks the nodes for the cluster's map after a node fails to answer, 5 s for
    each hung node, under a lock of the process: eight requests at once to a cluster whose
    three masters hang each waited for the others' asking in turn (20, 35, 50 s, ...), the
    last ones for as long as the outage. Now one asks, and the others fail at once."""
    nodes = RedisCluster(redis_binary("redis-server"), redis_binary("redis-cli"), tmp_path).start()
    outcomes = []
    try:
        client = connect(nodes.url, cluster=True)
        assert client.set("before", 1)
        for node in nodes.nodes:
            os.kill(node.proc.pid, signal.SIGSTOP)

        def read(key: str) -> None:
            try:
                outcomes.append(client.get(key))
            except Exception as error:  # reported below
                outcomes.append(error)
        threads = [threading.Thread(target=read, args=(f"key-{n}",), daemon=True)
                   for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)  # the masters still hung: every request has been answered
        assert not any(thread.is_alive() for thread in threads), outcomes
    finally:
        for node in nodes.nodes:
            os.kill(node.proc.pid, signal.SIGCONT)
        nodes.stop()
    assert len(outcomes) == 8 and all(store_unavailable(o) for o in outcomes), outcomes
    assert sum(isinstance(o, Rediscovering) for o in outcomes) >= 1, outcomes
