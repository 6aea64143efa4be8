"""A request body over ``Config.max_body_bytes`` (CARDROOM_MAX_BODY_BYTES, default 64 KiB)
gets 413 ``payload_too_large`` before it is parsed or anything is stored; a chunked body
is read only up to the limit. Through the Flask test client on embedded fakeredis (the
same over a real socket against ``cardroom serve``: tests/integration/test_body_limit.py)."""

from __future__ import annotations

import io

import pytest

from service.app import create_app
from service.backend import Backend
from service.config import Config

LIMIT = 65536


def table_body(size: int) -> bytes:
    """A valid create-table body of exactly ``size`` bytes (padded with spaces)."""
    head, tail = b'{"game": "five-card-draw"', b"}"
    return head + b" " * (size - len(head) - len(tail)) + tail


class Upload(io.RawIOBase):
    """A request body of ``size`` bytes that counts how many of them the server read."""

    def __init__(self, data: bytes):
        self.data, self.consumed = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self.data[self.consumed:self.consumed + len(buffer)]
        buffer[:len(chunk)] = chunk
        self.consumed += len(chunk)
        return len(chunk)


def chunked_post(client, path: str, upload: Upload):
    """POST ``upload`` as gunicorn hands a chunked body to the app: no Content-Length, a
    stream the server ends itself (``wsgi.input_terminated``)."""
    return client.post(path, content_type="application/json",
                       headers={"Transfer-Encoding": "chunked"},
                       environ_overrides={"wsgi.input": upload, "wsgi.input_terminated": True})


def assert_too_large(response, limit: int = LIMIT) -> None:
    assert response.status_code == 413, (response.status_code, response.get_json())
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["code"] == "payload_too_large" and problem["status"] == 413, problem
    assert problem["max_body_bytes"] == limit, problem


def test_a_body_one_byte_over_the_limit_gets_413_and_stores_nothing(client, fake_backend):
    assert_too_large(client.post("/v1/tables", data=table_body(LIMIT + 1),
                                 content_type="application/json"))
    assert fake_backend.redis.dbsize() == 0


def test_a_body_of_exactly_the_limit_is_taken(client):
    response = client.post("/v1/tables", data=table_body(LIMIT), content_type="application/json")
    assert response.status_code == 201, response.get_json()


def test_a_large_body_is_refused_before_the_route_reads_the_store_or_checks_the_token(client):
    """An action (a route that loads the table and checks the token first) of 256 KiB."""
    response = client.post("/v1/tables/no-such-table/hands/1/actions",
                           data=b"[" + b" " * 256 * 1024 + b"]", content_type="application/json")
    assert_too_large(response)


def test_a_chunked_body_over_the_limit_is_read_only_up_to_it(client, fake_backend):
    upload = Upload(table_body(8 * 1024 * 1024))
    assert_too_large(chunked_post(client, "/v1/tables", upload))
    assert upload.consumed <= LIMIT + 1, f"the server read {upload.consumed} bytes"
    assert fake_backend.redis.dbsize() == 0


def test_a_chunked_body_within_the_limit_is_taken(client):
    upload = Upload(table_body(LIMIT))
    response = chunked_post(client, "/v1/tables", upload)
    assert response.status_code == 201, response.get_json()
    assert upload.consumed == LIMIT


def test_the_limit_comes_from_config():
    assert Config().max_body_bytes == LIMIT
    config = Config.from_env({"CARDROOM_MAX_BODY_BYTES": "100"})
    assert config.max_body_bytes == 100
    client = create_app(backend=Backend.from_config(config)).test_client()
    assert_too_large(client.post("/v1/tables", data=table_body(101),
                                 content_type="application/json"), limit=100)
    assert client.post("/v1/tables", data=table_body(100),
                       content_type="application/json").status_code == 201


@pytest.mark.parametrize("raw", ["64k", "-1"])
def test_a_bad_limit_is_refused(raw):
    with pytest.raises(ValueError, match="CARDROOM_MAX_BODY_BYTES"):
        Config.from_env({"CARDROOM_MAX_BODY_BYTES": raw})
