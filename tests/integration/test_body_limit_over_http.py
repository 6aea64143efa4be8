"""The request-body limit (64 KiB by default) against a real ``cardroom serve`` (gunicorn,
gthread) over a raw socket: a chunked body is read only up to the limit and refused with
413, and the process does not take the memory of the rest; a Content-Length over the limit
is refused at once, without waiting for the body; a body to a route that reads none is
refused, unless sent as JSON, and the connection serves on."""

from __future__ import annotations

import gzip
import json
import select
import socket
from pathlib import Path

MIB = 1024 * 1024
SOCKET_TIMEOUT = 20.0  # seconds; a bound on a stuck exchange, never asserted as a timing


def test_a_chunked_body_over_the_limit_gets_413_and_its_memory_is_not_kept(embedded_server):
    worker = gunicorn_worker(embedded_server.proc.pid)
    peak_before = peak_memory(worker)
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        sent = send_chunks(sock, [b'{"game": "five-card-draw"'] + [b" " * MIB] * 64 + [b"}"])
        status, headers, body = read_response(sock)
    assert status == 413, (status, body[:300], embedded_server.log())
    assert headers.get("content-type") == "application/problem+json", headers
    assert json.loads(body)["code"] == "payload_too_large", body
    grown = peak_memory(worker) - peak_before
    assert grown < 16 * MIB, (
        f"the server's peak memory grew by {grown // MIB} MiB on a refused body "
        f"({sent // MIB} MiB of it sent)")
    assert embedded_server.api.get("/healthz").status == 200  # and it serves on


def test_a_content_length_over_the_limit_is_refused_without_waiting_for_the_body(
        embedded_server):
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % (256 * MIB) + b'{"game": ')
        status, headers, body = read_response(sock)  # the other 256 MiB never come
        assert headers.get("connection") == "close", headers
        assert sock.recv(65536) == b"", "the server kept the connection open"
    assert status == 413, (status, body[:300])
    assert json.loads(body)["code"] == "payload_too_large", body


def test_a_body_awaiting_100_continue_is_invited_only_when_the_app_reads_it(embedded_server):
    """``Expect: 100-continue``: a body over the limit is refused at once, with no ``100
    Continue`` inviting it first; one the route reads is invited, then answered."""
    expect = b"POST /v1/tables HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" \
        b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n"
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(expect % (256 * MIB))
        status, headers, body = read_response(sock)
        assert (status, headers.get("connection")) == (413, "close"), (status, body[:300])
    body = b'{"game": "five-card-draw"}'
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(expect % len(body))
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        status, headers, answer = read_response(sock)
        assert status == 201 and json.loads(answer)["game"] == "five-card-draw", answer[:300]


def test_a_gzipped_chunked_body_gets_501_and_the_connection_is_closed(embedded_server):
    """gunicorn takes the chunks off and hands the app the gzip bytes: they are refused as
    a transfer coding the service does not take, not parsed as malformed JSON."""
    packed = gzip.compress(b'{"game": "five-card-draw"}')
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"POST /v1/tables HTTP/1.1\r\nHost: test\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Transfer-Encoding: gzip, chunked\r\n\r\n")
        send_chunks(sock, [packed])
        status, headers, body = read_response(sock)
        assert headers.get("connection") == "close", headers
    assert status == 501, (status, body[:300])
    problem = json.loads(body)
    assert problem["code"] == "unsupported_transfer_coding", problem
    assert "gzip, chunked" in problem["detail"], problem



def test_a_get_with_a_body_not_json_gets_415_and_the_connection_serves_on(embedded_server):
    with socket.create_connection(("127.0.0.1", embedded_server.port),
                                  timeout=SOCKET_TIMEOUT) as sock:
        sock.sendall(b"GET /v1/games HTTP/1.1\r\nHost: test\r\n"
                     b"Content-Type: text/plain\r\nContent-Length: 7\r\n\r\n"
                     b'limit=5')
        status, headers, body = read_response(sock)
        assert status == 415, (status, body[:300])
        assert json.loads(body)["code"] == "unsupported_media_type", body
        sock.sendall(b"GET /v1/games HTTP/1.1\r\nHost: test\r\n\r\n")
        status, headers, body = read_response(sock)
    assert status == 200, (status, body[:300])
    assert "games" in json.loads(body), body[:300]

def send_chunks(sock: socket.socket, pieces: list[bytes]) -> int:
    """Send each piece as one chunk, then the last chunk, until the server answers or
    closes; how many body bytes went out."""
    sent = 0
    for piece in [*pieces, b""]:
        if select.select([sock], [], [], 0)[0]:  # an answer (or a close) is waiting
            break
        try:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(piece)
    return sent


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers (lower-case names) and body of one HTTP/1.1 response."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(status_line.split()[1]), headers, body[:length]


def gunicorn_worker(arbiter_pid: int) -> int:
    """The one gunicorn worker process of an embedded ``cardroom serve``."""
    children = Path(f"/proc/{arbiter_pid}/task/{arbiter_pid}/children").read_text().split()
    assert len(children) == 1, f"expected one gunicorn worker, found {children}"
    return int(children[0])


def peak_memory(pid: int) -> int:
    """The peak resident set size of a process so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")
