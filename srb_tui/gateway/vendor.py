"""The gateway's routes and the vendors' own error shapes.

Anthropic errors are ``{"type": "error", "error": {"type": ..., "message": ...}}``; OpenAI
errors are ``{"error": {"message", "type", "param", "code"}}``. Both official SDKs honour an
``x-should-retry`` header, which the gateway sets to ``false`` for answers a retry cannot
change (bad token, exhausted budget).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

Vendor = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class Route:
    """A forwarded path: which upstream serves it and how its usage reads."""

    path: str
    vendor: Vendor
    kind: Literal["messages", "count_tokens", "responses", "chat"]


ROUTES: dict[str, Route] = {
    r.path: r
    for r in (
        Route("/v1/messages", "anthropic", "messages"),
        Route("/v1/messages/count_tokens", "anthropic", "count_tokens"),
        Route("/v1/responses", "openai", "responses"),
        Route("/v1/chat/completions", "openai", "chat"),
    )
}

# Anthropic error type per status (their documented table); OpenAI type/code per purpose.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    504: "api_error",
    529: "overloaded_error",
}


def error_body(vendor: Vendor, status: int, message: str, *, code: str | None = None) -> bytes:
    """A vendor-shaped JSON error body."""
    if vendor == "anthropic":
        doc: dict[str, object] = {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
        }
    else:
        kind = {
            401: "invalid_request_error",
            404: "invalid_request_error",
            429: "insufficient_quota",
        }.get(status, "server_error")
        err: dict[str, str | None] = {
            "message": message, "type": kind, "param": None, "code": code
        }
        doc = {"error": err}
    return json.dumps(doc).encode()


def stream_error_event(vendor: Vendor, kind: str, message: str) -> bytes:
    """An SSE event telling a streaming client the stream broke (its vendor's shape)."""
    data: dict[str, object]
    if kind == "messages":
        data = {"type": "error", "error": {"type": "api_error", "message": message}}
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"
    if kind == "responses":
        data = {"type": "error", "code": "server_error", "message": message, "param": None}
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"
    data = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def vendor_of_path(path: str) -> Vendor:
    """Which vendor's error shape fits a path nobody routes (OpenAI's for /v1/responses-ish
    and /v1/chat paths, Anthropic's otherwise)."""
    if path.startswith(("/v1/responses", "/v1/chat", "/v1/completions", "/v1/embeddings")):
        return "openai"
    return "anthropic"
