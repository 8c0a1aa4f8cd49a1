"""A local HTTP stand-in for the vendors' APIs, for driver tests.

NOT the real Anthropic or OpenAI services: a stdlib `http.server` on 127.0.0.1 that speaks
the same wire protocol (POST /v1/messages, POST /v1/chat/completions, JSON bodies) and plays
a scripted list of responses, recording every request it receives (path, headers, body) so a
test can assert what the official SDKs actually sent.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeVendor:
    """Serves `replies` in order (a callable reply is given the parsed request body)."""

    def __init__(self, replies: Sequence[Reply | Callable[[dict[str, Any]], Reply]]) -> None:
        self.replies = list(replies)
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        vendor = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length) if length else b"{}"
                body = json.loads(raw or b"{}")
                with vendor._lock:
                    vendor.requests.append(
                        Seen(
                            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                        )
                    )
                    if vendor.replies:
                        scripted = vendor.replies.pop(0)
                    else:
                        scripted = Reply(500, {"error": {"message": "script exhausted"}})
                reply = scripted(body) if callable(scripted) else scripted
                data = json.dumps(reply.body).encode("utf-8")
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def __enter__(self) -> FakeVendor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextmanager
def serving(
    replies: Sequence[Reply | Callable[[dict[str, Any]], Reply]],
) -> Iterator[FakeVendor]:
    with FakeVendor(replies) as vendor:
        yield vendor


# --------------------------------------------------------------------------- wire builders


def anthropic_message(
    content: list[dict[str, Any]], stop_reason: str, input_tokens: int, output_tokens: int
) -> Reply:
    """A Messages API response body."""
    return Reply(
        200,
        {
            "id": "msg_local",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        },
    )


def anthropic_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return Reply(
        status,
        {"type": "error", "error": {"type": kind, "message": message}},
        {k.replace("_", "-"): v for k, v in headers.items()},
    )


def openai_completion(
    content: str | None,
    tool_calls: list[tuple[str, str, str]],
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> Reply:
    """A chat completion body; tool_calls are (id, name, arguments JSON text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in tool_calls
        ]
    return Reply(
        200,
        {
            "id": "chatcmpl-local",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    )


def openai_error(status: int, message: str, **headers: str) -> Reply:
    return Reply(
        status,
        {"error": {"message": message, "type": "error", "param": None, "code": None}},
        {k.replace("_", "-"): v for k, v in headers.items()},
    )
