"""When the event store cannot be used, every route that needs it answers 503
``store_unavailable`` (problem+json, with Retry-After), never 500; the routes that do not
need it go on answering. Real Redis clients throughout: one aimed at a port where
nothing listens, and a real ``redis-server`` stuck in a long Lua script (BUSY)."""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import pytest
import redis

from service.app import create_app
from service.backend import Backend, store_unavailable
from service.config import Config
from service.keys import KEYS_KEY, keys_disagree, new_key_pair
from service.store import EventStore, NewEvent, StreamWrite, table_stream
from tests.processes import RedisServer, free_port, redis_binary

WAIT = 20.0  # bound on waiting for the stuck script, never asserted as a timing

# A valid body for each route that validates its body before it reads the store (a route
# added later that does so needs one here, or it is refused 422 before the store is asked).
BODIES = {
    "tables.create_table": {"game": "five-card-draw"},
    "tables.join_table": {"name": "ann", "buy_in": 1000},
    "tables.add_chips": {"amount": 100},
    "hands.act": {"type": "check"},
    "imports.import_phh": {"phh": (Path(__file__).parent / "data" / "phh" /
                                   "dwan-ivey-2009.phh").read_text()},
}


def store_routes(app, table_id: str = "t1", hand_no: int = 1, seat: int = 1):
    """(method, path, endpoint) of every route that needs the store: all but the meta
    routes (the game catalog, the API description, ...), /healthz included."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or (rule.endpoint.startswith("meta.")
                                         and rule.endpoint != "meta.healthz"):
            continue
        path = re.sub(r"<(?:int:)?hand_no>", str(hand_no), rule.rule)
        path = re.sub(r"<(?:int:)?seat>", str(seat), path)
        path = re.sub(r"<[^<>]+>", table_id, path)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield method, path, rule.endpoint


def assert_store_unavailable(response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.get_data()!r}"
    assert response.mimetype == "application/problem+json", what
    problem = response.get_json()
    assert problem["code"] == "store_unavailable" and problem["status"] == 503, (what, problem)
    assert problem["type"] == "/problems/store_unavailable", (what, problem)
    retry_after = response.headers.get("Retry-After", "")
    assert retry_after.isdigit() and 1 <= int(retry_after) <= 30, (what, retry_after)


def check_every_route(app) -> int:
    client = app.test_client()
    headers = {"Authorization": "Bearer some-token", "Idempotency-Key": "k1"}
    count = 0
    for method, path, endpoint in store_routes(app):
        response = client.open(path, method=method, json=BODIES.get(endpoint, {}),
                               headers=headers)
        assert_store_unavailable(response, f"{method} {path} ({endpoint})")
        count += 1
    for path in ("/v1/games", "/openapi.yaml", "/openapi.json", "/docs", "/replay/t1/1"):
        assert client.get(path).status_code == 200, f"{path} needs no store, yet fails"
    return count


def test_every_route_answers_503_when_redis_cannot_be_reached():
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    app = create_app(backend=Backend.from_config(Config(redis_url=nowhere)))
    assert check_every_route(app) >= 11  # all the table and hand routes, and /healthz


def test_the_api_logs_an_outage_once_and_once_more_when_the_store_answers_again(
        tmp_path, caplog):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server binary")
    server = RedisServer(binary, tmp_path).start()
    client = create_app(backend=Backend.from_config(Config(redis_url=server.url))).test_client()
    try:
        assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201
        server.stop()
        for path in ("/healthz", "/healthz", "/v1/games", "/healthz", "OPTIONS /healthz",
                     "/healthz"):
            if path == "/v1/games":  # needs no store: its answer says nothing of it
                assert client.get(path).status_code == 200
            elif path.startswith("OPTIONS"):  # answered by Flask, the route not run
                assert client.options(path.split()[1]).status_code == 204
            else:
                assert_store_unavailable(client.get(path), f"{path}, Redis stopped")
        server.start()
        for _ in range(2):
            assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201
    finally:
        server.stop()
    said = [r.getMessage() for r in caplog.records if "event store" in r.getMessage()]
    assert len(said) == 2 and "is unavailable" in said[0], said
    assert said[1] == "the event store answers again", said


def test_after_redis_restarts_empty_a_refusal_ends_the_outage_and_the_keys_are_published_again(
        tmp_path, caplog):
    """A Redis that keeps nothing on disk comes back empty: the API's first connection to
    it logs the end of the outage, whatever the request is answered (here 404), and puts
    back the keys' fingerprint, by which a worker started later with other keys stops."""
    server = RedisServer(redis_binary(), tmp_path).start()
    secret_key, signing_key = new_key_pair()
    config = Config(redis_url=server.url, secret_key=secret_key, signing_key=signing_key)
    client = create_app(backend=Backend.from_config(config)).test_client()
    try:
        table = client.post("/v1/tables", json={"game": "five-card-draw"}).json
        server.stop()
        assert_store_unavailable(client.get(f"/v1/tables/{table['table_id']}"), "stopped")
        server.start()
        gone = client.get(f"/v1/tables/{table['table_id']}")
        assert gone.status_code == 404, gone.json
        published = redis.Redis.from_url(server.url)
        assert published.get(KEYS_KEY).decode() == config.keys().fingerprint
        other = Config(secret_key=new_key_pair()[0], signing_key=new_key_pair()[1]).keys()
        assert "CARDROOM_SECRET_KEY and CARDROOM_SIGNING_KEY" in keys_disagree(published, other)
    finally:
        server.stop()
    said = [r.getMessage() for r in caplog.records if "event store" in r.getMessage()]
    assert len(said) == 2 and said[1] == "the event store answers again", said


