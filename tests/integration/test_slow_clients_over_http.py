"""Clients that stop sending, against a real ``cardroom serve`` (gunicorn, gthread) over a
raw socket: a body cut short of its Content-Length is refused, not run as if whole; a
client silent mid-request for ``CARDROOM_CLIENT_SILENCE`` seconds is answered 408 (in its
body) or disconnected (in its headers), and its thread serves others again. After a body
cut off or malformed, the answer closes the connection."""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.integration.client import create_table
from tests.integration.conftest import Server
from tests.integration.test_body_limit_over_http import SOCKET_TIMEOUT, read_response
from tests.integration.test_live_stream import Stream

CREATE = (b"POST /v1/tables HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
          b"Content-Length: 100\r\n\r\n")


@pytest.fixture
def impatient_server(tmp_path):
    server = Server(tmp_path / "serve-impatient.log", None, CARDROOM_CLIENT_SILENCE="1")
    yield server
    server.stop()


def test_a_body_that_ends_before_its_content_length_is_refused(embedded_server):
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(CREATE + b'{"game": "five-card-draw"}')  # 25 of its 100 bytes
        sock.shutdown(socket.SHUT_WR)
        status, headers, body = read_response(sock)
        assert_closed(sock, headers)
    assert status == 400, (status, body[:300], embedded_server.log())
    assert headers.get("content-type") == "application/problem+json", headers
    assert json.loads(body)["code"] == "bad_request" and "Content-Length" in json.loads(
        body)["detail"], body


def test_a_client_silent_in_its_body_gets_408_and_the_thread_serves_on(impatient_server):
    with socket.create_connection(("127.0.0.1", impatient_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(CREATE + b'{"game": ')  # and nothing more
        status, headers, body = read_response(sock)
        assert_closed(sock, headers)  # the rest of the body would be taken for a request
    assert status == 408, (status, body[:300], impatient_server.log())
    assert json.loads(body)["code"] == "request_timeout", body
    assert impatient_server.api.get("/healthz").status == 200


def test_a_malformed_chunked_body_gets_400_and_the_connection_closes(embedded_server):
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\nContent-Type: application/json"
                     b"\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
        status, headers, body = read_response(sock)
        assert_closed(sock, headers)
    assert status == 400 and json.loads(body)["code"] == "bad_request", (status, body[:300])


def assert_closed(sock: socket.socket, headers: dict[str, str]) -> None:
    """The answer says the connection closes, and the server closes it."""
    assert headers.get("connection") == "close", headers
    assert sock.recv(65536) == b"", "the server kept the connection open"


def test_a_client_silent_in_its_headers_is_disconnected(impatient_server):
    with socket.create_connection(("127.0.0.1", impatient_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\n")  # and nothing more
        assert sock.recv(65536) == b"", "the server kept the connection of a silent client"
    assert impatient_server.api.get("/healthz").status == 200
    lines = [json.loads(line) for line in impatient_server.log().splitlines()
             if line.startswith("{")]
    assert any("went silent" in line["message"] for line in lines), impatient_server.log()
    assert not [line for line in lines if line["level"] == "ERROR"], impatient_server.log()


def test_an_event_stream_quiet_for_longer_than_the_bound_stays_open(tmp_path):
    """The bound is on a client's silence mid-request, not on a stream's quiet: one idle
    past it (no heartbeat due for an hour) still brings the next move."""
    server = Server(tmp_path / "serve.log", None, CARDROOM_CLIENT_SILENCE="0.5",
                    CARDROOM_SSE_HEARTBEAT="3600")
    try:
        table = create_table(server.api, 2)
        hand_no = table.start_hand()
        stream = Stream(server.url, table.hand_path(hand_no) + "/events/stream", table.admin)
        messages = stream.messages()
        assert next(messages)["event"] == "snapshot"
        time.sleep(2)  # four times the bound, with nothing to send
        seat = table.hand(hand_no)["to_act"]
        assert table.act(hand_no, seat, {"type": "fold"}).status == 201
        assert next(messages)["event"] == "event", server.log()
        stream.close()
    finally:
        server.stop()
