"""Rate limits (``CARDROOM_RATE_LIMIT``, ``CARDROOM_TABLE_RATE_LIMIT``) through the Flask test
client on embedded fakeredis (with Lua): N requests pass, the next gets 429 ``rate_limited``
with ``Retry-After``; tokens and addresses have buckets of their own, keyed by the token's
hash; monitoring and documentation are never limited; with the limits off no Redis call is
made. Across real ``cardroom serve`` processes: tests/integration/test_rate_limits_over_http.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import redis
import yaml

from service.app import create_app
from service.backend import Backend
from service.config import Config, Rate
from service.room import hash_token
from tests.processes import ROOT, free_port, subprocess_env
from tests.test_openapi import SPEC_PATH, Contract

TOKEN = "a-token-of-no-table"


@pytest.fixture
def limited():
    """Factory: ``limited(general, tables)`` -> (test client, backend) with those limits."""
    backends = []

    def make(general: Rate | None = None, tables: Rate | None = None):
        backend = Backend.from_config(Config(rate_limit=general, table_rate_limit=tables))
        backends.append(backend)
        return create_app(backend=backend).test_client(), backend
    yield make
    for backend in backends:
        backend.stop_worker_thread()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def from_address(address: str) -> dict:
    return {"environ_overrides": {"REMOTE_ADDR": address}}


def assert_rate_limited(response) -> int:
    """The response is a 429 ``rate_limited`` problem; its Retry-After in seconds."""
    assert response.status_code == 429, (response.status_code, response.get_data(as_text=True))
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "rate_limited"
    retry_after = int(response.headers["Retry-After"])
    assert retry_after >= 1
    return retry_after


# --- the settings --------------------------------------------------------------


def test_rates_are_read_from_the_environment_and_off_when_unset():
    config = Config.from_env({"CARDROOM_RATE_LIMIT": "100/60",
                              "CARDROOM_TABLE_RATE_LIMIT": " 5 / 3600 "})
    assert (config.rate_limit, config.table_rate_limit) == (Rate(100, 60), Rate(5, 3600))
    unset = Config.from_env({"CARDROOM_RATE_LIMIT": ""})
    assert (unset.rate_limit, unset.table_rate_limit) == (None, None)


@pytest.mark.parametrize("value", ["100", "abc", "0/60", "10/0", "-1/60", "1.5/60", "10/60s",
                                   "10 per 60"])
@pytest.mark.parametrize("name", ["CARDROOM_RATE_LIMIT", "CARDROOM_TABLE_RATE_LIMIT"])
def test_a_malformed_rate_is_refused_with_its_name(name, value):
    with pytest.raises(ValueError, match=name):
        Config.from_env({name: value})


def test_cardroom_serve_refuses_to_start_with_a_malformed_rate_limit():
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(free_port())],
        cwd=ROOT, env=subprocess_env(CARDROOM_RATE_LIMIT="lots"), capture_output=True,
        text=True, timeout=60)
    assert done.returncode == 2, done
    assert "CARDROOM_RATE_LIMIT must be N/S" in done.stderr, done.stderr


# --- the general limit ---------------------------------------------------------


def test_n_requests_pass_and_the_next_gets_429_with_retry_after_from_the_window(limited):
    client, _ = limited(general=Rate(2, 7200))  # a bucket of 2, one more every hour
    assert [client.get("/v1/games").status_code for _ in range(2)] == [200, 200]
    retry_after = assert_rate_limited(client.get("/v1/games"))
    assert 3590 <= retry_after <= 3600  # the interval (S/N), not the period or a constant
    assert_rate_limited(client.get("/v1/games"))  # a refused request does not reset it


def test_the_429_answers_as_the_spec_says(limited):
    client, _ = limited(general=Rate(1, 60))
    contract = Contract(client, yaml.safe_load(SPEC_PATH.read_text()))
    contract.call("GET", "/v1/games", expect=200)
    contract.call("GET", "/v1/games", expect=429)
    contract.call("POST", "/v1/tables", json={"game": "five-card-draw"}, expect=429)


def test_a_refused_request_does_nothing(limited):
    client, backend = limited(general=Rate(1, 60))
    client.get("/v1/games")
    keys = set(backend.redis.keys("*"))
    assert_rate_limited(client.post("/v1/tables", json={"game": "five-card-draw"}))
    assert set(backend.redis.keys("*")) == keys  # no table


def test_each_token_and_each_address_has_a_bucket_of_its_own(limited):
    client, _ = limited(general=Rate(2, 60))
    for _ in range(2):
        assert client.get("/v1/games", headers=bearer(TOKEN)).status_code == 200
    assert_rate_limited(client.get("/v1/games", headers=bearer(TOKEN)))
    assert client.get("/v1/games", headers=bearer("another-token")).status_code == 200
    assert client.get("/v1/games").status_code == 200  # the address, without a token
    assert client.get("/v1/games", **from_address("192.0.2.7")).status_code == 200
    assert client.get("/v1/games").status_code == 200
    assert_rate_limited(client.get("/v1/games"))
    assert client.get("/v1/games", **from_address("192.0.2.7")).status_code == 200


def test_the_key_holds_the_tokens_hash_never_the_token(limited):
    client, backend = limited(general=Rate(5, 60))
    client.get("/v1/games", headers=bearer(TOKEN))
    keys = [key.decode() for key in backend.redis.keys("*")]
    assert keys == [f"cardroom:rate:token:{hash_token(TOKEN)}"]
    assert not any(TOKEN in key for key in keys)
    assert backend.redis.pttl(keys[0]) > 0  # it expires once the bucket is full again


def test_one_request_passes_again_once_its_interval_has_passed(limited):
    """The stored time the bucket is full again, moved back by one interval (S/N = 30 s), as
    if 30 seconds went by: exactly one more request passes."""
    client, backend = limited(general=Rate(2, 60))
    for _ in range(2):
        client.get("/v1/games")
    assert_rate_limited(client.get("/v1/games"))
    (key,) = backend.redis.keys("cardroom:rate:*")
    backend.redis.set(key, int(backend.redis.get(key)) - 30_000_000)
    assert client.get("/v1/games").status_code == 200
    assert_rate_limited(client.get("/v1/games"))


@pytest.mark.parametrize("path", ["/healthz", "/docs", "/openapi.yaml", "/openapi.json", "/",
                                  "/static/replay.css"])
def test_monitoring_and_documentation_are_never_limited(limited, path):
    client, _ = limited(general=Rate(1, 60))
    client.get("/v1/games")
    assert_rate_limited(client.get("/v1/games"))
    assert all(client.get(path).status_code in (200, 302) for _ in range(3))


# --- table creation --------------------------------------------------------------


def test_table_creation_has_a_limit_of_its_own_per_address(limited):
    client, _ = limited(general=Rate(100, 60), tables=Rate(2, 3600))
    table = {"game": "five-card-draw"}
    assert [client.post("/v1/tables", json=table).status_code for _ in range(2)] == [201, 201]
    assert 1790 <= assert_rate_limited(client.post("/v1/tables", json=table)) <= 1800
    assert client.post("/v1/tables", json=table, **from_address("192.0.2.7")).status_code == 201
    assert client.get("/v1/games").status_code == 200  # other requests are not held back


def test_table_creation_alone_can_be_limited(limited):
    client, backend = limited(tables=Rate(1, 60))
    assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201
    assert_rate_limited(client.post("/v1/tables", json={"game": "five-card-draw"}))
    assert [client.get("/v1/games").status_code for _ in range(5)] == [200] * 5
    assert [key.decode() for key in backend.redis.keys("cardroom:rate:*")] == [
        "cardroom:rate:tables:127.0.0.1"]


def test_without_a_table_limit_table_creation_counts_against_the_general_one(limited):
    client, _ = limited(general=Rate(2, 60))
    assert client.get("/v1/games").status_code == 200
    assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201
    assert_rate_limited(client.post("/v1/tables", json={"game": "five-card-draw"}))


# --- Redis -------------------------------------------------------------------------


def unreachable(*args, **kwargs):
    raise redis.exceptions.ConnectionError("Redis is down")


def test_with_the_limits_off_a_request_makes_no_redis_call(limited, monkeypatch):
    client, backend = limited()
    monkeypatch.setattr(backend.redis, "execute_command", unreachable)
    monkeypatch.setattr(backend.redis, "evalsha", unreachable)
    assert client.get("/v1/games").status_code == 200  # the catalog needs no store


def test_with_redis_unavailable_a_limited_request_gets_503(limited, monkeypatch):
    client, backend = limited(general=Rate(10, 60))
    monkeypatch.setattr(backend.redis, "execute_command", unreachable)
    monkeypatch.setattr(backend.redis, "evalsha", unreachable)
    response = client.get("/v1/games")
    assert response.status_code == 503, response.get_json()
    assert response.get_json()["code"] == "store_unavailable"
    assert response.headers["Retry-After"]