def test_the_api_client_gives_up_quickly_on_a_dead_or_hung_redis():
    """Short socket timeouts and one retry (a hung Redis must not hang a request for long;
    the retry takes a fresh connection when a restart left the pooled ones dead)."""
    client = Backend.from_config(Config(redis_url=f"redis://127.0.0.1:{free_port()}/0")).redis
    kwargs = client.connection_pool.connection_kwargs
    assert 0 < kwargs["socket_connect_timeout"] <= 5
    assert 0 < kwargs["socket_timeout"] <= 10
    assert kwargs["retry"].get_retries() == 1


@pytest.fixture
def busy_redis(tmp_path):
    """A redis-server of this test's own, stuck in an endless Lua script: every other
    command answers ``BUSY`` until the script is killed at teardown."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server binary")
    server = RedisServer(binary, tmp_path).start()
    admin = redis.Redis.from_url(server.url)
    admin.config_set("busy-reply-threshold", 10)  # milliseconds before others get BUSY
    spinner = threading.Thread(target=_spin, args=(server.url,), daemon=True)
    spinner.start()
    try:
        deadline = time.monotonic() + WAIT
        while not _busy(admin):
            assert time.monotonic() < deadline, "the endless script never made Redis busy"
            time.sleep(0.01)
        yield server.url
    finally:
        admin.script_kill()
        spinner.join(WAIT)
        server.stop()


def _spin(url: str) -> None:
    try:
        redis.Redis.from_url(url).eval("while true do end", 0)
    except redis.ResponseError:  # killed by SCRIPT KILL
        pass


def _busy(client: redis.Redis) -> bool:
    try:
        client.get("probe")
    except redis.ResponseError as error:
        return str(error).startswith("BUSY")
    return False


def test_a_busy_redis_gets_503_and_a_failed_script_call_counts_as_unavailable(busy_redis):
    app = create_app(backend=Backend.from_config(Config(redis_url=busy_redis)))
    check_every_route(app)
    # The event store's one Lua script, called on a busy Redis, fails the same way.
    store = EventStore(redis.Redis.from_url(busy_redis))
    with pytest.raises(redis.ResponseError) as refused:
        store.append([StreamWrite(table_stream("t1"), 0, [NewEvent("TableCreated", {})])],
                     actor="admin")
    assert store_unavailable(refused.value), refused.value


@pytest.mark.parametrize("error, unavailable", [
    (redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."), True),
    (redis.TimeoutError("Timeout reading from socket"), True),
    (redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"), True),
    (redis.exceptions.ReadOnlyError("You can't write against a read only replica."), True),
    (redis.ResponseError("MISCONF Redis is configured to save RDB snapshots, but ..."), True),
    (redis.ResponseError("BUSY Redis is busy running a script."), True),
    (redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
     False),
    (redis.ResponseError("ERR Error running script: attempt to compare nil with number"), False),
    (ValueError("a bug"), False),
])
def test_which_errors_mean_the_store_is_unavailable(error, unavailable):
    assert store_unavailable(error) is unavailable


@pytest.mark.parametrize("failure, traceback", [
    (redis.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused."), False),
    (RuntimeError("a bug"), True)])
def test_a_showdown_whose_enqueue_fails_is_still_owed_and_an_outage_logs_no_traceback(
        caplog, failure, traceback):
    """The job queue's Redis down (RQ_REDIS_URL apart): each hand brought to its showdown
    says so in one line, not a traceback; anything else keeps its traceback."""
    import fakeredis

    from domain.commands import Act
    from domain.views import Viewer
    from service.keys import Keys, new_key_pair
    from service.room import Cardroom

    def enqueue(table_id, hand_no):
        raise failure
    keys = Keys.from_hex(*new_key_pair())
    store = EventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), keys)
    room = Cardroom(store, keys, enqueue)
    table_id = room.create_table("five-card-draw", {}, None)["table_id"]
    for n in range(2):
        room.seat_player(table_id, f"p{n}", 1000, "", None)
    room.start_hand(table_id, None, None)
    while (awaiting := room.hand(table_id, 1).state.awaiting):  # checks and draws of nothing
        seat = awaiting[0]
        viewer = Viewer("player", seat, room.hand(table_id, 1).state.seat(seat).player_id)
        legal = {a["type"] for a in room.hand_view(table_id, 1, viewer)["legal_actions"]}
        kind = "draw" if "draw" in legal else "check"
        room.act(table_id, 1, viewer, Act(seat=seat, type=kind, amount=None, cards=()), None,
                 None)
    assert store.owed_jobs(table_id, 0) == ["showdown:1"]
    (said,) = [r for r in caplog.records if "enqueueing the showdown" in r.getMessage()]
    assert (said.exc_info is not None) is traceback
    assert ("unavailable" in said.getMessage()) is not traceback
