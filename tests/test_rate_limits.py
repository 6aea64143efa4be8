"""Rate limits (``CARDROOM_RATE_LIMIT``, ``CARDROOM_TABLE_RATE_LIMIT``) through the Flask test
client on embedded fakeredis (with Lua): N requests pass, the next gets 429 ``rate_limited``
with ``Retry-After``; tokens and addresses have buckets of their own, keyed by the token's
hash; a request with a token the service does not recognise counts against its address too,
and once that is refused the address's requests with tokens are refused in the process;
monitoring and documentation are never limited; with the limits off no Redis call is made.
Across real ``cardroom serve`` processes: tests/integration/test_rate_limits_over_http.py.
"""

from __future__ import annotations

import inspect
import secrets
import subprocess
import sys
from dataclasses import dataclass

import pytest
import redis
import yaml

from service.addresses import client_address
from service.app import create_app
from service.backend import Backend
from service.config import Config, Rate
from service.limits import Blocks
from service.room import hash_token
from tests.processes import ROOT, free_port, subprocess_env
from tests.test_openapi import SPEC_PATH, Contract

PHH = ROOT / "tests" / "data" / "phh" / "dwan-ivey-2009.phh"
HOST = "198.51.100.1"  # the address that creates the tables, so as to spend no one else's


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


def made_up() -> dict:
    """A token of no table, new each time: each has a fresh bucket of its own."""
    return bearer(secrets.token_urlsafe(32))


@dataclass
class Table:
    path: str
    admin: str
    auditor: str


def new_table(client) -> Table:
    """A table created from ``HOST``."""
    created = client.post("/v1/tables", json={"game": "five-card-draw"},
                          **from_address(HOST)).get_json()
    return Table(f"/v1/tables/{created['table_id']}", created["admin_token"],
                 created["auditor_token"])


