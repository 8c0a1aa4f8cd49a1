"""One HTTP/1.1 request and its response over a connected socket: what :mod:`.wire` needs.

The launch's calls to the engine are five small requests on a fresh connection each
(``Connection: close``). :mod:`http.client` would do, but importing it loads the
``email`` package for header parsing, which cost ``srb run`` more start-up time than all
five calls take; this module is the little of HTTP/1.1 those calls use: a request with an
optional body (bytes, or a file streamed in 64 KiB pieces), a status line, headers, and a
body framed by ``Content-Length``, ``Transfer-Encoding: chunked`` or the end of the
connection. Anything else the engine sends back is :class:`ProtocolError`.
"""

from __future__ import annotations

import socket
from typing import IO

CHUNK = 64 * 1024
MAX_LINE = 64 * 1024
MAX_HEADERS = 200
MAX_BODY = 256 * 1024 * 1024  # the engine's answers to a launch are JSON of a few kB


class ProtocolError(OSError):
    """The peer's answer is not the HTTP/1.1 this client reads."""


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self._file = sock.makefile("rb")

    def line(self) -> bytes:
        raw = self._file.readline(MAX_LINE + 1)
        if len(raw) > MAX_LINE:
            raise ProtocolError("a header line longer than 64 KiB")
        if not raw.endswith(b"\n"):
            raise ProtocolError("the connection closed before the response ended")
        return raw.rstrip(b"\r\n")

    def exactly(self, size: int) -> bytes:
        data = self._file.read(size)
        if len(data) != size:
            raise ProtocolError(f"the body ended after {len(data)} of {size} bytes")
        return data

    def rest(self) -> bytes:
        data = self._file.read(MAX_BODY + 1)
        if len(data) > MAX_BODY:
            raise ProtocolError("a response body over 256 MiB")
        return data

    def close(self) -> None:
        self._file.close()


def _send(sock: socket.socket, head: bytes, body: bytes | IO[bytes] | None) -> None:
    if isinstance(body, bytes):
        sock.sendall(head + body)
        return
    sock.sendall(head)
    if body is not None:
        while piece := body.read(CHUNK):
            sock.sendall(piece)


def _headers(reader: _Reader) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS):
        line = reader.line()
        if not line:
            return headers
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep or not name.strip():
            raise ProtocolError(f"a malformed header line {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    raise ProtocolError(f"more than {MAX_HEADERS} header lines")


def _chunked(reader: _Reader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_text = reader.line().split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ProtocolError(f"a malformed chunk size {size_text[:40]!r}") from None
        if size == 0:
            while reader.line():  # trailers, then the blank line
                pass
            return b"".join(parts)
        total += size
        if total > MAX_BODY:
            raise ProtocolError("a response body over 256 MiB")
        parts.append(reader.exactly(size))
        if reader.line():
            raise ProtocolError("a chunk not followed by CRLF")


def exchange(sock: socket.socket, method: str, target: str, headers: dict[str, str],
             body: bytes | IO[bytes] | None = None, *,
             answered: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Send one request on ``sock`` and read its response: ``(status, body)``; the
    response's headers (names in lower case) go into ``answered`` when it is given.

    ``headers`` must carry ``Content-Length`` when there is a body. Raises OSError
    (:class:`ProtocolError` for an answer this client cannot read)."""
    lines = [f"{method} {target} HTTP/1.1", "Host: docker"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    _send(sock, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), body)
    reader = _Reader(sock)
    try:
        while True:
            status_line = reader.line().decode("latin-1")
            version, _, rest = status_line.partition(" ")
            code = rest[:3]
            if not version.startswith("HTTP/1.") or not code.isdigit():
                raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
            status = int(code)
            found = _headers(reader)
            if status >= 200 or status == 101:
                break  # an interim 1xx answer is followed by the real one
        if answered is not None:
            answered.update(found)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return status, b""
        if "chunked" in found.get("transfer-encoding", "").lower():
            return status, _chunked(reader)
        if "content-length" in found:
            try:
                length = int(found["content-length"])
            except ValueError:
                raise ProtocolError(
                    f"a malformed Content-Length {found['content-length'][:40]!r}") from None
            if not 0 <= length <= MAX_BODY:
                raise ProtocolError(f"a Content-Length of {length}")
            return status, reader.exactly(length)
        return status, reader.rest()
    finally:
        reader.close()


__all__ = ["ProtocolError", "exchange"]
