"""Forward one authorised model request to its upstream and pass the answer back.

The real key replaces the caller's token in the upstream request (read from the host
environment at this moment, never logged); the body's ``model`` goes through the rewrite
table. A streamed answer (``text/event-stream``) is written to the client chunk by chunk as
it arrives, and each chunk is shown to the usage meter only after it was written. Upstream
failures reach the client as the vendor would send them (5xx with a vendor-shaped body, or an
error event on a stream that broke) and are recorded with the status the client saw.

The hot path is kept short (issue 8's benchmark): a request body is parsed before it goes
upstream only when it may need changing (a model of the rewrite table appears in it, or a
streamed chat completion may lack ``include_usage``); otherwise it is sent as received and
its ``model`` is read for the ledger after the answer went out. An agent's body carries the
whole conversation (megabytes late in a session), so parsing it first delayed every first
byte by the parse. The upstream proxy is resolved once per upstream (``upstream_proxy``),
not per request in a thread as aiohttp's ``trust_env`` does.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from srb_tui.gateway.usage import UsageMeter
from srb_tui.gateway.vendor import Route, error_body, stream_error_event

if TYPE_CHECKING:
    from srb_tui.gateway.server import Caller, Gateway

_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "te", "trailer", "trailers", "transfer-encoding", "upgrade",
        "host", "content-length",
    }
)
_NOT_UP = _HOP | {"authorization", "x-api-key", "accept-encoding", "cookie"}
_NOT_DOWN = _HOP | {"content-encoding", "set-cookie"}
CLIENT_GONE = 499


@dataclass
class Outcome:
    """What happened to one forwarded request, for its ledger row."""

    status: int
    streamed: bool = False
    error: str | None = None


_LEADING_MODEL = re.compile(rb'\A\s*\{\s*"model"\s*:\s*"([^"\\]{1,200})"')


def may_need_rewrite(body: bytes, route: Route, models: Mapping[str, str]) -> bool:
    """Whether ``rewrite_body`` could change ``body`` (a cheap byte test, never wrong in
    the unsafe direction: False means the body certainly goes upstream unchanged)."""
    if route.kind == "chat" and b'"stream"' in body:
        return True
    return any(name.encode() in body for name in models)


def model_of(body: bytes) -> str | None:
    """The body's top-level ``model``, for the ledger (read after the answer went out)."""
    leading = _LEADING_MODEL.match(body)
    if leading is not None:
        return leading.group(1).decode("utf-8", "replace")
    try:
        doc = json.loads(body) if body else None
    except ValueError:
        return None
    model = doc.get("model") if isinstance(doc, dict) else None
    return model if isinstance(model, str) else None


def upstream_proxy(root: str) -> str | None:
    """The proxy the host environment names for ``root`` (``HTTPS_PROXY``, ``NO_PROXY``, ...),
    resolved once at start; None for a direct connection."""
    scheme, _, rest = root.partition("://")
    host = rest.split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
    if not host or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(scheme.lower()) or None


def rewrite_body(
    body: bytes, route: Route, models: Mapping[str, str]
) -> tuple[bytes, str | None, str | None]:
    """(body to send, model the client asked for, model sent upstream)."""
    try:
        doc = json.loads(body) if body else None
    except ValueError:
        return body, None, None
    if not isinstance(doc, dict):
        return body, None, None
    asked = doc.get("model") if isinstance(doc.get("model"), str) else None
    changed = False
    sent = asked
    if asked is not None and asked in models:
        sent = models[asked]
        doc["model"] = sent
        changed = True
    if route.kind == "chat" and doc.get("stream") is True:
        # The ledger needs the final usage chunk of a streamed chat completion.
        options = doc.get("stream_options")
        if not isinstance(options, dict) or options.get("include_usage") is not True:
            doc["stream_options"] = {**(options if isinstance(options, dict) else {}),
                                     "include_usage": True}
            changed = True
    if changed:
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
    return body, asked, sent


def upstream_headers(incoming: Mapping[str, str], vendor: str, key: str) -> CIMultiDict[str]:
    headers: CIMultiDict[str] = CIMultiDict(
        (name, value) for name, value in incoming.items() if name.lower() not in _NOT_UP
    )
    headers["Accept-Encoding"] = "identity"
    if vendor == "anthropic":
        headers["x-api-key"] = key
    else:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def downstream_headers(upstream: Mapping[str, str]) -> CIMultiDict[str]:
    return CIMultiDict(
        (name, value) for name, value in upstream.items() if name.lower() not in _NOT_DOWN
    )


def _redact(data: bytes, key: str) -> bytes:
    """An error body that echoes the key (some vendors quote it) gets it blanked."""
    secret = key.encode()
    return data.replace(secret, b"[redacted]") if secret and secret in data else data


