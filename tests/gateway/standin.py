"""A STAND-IN model upstream for the gateway tests — NOT the real Anthropic or OpenAI service.

An aiohttp server on 127.0.0.1 that speaks the same wire protocols the gateway forwards:
Anthropic Messages (JSON and SSE, plus count_tokens), OpenAI Responses (JSON and SSE) and
Chat Completions (JSON and SSE with the final usage chunk). It answers with fixed usage
numbers (``USAGE``) so tests can compute costs by hand, and records every request it sees
(path, headers, body). The request's ``model`` picks a behaviour:

* ``fail-500``   a 500 with a vendor-shaped error body
* ``drop``       a stream that sends its first event, then the connection is cut
* ``gated``      a stream that sends its first event, sets ``first_sent`` and waits for
                 ``release`` before the rest (tests of incremental pass-through)
* ``echo-key``   a 401 whose message quotes the key it received (as some vendors do)
* anything else  a normal answer
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

USAGE = {
    # Anthropic: uncached input, cache write, cache read, output.
    "anthropic": {"input_tokens": 1000, "cache_creation_input_tokens": 200,
                  "cache_read_input_tokens": 3000, "output_tokens": 500},
    # OpenAI: input includes cached; output includes reasoning.
    "responses": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 500},
                  "output_tokens": 800, "output_tokens_details": {"reasoning_tokens": 300},
                  "total_tokens": 2800},
    "chat": {"prompt_tokens": 1200, "prompt_tokens_details": {"cached_tokens": 200},
             "completion_tokens": 400, "completion_tokens_details": {"reasoning_tokens": 100},
             "total_tokens": 1600},
}
STREAM_EVENTS = 6  # text deltas per streamed answer


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class StandIn:
    """The STAND-IN server's state; ``url`` once started."""

    url: str = ""
    seen: list[Seen] = field(default_factory=list)
    first_sent: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    last_sent: asyncio.Event = field(default_factory=asyncio.Event)
    delay_per_event: float = 0.0
    runner: web.AppRunner | None = None

    async def start(self) -> StandIn:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    # ------------------------------------------------------------------ handler

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        self.seen.append(Seen(request.method, request.path_qs, dict(request.headers), body))
        model = str(body.get("model", ""))
        path = request.path
        vendor = "anthropic" if path.startswith("/v1/messages") else "openai"
        if model == "fail-500":
            return _error(vendor, 500, "STAND-IN internal error")
        if model == "echo-key":
            key = request.headers.get("x-api-key") or request.headers.get("Authorization", "")
            return _error(vendor, 401, f"STAND-IN: incorrect API key provided: {key}")
        if path == "/v1/messages/count_tokens":
            return web.json_response({"input_tokens": 42})
        if path == "/v1/messages":
            if body.get("stream"):
                return await self._stream(request, model, _anthropic_events(model))
            return web.json_response(_anthropic_message(model))
        if path == "/v1/responses":
            if body.get("stream"):
                return await self._stream(request, model, _responses_events(model))
            return web.json_response(_response_object(model))
        if path == "/v1/chat/completions":
            if body.get("stream"):
                include = bool((body.get("stream_options") or {}).get("include_usage"))
                return await self._stream(request, model, _chat_events(model, include))
            return web.json_response(_chat_completion(model))
        return _error(vendor, 404, f"STAND-IN: no route {path}")

    async def _stream(
        self, request: web.Request, model: str, events: list[bytes]
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        for index, event in enumerate(events):
            if index == len(events) - 1:
                self.last_sent.set()
            await response.write(event)
            if index == 0:
                if model == "drop":
                    transport = request.transport
                    assert transport is not None
                    transport.abort()  # the connection is cut mid-stream
                    return response
                if model == "gated":
                    self.first_sent.set()
                    await self.release.wait()
            if self.delay_per_event:
                await asyncio.sleep(self.delay_per_event)  # pacing, not synchronisation
        await response.write_eof()
        return response


def _error(vendor: str, status: int, message: str) -> web.Response:
    if vendor == "anthropic":
        doc: dict[str, Any] = {"type": "error", "error": {"type": "api_error", "message": message}}
    else:
        doc = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    return web.json_response(doc, status=status)


def _sse(name: str | None, data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {text}\n\n".encode()


def _anthropic_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_standin", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": "STAND-IN answer"}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": USAGE["anthropic"],
    }


def _anthropic_events(model: str) -> list[bytes]:
    usage = dict(USAGE["anthropic"])
    start_usage = {**usage, "output_tokens": 1}
    events = [
        _sse("message_start", {"type": "message_start", "message": {
            **_anthropic_message(model), "content": [], "stop_reason": None,
            "usage": start_usage}}),
        _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
    ]
    for i in range(STREAM_EVENTS):
        events.append(_sse("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": f"part {i} "}}))
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": usage["output_tokens"]}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return events


def _response_object(model: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": "resp_standin", "object": "response", "model": model, "status": status,
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": status,
                    "content": [{"type": "output_text", "text": "STAND-IN", "annotations": []}]}],
        "usage": USAGE["responses"] if status == "completed" else None,
    }


def _responses_events(model: str) -> list[bytes]:
    events = [_sse("response.created", {"type": "response.created",
                                        "response": _response_object(model, "in_progress")})]
    for i in range(STREAM_EVENTS):
        events.append(_sse("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": f"part {i} "}))
    events.append(_sse("response.completed", {"type": "response.completed",
                                              "response": _response_object(model)}))
    return events


def _chat_completion(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "STAND-IN"},
                     "finish_reason": "stop"}],
        "usage": USAGE["chat"],
    }


def _chat_events(model: str, include_usage: bool) -> list[bytes]:
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
            "model": model}
    events = []
    for i in range(STREAM_EVENTS):
        events.append(_sse(None, {**base, "choices": [
            {"index": 0, "delta": {"content": f"part {i} "}, "finish_reason": None}]}))
    events.append(_sse(None, {**base, "choices": [
        {"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if include_usage:
        events.append(_sse(None, {**base, "choices": [], "usage": USAGE["chat"]}))
    events.append(_sse(None, "[DONE]"))
    return events
