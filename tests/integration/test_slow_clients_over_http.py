"""Clients that stop sending, against a real ``cardroom serve`` (gunicorn, gthread) over a
raw socket: a body cut short of its Content-Length is refused, not run as if whole; a
client silent mid-request for ``CARDROOM_CLIENT_SILENCE`` seconds is answered 408 (in its
body) or disconnected (in its headers), and its thread serves others again. After a body
cut off or malformed, the answer closes the connection. One address holds at most
``CARDROOM_MAX_REQUESTS_PER_ADDRESS`` threads of a process, and clients that keep sending
after their answer do not hold the process's other connections."""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
from contextlib import ExitStack

import pytest

from tests.integration.client import create_table
from tests.integration.conftest import Server
from tests.integration.test_body_limit_over_http import SOCKET_TIMEOUT, read_response
from tests.integration.test_live_stream import Stream

CREATE = (b"POST /v1/tables HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
          b"Content-Length: 100\r\n\r\n")


OTHER_ADDRESS = ("127.0.0.2", 0)  # another client on loopback
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"


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
    assert any("went silent" in line["message"] and line["remote_addr"] == "127.0.0.1"
               for line in lines), impatient_server.log()
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


def test_past_its_bound_an_address_is_refused_at_once_and_other_addresses_are_served(tmp_path):
    server = Server(tmp_path / "serve.log", None, CARDROOM_MAX_REQUESTS_PER_ADDRESS="2")
    try:
        with ExitStack() as held:
            for _ in range(2):  # two bodies begun and never finished: two threads held
                held.enter_context(body_begun(server.port))
            status, headers, body = first_answer(server.port, lambda s: s == 429)
            assert status == 429, (status, body[:300], server.log())
            problem = json.loads(body)
            assert problem["code"] == "too_many_requests_from_address", problem
            assert headers["content-type"] == "application/problem+json", headers
            assert headers["retry-after"] == "1" and problem["request_id"] == headers[
                "x-request-id"], headers
            assert healthz_from(OTHER_ADDRESS, server.port) == 200
        status, _, body = first_answer(server.port, lambda s: s != 429)  # both let go
        assert status == 200, (status, body[:300], server.log())
        for _ in range(50):  # until both are answered: a probe's may count for up to 2 s
            with ExitStack() as held:  # answered and closed by the server, not by the client
                answers = []
                for _ in range(2):
                    sock = held.enter_context(socket.create_connection(
                        ("127.0.0.1", server.port), timeout=SOCKET_TIMEOUT))
                    sock.sendall(HEALTHZ.replace(b"\r\n\r\n",
                                                 b"\r\nConnection: close\r\n\r\n"))
                    answers.append(read_response(sock)[0])
                if answers == [200, 200]:
                    # the server waits up to 2 s for each client to close its end: a thread each
                    assert first_answer(server.port, lambda s: True)[0] == 429, server.log()
                    break
            time.sleep(0.1)
        else:
            raise AssertionError(f"two connections were never both answered: {server.log()}")
    finally:
        server.stop()


def body_begun(port: int, attempts: int = 50) -> socket.socket:
    """A connection whose request body never ends, a thread of the server held by it: made
    again while the server refuses it at once (the readiness check's connection, answered,
    counts against the address until the server has closed it, up to 2 s)."""
    for _ in range(attempts):
        sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)
        sock.sendall(CREATE + b'{"game": ')
        if not select.select([sock], [], [], 0.5)[0]:  # no answer: the server holds it
            return sock
        sock.close()
        time.sleep(0.05)
    raise AssertionError("the server refused every connection")


def first_answer(port: int, wanted, attempts: int = 100) -> tuple[int, dict[str, str], bytes]:
    """The first answer to ``GET /healthz`` from 127.0.0.1 whose status is ``wanted``, or the
    last one: the server lets a thread go (or counts one taken) just after a socket's end."""
    for _ in range(attempts):
        with socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT) as sock:
            sock.sendall(HEALTHZ)
            answer = read_response(sock)
        if wanted(answer[0]):
            break
        time.sleep(0.05)
    return answer


def healthz_from(source: tuple[str, int], port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=SOCKET_TIMEOUT,
                                            source_address=source)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    finally:
        connection.close()


def test_clients_that_keep_sending_after_their_answer_hold_no_other_connection(embedded_server):
    """Sixteen malformed requests, each answered 400 and closed, whose clients go on sending
    a byte now and then: gunicorn's own close waited up to 2 s for each to stop, one after
    the other on the thread that accepts connections (the next client, accepted after them,
    then waited 32 s: past the socket timeout here, and past gunicorn's liveness check
    with more of them)."""
    stop = threading.Event()
    with ExitStack() as held:
        socks = [held.enter_context(socket.create_connection(
            ("127.0.0.1", embedded_server.port), timeout=SOCKET_TIMEOUT)) for _ in range(16)]
        for sock in socks:
            sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\nContent-Type: "
                         b"application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")

        def trickle():
            while not stop.wait(0.2):
                for sock in socks:
                    try:
                        sock.sendall(b"x")
                    except OSError:  # closed by the server since
                        pass
        threading.Thread(target=trickle, daemon=True).start()
        try:
            assert healthz_from(OTHER_ADDRESS, embedded_server.port) == 200
            assert [read_response(sock)[0] for sock in socks] == [400] * 16
        finally:
            stop.set()