def _json_error(route: Route, status: int, message: str) -> web.Response:
    return web.Response(
        status=status, body=error_body(route.vendor, status, message),
        content_type="application/json",
    )


async def forward(
    gateway: Gateway, route: Route, caller: Caller, request: web.Request
) -> web.StreamResponse:
    """Forward ``request`` on ``route`` for ``caller``; write its ledger row."""
    started = time.monotonic()
    config = gateway.config
    upstream = config.upstream(route.vendor)
    meter = UsageMeter(route.kind)
    raw = await request.read()
    deferred = not may_need_rewrite(raw, route, upstream.models)
    if deferred:
        body, asked, sent = raw, None, None
    else:
        body, asked, sent = rewrite_body(raw, route, upstream.models)
    key = config.key_for(route.vendor)
    if key is None:
        outcome = Outcome(502, error=f"no key: ${upstream.key_env} is not set on the host")
        response: web.StreamResponse = _json_error(
            route, 502, f"srb gateway: the host has no {route.vendor} key (${upstream.key_env})"
        )
    else:
        response, outcome = await _exchange(gateway, route, request, body, key, meter)
    if deferred:
        asked = sent = model_of(raw)
    await gateway.record(caller, route, asked, sent, meter, outcome, started)
    return response


async def _exchange(
    gateway: Gateway,
    route: Route,
    request: web.Request,
    body: bytes,
    key: str,
    meter: UsageMeter,
) -> tuple[web.StreamResponse, Outcome]:
    upstream = gateway.config.upstream(route.vendor)
    url = upstream.root + request.raw_path
    headers = upstream_headers(request.headers, route.vendor, key)
    try:
        async with gateway.session.post(
            url, data=body, headers=headers, proxy=gateway.proxies.get(route.vendor)
        ) as up:
            if up.content_type == "text/event-stream" and up.status < 400:
                return await _stream(route, request, up, meter)
            try:
                data = await up.read()
            except (TimeoutError, aiohttp.ClientError) as err:
                message = f"upstream broke off the response: {type(err).__name__}"
                return _json_error(route, 502, f"srb gateway: {message}"), Outcome(
                    502, error=message
                )
            if up.status >= 400:
                data = _redact(data, key)
            meter.read_json(data)
            error = f"upstream answered {up.status}" if up.status >= 500 else None
            return (
                web.Response(status=up.status, body=data, headers=downstream_headers(up.headers)),
                Outcome(up.status, error=error),
            )
    except TimeoutError:
        return _json_error(route, 504, "srb gateway: upstream timed out"), Outcome(
            504, error="upstream timed out"
        )
    except aiohttp.ClientError as err:
        message = f"upstream unreachable: {type(err).__name__}"
        detail = _redact(str(err).encode(), key).decode(errors="replace")
        return _json_error(route, 502, f"srb gateway: {message} ({detail})"), Outcome(
            502, error=message
        )


async def _stream(
    route: Route, request: web.Request, up: aiohttp.ClientResponse, meter: UsageMeter
) -> tuple[web.StreamResponse, Outcome]:
    response = web.StreamResponse(status=up.status, headers=downstream_headers(up.headers))
    await response.prepare(request)
    outcome = Outcome(up.status, streamed=True)
    while True:
        try:
            chunk = await up.content.readany()
        except (TimeoutError, aiohttp.ClientError) as err:
            outcome.error = f"upstream stream dropped: {type(err).__name__}"
            meter.finish()
            with contextlib.suppress(ConnectionError, aiohttp.ClientConnectionError):
                await response.write(
                    stream_error_event(route.vendor, route.kind, f"srb gateway: {outcome.error}")
                )
            break
        if not chunk:
            meter.finish()
            if not meter.completed and outcome.error is None:
                outcome.error = "upstream stream ended without its end marker"
            break
        try:
            await response.write(chunk)
        except (ConnectionError, aiohttp.ClientConnectionError):
            outcome.status, outcome.error = CLIENT_GONE, "client closed the stream"
            meter.feed(chunk)
            meter.finish()
            return response, outcome
        meter.feed(chunk)
    try:
        await response.write_eof()
    except (ConnectionError, aiohttp.ClientConnectionError):
        outcome.status, outcome.error = CLIENT_GONE, "client closed the stream"
    return response, outcome


def cost_of(prices: Mapping[str, Any], usage: Mapping[str, int], *models: str | None) -> Any:
    """The cost from the first of ``models`` with a price; None when none is priced."""
    for model in models:
        if model and model in prices:
            return prices[model].cost(usage)
    return None