class Clock:
    """A clock for ``Blocks`` that moves only when told."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


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


def test_a_rate_past_one_request_a_microsecond_lets_every_request_through(limited):
    client, _ = limited(general=Rate(999_999_999, 1))
    assert [client.get("/v1/games").status_code for _ in range(3)] == [200, 200, 200]


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
    table = new_table(client)
    for _ in range(2):
        assert client.get(table.path, headers=bearer(table.admin)).status_code == 200
    assert_rate_limited(client.get(table.path, headers=bearer(table.admin)))
    assert client.get(table.path, headers=bearer(table.auditor)).status_code == 200
    assert client.get("/v1/games").status_code == 200  # the address, without a token
    assert client.get("/v1/games", **from_address("192.0.2.7")).status_code == 200
    assert client.get("/v1/games").status_code == 200
    assert_rate_limited(client.get("/v1/games"))
    assert client.get("/v1/games", **from_address("192.0.2.7")).status_code == 200


def test_an_ipv6_client_counts_as_its_slash_64_and_a_mapped_ipv4_as_itself(limited):
    client, _ = limited(general=Rate(2, 60))
    for address in ("2001:db8:1:2::1", "2001:db8:1:2:ffff::9"):  # one /64, two hosts' worth
        assert client.get("/v1/games", **from_address(address)).status_code == 200
    assert_rate_limited(client.get("/v1/games", **from_address("2001:db8:1:2::abcd")))
    assert client.get("/v1/games", **from_address("2001:db8:1:3::1")).status_code == 200
    for _ in range(2):
        assert client.get("/v1/games", **from_address("192.0.2.9")).status_code == 200
    assert_rate_limited(client.get("/v1/games", **from_address("::ffff:192.0.2.9")))


@pytest.mark.parametrize("address, counted_as", [
    ("192.0.2.1", "192.0.2.1"), ("2001:db8::1", "2001:db8::/64"),
    ("2001:db8:0:0:ffff:1:2:3", "2001:db8::/64"), ("fe80::1%eth0", "fe80::/64"),
    ("::ffff:10.1.2.3", "10.1.2.3"), (None, "unknown"), ("not:an:address", "not:an:address"),
    ("192.0.2.1:4711", "192.0.2.1"), ("[2001:db8::1]:4711", "2001:db8::/64"),
    ("[2001:db8::1]", "2001:db8::/64"), ("[::ffff:10.1.2.3]:80", "10.1.2.3"),
    ("garbage", "garbage")])
def test_whom_an_address_counts_as(address, counted_as):
    assert client_address(address) == counted_as


def test_the_key_holds_the_tokens_hash_never_the_token(limited):
    client, backend = limited(general=Rate(5, 60))
    table = new_table(client)
    client.get(table.path, headers=bearer(table.admin))
    keys = [key.decode() for key in backend.redis.keys("cardroom:rate:*")]
    assert sorted(keys) == [f"cardroom:rate:address:{HOST}",
                            f"cardroom:rate:token:{hash_token(table.admin)}"]
    assert not any(table.admin in key for key in keys)
    assert all(backend.redis.pttl(key) > 0 for key in keys)  # gone once the bucket is full


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


def test_a_bucket_spent_under_a_slower_rate_waits_no_longer_than_the_new_rate_says(limited):
    """A restart from 1/86400 to 100/60 leaves a key a day ahead: the next request waits
    one interval of the new rate (0.6 s), not the day."""
    client, backend = limited(general=Rate(100, 60))
    key = f"cardroom:rate:address:{HOST}"
    seconds, micro = backend.redis.time()
    backend.redis.set(key, (seconds + 86_400) * 1_000_000 + micro)
    assert assert_rate_limited(client.get("/v1/games", **from_address(HOST))) == 1
    backend.redis.set(key, int(backend.redis.get(key)) - 600_000)  # as if 0.6 s went by
    assert client.get("/v1/games", **from_address(HOST)).status_code == 200


@pytest.mark.parametrize("path", ["/healthz", "/docs", "/openapi.yaml", "/openapi.json", "/",
                                  "/static/replay.css"])
def test_monitoring_and_documentation_are_never_limited(limited, path):
    client, _ = limited(general=Rate(1, 60))
    client.get("/v1/games")
    assert_rate_limited(client.get("/v1/games"))
    assert all(client.get(path).status_code in (200, 302) for _ in range(3))


def test_a_refusal_names_its_limit_in_words(limited):
    client, _ = limited(general=Rate(1, 1))
    client.get("/v1/games")
    response = client.get("/v1/games")
    assert_rate_limited(response)
    assert "of 1 request per 1 second;" in response.get_json()["detail"]


@pytest.mark.parametrize("path", ["/docs/", "/metrics/", "/healthz/", "/openapi.json//"])
def test_a_stray_slash_on_an_exempt_path_is_redirected_not_limited(limited, path):
    client, _ = limited(general=Rate(1, 60))
    client.get("/v1/games")
    assert_rate_limited(client.get("/v1/games"))
    response = client.get(path)
    assert response.status_code == 308
    assert response.headers["Location"] == "/" + path.strip("/")
    assert_rate_limited(client.get("/v1/games/"))  # a path of the API still counts


# --- tokens that are not valid here ----------------------------------------------


def spray(client, path: str, count: int, expect: int) -> None:
    """``count`` requests to ``path``, each with a made-up token, each answered ``expect``."""
    for number in range(count):
        response = client.get(path, headers=made_up())
        assert response.status_code == expect, (number, response.get_json())


def test_made_up_tokens_count_against_their_address(limited):
    client, _ = limited(general=Rate(3, 60))
    table = new_table(client)
    spray(client, table.path, 3, expect=403)  # forbidden: no access to this table
    refused = client.get(table.path, headers=made_up())
    assert 1 <= assert_rate_limited(refused) <= 20  # the interval, 60 s / 3
    problem = refused.get_json()
    assert problem["request_id"] == refused.headers["X-Request-Id"]
    assert problem["detail"].startswith("over this address's rate limit of 3 requests per 60 "
                                        "seconds, which counts requests with tokens that are "
                                        "not valid here"), problem
    assert_rate_limited(client.get(table.path, headers=made_up()))


@pytest.mark.parametrize("path", ["/v1/tables/no-such-table", "/v1/tables/no-such-table/hands/1",
                                  "/v1/no-such-route"])
def test_a_made_up_token_counts_against_its_address_wherever_it_is_sent(limited, path):
    client, _ = limited(general=Rate(3, 60))
    spray(client, path, 3, expect=404)
    assert_rate_limited(client.get(path, headers=made_up()))


def test_a_token_sent_where_none_is_read_counts_against_its_address_before_the_route(limited):
    """New made-up tokens on the catalog and on table creation, which read none, are limited
    as requests without a token are: the fourth is refused, not answered."""
    client, _ = limited(general=Rate(3, 60))
    spray(client, "/v1/games", 2, expect=200)
    created = client.post("/v1/tables", json={"game": "five-card-draw"}, headers=made_up())
    assert created.status_code == 201, created.get_json()
    refused = client.get("/v1/games", headers=bearer(created.get_json()["admin_token"]))
    assert_rate_limited(refused)
    assert refused.get_json()["detail"].startswith("over this address's rate limit"), (
        refused.get_json())
    assert client.get("/v1/games", **from_address("192.0.2.7")).status_code == 200


def test_the_routes_marked_as_reading_tokens_are_those_that_check_one(limited):
    client, _ = limited(general=Rate(3, 60))
    for endpoint, view in client.application.view_functions.items():
        checks = "require(" in inspect.getsource(view)
        assert getattr(view, "takes_token", False) == checks, endpoint


def test_an_answer_that_did_its_work_stands_and_the_block_starts_after_it(limited):
    """An import without ``table_id`` reads no token but may have one (the admin's, with
    ``table_id``): a made-up token counts against the address once the import is done, so
    the import that finds the address's bucket empty keeps its table."""
    client, _ = limited(general=Rate(3, 60))
    document = {"phh": PHH.read_text()}
    for number in range(4):
        imported = client.post("/v1/imports/phh", json=document, headers=made_up())
        assert imported.status_code == 201, (number, imported.get_json())
    assert_rate_limited(client.post("/v1/imports/phh", json=document, headers=made_up()))


