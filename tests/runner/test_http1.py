"""runner/http1.py: the HTTP/1.1 srb's launch speaks to the engine, against canned answers.

The peer is the other end of a real socket pair, fed byte for byte what an HTTP/1.1 server
would send (Content-Length, chunked, close-delimited, interim 100, errors); the request the
client wrote is read back and checked too. The engine itself is spoken to in test_wire.py.
"""

from __future__ import annotations

import io
import socket
import threading

import pytest

from srb_tui.runner.http1 import ProtocolError, exchange


def _serve(answer: bytes) -> tuple[socket.socket, list[bytes], threading.Thread]:
    client, server = socket.socketpair()
    client.settimeout(10)
    got: list[bytes] = []

    def peer() -> None:
        data = b""
        server.settimeout(10)
        while b"\r\n\r\n" not in data:
            data += server.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            body += server.recv(65536)
        got.append(head + b"\r\n\r\n" + body)
        server.sendall(answer)
        server.close()

    thread = threading.Thread(target=peer)
    thread.start()
    return client, got, thread


def _run(answer: bytes, method: str = "GET", body: bytes | io.BytesIO | None = None,
         headers: dict[str, str] | None = None) -> tuple[tuple[int, bytes], bytes]:
    client, got, thread = _serve(answer)
    try:
        result = exchange(client, method, "/v1.41/version", headers or {}, body)
    finally:
        client.close()
        thread.join(10)
    return result, got[0]


def test_content_length_body_and_the_request_written() -> None:
    (status, body), request = _run(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
        b'{"Version":1}', headers={"Connection": "close"})
    assert (status, body) == (200, b'{"Version":1}')
    assert request.startswith(b"GET /v1.41/version HTTP/1.1\r\n")
    assert b"\r\nConnection: close\r\n" in request and b"\r\nHost: docker\r\n" in request


def test_chunked_body_with_extensions_and_trailers() -> None:
    (status, body), _ = _run(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=x\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n")
    assert (status, body) == (200, b"hello, world")


def test_a_body_ended_by_the_connection_and_an_interim_continue() -> None:
    (status, body), _ = _run(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n\r\n"
                             b'{"Id":"abc"}')
    assert (status, body) == (201, b'{"Id":"abc"}')


def test_no_content_has_no_body_and_an_error_status_keeps_its_body() -> None:
    assert _run(b"HTTP/1.1 204 No Content\r\n\r\n", "POST")[0] == (204, b"")
    status, body = _run(b"HTTP/1.1 404 Not Found\r\nContent-Length: 24\r\n\r\n"
                        b'{"message":"no such id"}')[0]
    assert status == 404 and b"no such id" in body


def test_a_file_body_is_streamed_whole() -> None:
    payload = bytes(range(256)) * 1000  # several 64 KiB pieces
    (status, _), request = _run(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "PUT",
                                io.BytesIO(payload),
                                {"Content-Length": str(len(payload))})
    assert status == 200
    assert request.endswith(b"\r\n\r\n" + payload)


@pytest.mark.parametrize("answer, says", [
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "ended after 5 of 10 bytes"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length of -1"),
    (b"HTTP/1.1 200 OK\r\nContent-Le", "closed before the response ended"),
])
def test_an_answer_that_is_not_http_is_a_protocol_error(answer: bytes, says: str) -> None:
    with pytest.raises(ProtocolError, match=says):
        _run(answer)


def test_the_final_answers_headers_are_handed_back_in_lower_case() -> None:
    client, _, thread = _serve(
        b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nServer: Docker/20.10.24 (linux)\r\nApi-Version: 1.41\r\n"
        b"Content-Length: 2\r\n\r\nOK")
    answered: dict[str, str] = {}
    try:
        result = exchange(client, "GET", "/_ping", {}, answered=answered)
    finally:
        client.close()
        thread.join(10)
    assert result == (200, b"OK")
    assert answered == {"server": "Docker/20.10.24 (linux)", "api-version": "1.41",
                        "content-length": "2"}
