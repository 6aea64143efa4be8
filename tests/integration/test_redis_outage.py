"""Redis goes away under a running service and comes back.

A real ``cardroom serve`` (2 gunicorn processes) and a real ``cardroom worker`` run on a
``redis-server`` this test starts, stops and starts again on the same port (append-only
file, fsynced at every write, so what Redis acknowledged survives). While Redis is down,
every route that needs it answers 503 ``store_unavailable`` with Retry-After (never 500)
and the worker waits; once Redis is back the service answers again, every event
acknowledged before the outage is still there, and the same worker process settles a
showdown. The worker logs the outage once, not at every retry.
"""

from __future__ import annotations

import random
import time

import pytest
import redis
from rq.job import Job, JobStatus

from service.app import create_app
from service.config import Config
from tests.processes import RedisServer, logged, redis_binary
from tests.test_store_unavailable import BODIES, store_routes

from .client import choose_action, create_table
from .conftest import Server, worker_logs

pytestmark = pytest.mark.redis
WAIT = 30.0  # bound on anything asynchronous; never asserted as a timing
RQ_RETRY_LINE = "could not connect to Redis instance"  # what RQ logs at every retry


@pytest.fixture
def own_redis(tmp_path):
    workdir = tmp_path / "redis"
    workdir.mkdir()
    server = RedisServer(redis_binary(), workdir, persistent=True).start()
    yield server
    server.stop()


@pytest.fixture
def service(own_redis, tmp_path):
    server = Server(tmp_path / "serve.log", own_redis.url, workers=2)
    yield server
    server.stop()


def test_the_service_answers_503_while_redis_is_down_and_recovers_without_losing_events(
        own_redis, service, worker_process):
    # The worker holds each showdown job 2 s (a test hook) so Redis can go away under one.
    (worker,) = worker_process(own_redis.url, CARDROOM_OWED_JOB_AFTER="1",
                               CARDROOM_TEST_SHOWDOWN_PAUSE="2")
    api, rng, redis_client = service.api, random.Random(7), redis.Redis.from_url(own_redis.url)

    def diagnostics() -> str:
        return worker_logs([worker]) + "\n" + service.log()

    wait_until(lambda: "Listening on" in worker_log(worker), "the worker listening", diagnostics)
    table = create_table(api, 2, buy_in=1000)
    hand_no = table.start_hand()
    assert len(play(table, hand_no, rng)) >= 4  # every move acknowledged (201)
    assert table.hand(hand_no)["status"] == "showdown_pending"
    job_id = f"showdown-{table.table_id}-{hand_no}"
    wait_until(lambda: job_status(redis_client, job_id) == JobStatus.STARTED,
               "the showdown job taken by the worker", diagnostics)
    before, table_before = table.history(hand_no)["events"], table.read()

    own_redis.stop()  # under the paused showdown job
    for method, path, endpoint in http_routes(table, hand_no):
        response = api.request(method, path, json_body=BODIES.get(endpoint, {}),
                               token=table.admin, headers={"Idempotency-Key": "outage-1"})
        assert response.status == 503, f"{method} {path}: {response!r}"
        assert response.content_type == "application/problem+json", f"{method} {path}"
        assert response.json["code"] == "store_unavailable", f"{method} {path}: {response!r}"
        retry_after = response.headers.get("retry-after", "")
        assert retry_after.isdigit() and 1 <= int(retry_after) <= 30, (path, retry_after)
    assert api.get("/v1/games").status == 200  # what needs no store still answers
    # Its job cannot write: RQ gives up on that worker, and cardroom waits to start another.
    wait_until(lambda: ("another starts once Redis answers" in worker_log(worker)
                        or worker.poll() is not None), "the job failed", diagnostics)
    assert worker.poll() is None, "the worker exited when Redis went away\n" + diagnostics()

    own_redis.start()
    wait_until(lambda: api.get("/healthz").status == 200, "/healthz answering 200 again",
               diagnostics)
    assert table.read() == table_before
    assert table.history(hand_no)["events"] == before, "events acknowledged before the outage"

    # The showdown whose job died with Redis is still owed: the sweeper enqueues it again and
    # the same worker process settles it. Then a whole new hand goes the ordinary way.
    table.wait_hand(hand_no, lambda h: h["status"] == "ended", "settled after the outage",
                    timeout=WAIT, diagnostics=diagnostics)
    assert table.audit(hand_no)["valid"] is True
    next_hand = table.start_hand()
    play(table, next_hand, rng)
    table.wait_hand(next_hand, lambda h: h["status"] == "ended", "the next hand settled",
                    timeout=WAIT, diagnostics=diagnostics)
    assert worker.poll() is None, "the worker died\n" + diagnostics()

    log = worker_log(worker)
    assert RQ_RETRY_LINE not in log, "the worker logged every retry\n" + log
    assert "Traceback" not in log, log
    said = logged(log, "cardroom.worker")
    began = sum(m.startswith("the event store is unavailable") for m in said)
    assert began == sum(m.startswith("the event store answers again") for m in said) == 1, log


def job_status(client: redis.Redis, job_id: str):
    try:
        return Job.fetch(job_id, connection=client).get_status()
    except Exception:  # not there (yet), or Redis away
        return None


def play(table, hand_no: int, rng: random.Random) -> list[dict]:
    """Random moves (nobody folds), each acknowledged, until the hand awaits its showdown."""
    answers = []
    while True:
        view = table.hand(hand_no)
        if view["status"] not in ("betting", "drawing"):
            break
        seat = view["to_act"]
        me = table.hand(hand_no, table.tokens[seat])
        move = choose_action(rng, me, seat, allow_fold=False)
        response = table.act(hand_no, seat, {**move, "expected_version": me["version"]})
        assert response.status == 201, response
        answers.append(response.json)
        assert len(answers) < 200, "no showdown after 200 moves"
    return answers


def http_routes(table, hand_no: int):
    """(method, path, endpoint) of every route that needs the store, for this table."""
    return store_routes(create_app(Config()), table.table_id, hand_no, min(table.tokens))


def worker_log(proc) -> str:
    return proc.log_path.read_text(errors="replace")


def wait_until(predicate, what: str, diagnostics) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} after {WAIT:.0f} s\n{diagnostics()}")
        time.sleep(0.1)