def test_then_the_address_is_refused_with_any_token_and_other_addresses_are_not(limited):
    client, _ = limited(general=Rate(3, 60))
    table = new_table(client)
    spray(client, table.path, 3, expect=403)
    assert_rate_limited(client.get(table.path, headers=made_up()))
    valid = client.get(table.path, headers=bearer(table.auditor))
    assert_rate_limited(valid)  # a valid token from this address too, until the block ends
    assert "not valid here" in valid.get_json()["detail"]
    other = client.get(table.path, headers=made_up(), **from_address("192.0.2.7"))
    assert other.status_code == 403, other.get_json()
    assert client.get(table.path, headers=bearer(table.auditor),
                      **from_address("192.0.2.7")).status_code == 200
    for path in ("/healthz", "/openapi.yaml", "/static/replay.css"):
        assert client.get(path, headers=made_up()).status_code == 200


def test_valid_tokens_never_count_against_their_address(limited, monkeypatch):
    """The address's allowance of 3 is spent by the made-up tokens, not by the valid one,
    and a request with a valid token makes one script call (its own bucket's), as ever."""
    client, backend = limited(general=Rate(3, 60))
    table = new_table(client)
    keys = []  # of every script call on a rate bucket (the store calls scripts of its own)
    execute = backend.redis.execute_command

    def counting(*command, **options):
        if command[0] == "EVALSHA" and command[2] and str(command[3]).startswith("cardroom:rate:"):
            keys.append(command[3])
        return execute(*command, **options)
    monkeypatch.setattr(backend.redis, "execute_command", counting)
    for _ in range(3):
        assert client.get(table.path, headers=bearer(table.admin)).status_code == 200
    assert keys == [f"cardroom:rate:token:{hash_token(table.admin)}"] * 3
    refused = client.get(table.path, headers=bearer(table.admin))
    assert_rate_limited(refused)
    assert refused.get_json()["detail"].startswith("over this token's rate limit")
    spray(client, table.path, 3, expect=403)
    assert_rate_limited(client.get("/v1/games"))  # without a token: the address's bucket


def test_the_block_ends_when_the_bucket_lets_the_next_request_in(limited):
    client, _ = limited(general=Rate(3, 60))
    clock = Clock()
    client.application.extensions["limiter"].blocks.clock = clock
    table = new_table(client)
    spray(client, table.path, 3, expect=403)
    retry_after = assert_rate_limited(client.get(table.path, headers=made_up()))
    clock.now = retry_after - 1
    assert_rate_limited(client.get(table.path, headers=bearer(table.auditor)))
    clock.now = retry_after
    assert client.get(table.path, headers=bearer(table.auditor)).status_code == 200


def test_blocks_are_bounded_and_forget_the_expired():
    clock = Clock()
    blocks = Blocks(clock, size=2)
    blocks.add("192.0.2.1", 10)
    blocks.add("192.0.2.2", 30)
    blocks.add("192.0.2.3", 30)  # past the size: the oldest goes
    assert [blocks.seconds_left(a) for a in ("192.0.2.1", "192.0.2.2", "192.0.2.3")] == [
        0, 30, 30]
    clock.now = 30
    blocks.add("192.0.2.4", 5)  # the expired go as another comes
    assert blocks._until == {"192.0.2.4": 35}


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


def test_an_options_of_the_tables_path_spends_no_table_creation(limited):
    client, _ = limited(tables=Rate(1, 3600))
    assert [client.options("/v1/tables").status_code for _ in range(3)] == [204] * 3
    assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201


def test_without_a_table_limit_table_creation_counts_against_the_general_one(limited):
    client, _ = limited(general=Rate(2, 60))
    assert client.get("/v1/games").status_code == 200
    assert client.post("/v1/tables", json={"game": "five-card-draw"}).status_code == 201
    assert_rate_limited(client.post("/v1/tables", json={"game": "five-card-draw"}))


def test_an_import_that_makes_a_table_counts_against_the_table_limit(limited):
    client, _ = limited(tables=Rate(1, 3600))
    document = {"phh": PHH.read_text()}
    imported = client.post("/v1/imports/phh", json=document)
    assert imported.status_code == 201
    assert_rate_limited(client.post("/v1/imports/phh", json=document))
    assert_rate_limited(client.post("/v1/tables", json={"game": "five-card-draw"}))
    admin = bearer(imported.get_json()["admin_token"])  # a hand imported at its table makes none
    again = client.post("/v1/imports/phh", json=document | {"table_id": imported.get_json()[
        "table_id"]}, headers=admin)
    assert again.status_code == 201, again.get_json()


@pytest.mark.parametrize("proxies, answers", [(0, (201, 429, 429)), (1, (201, 201, 429)),
                                               (2, (201, 429, 201))])
def test_behind_trusted_proxies_a_client_is_known_by_the_address_they_forwarded(proxies,
                                                                                answers):
    """``CARDROOM_TRUSTED_PROXIES=N``: the client is the N-th address from the end of
    X-Forwarded-For (what the outermost of N proxies added), the peer with fewer; what
    a client wrote there itself is never taken."""
    backend = Backend.from_config(Config(table_rate_limit=Rate(1, 3600),
                                         trusted_proxies=proxies))
    try:
        client = create_app(backend=backend).test_client()
        forwarded = ("203.0.113.9, 192.0.2.1", "203.0.113.9, 198.51.100.7", "192.0.2.1")
        assert tuple(client.post("/v1/tables", json={"game": "five-card-draw"},
                                 headers={"X-Forwarded-For": each},
                                 **from_address("10.0.0.2")).status_code
                     for each in forwarded) == answers
    finally:
        backend.stop_worker_thread()


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
    contract = Contract(client, yaml.safe_load(SPEC_PATH.read_text()))
    for template in ("/v1/games", "/v1/fairness", "/replay/{table_id}/{hand_no}"):
        contract.call("GET", template, path={"table_id": "t", "hand_no": 1}, expect=503)
