"""A STAND-IN model server for the agent tests — NOT Anthropic's or OpenAI's service.

An aiohttp server on 127.0.0.1 that speaks the wire protocols the real clients use:
Anthropic Messages (``POST /v1/messages`` with SSE, ``/v1/messages/count_tokens``),
OpenAI Responses (``POST /v1/responses`` with SSE) and Chat Completions
(``POST /v1/chat/completions``). It plays the scripted sessions of
:mod:`tests.standin.script`: the model name picks the script, and the number of tool
results already in the conversation picks the step. Every request is recorded (path,
model, auth headers) so tests can assert what reached the upstream.

Run it in a background thread (:class:`StandIn`) or as ``python -m tests.standin.server``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.standin.script import Mode, mode_for

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_standin{next(_ids):06d}"


@dataclass
class Seen:
    method: str
    path: str
    model: str | None
    auth: str
    step: int | None = None


HOLD_MAX_SEC = 120.0


@dataclass
class StandInState:
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    holds: dict[tuple[str, int], threading.Event] = field(default_factory=dict)

    def record(self, item: Seen) -> None:
        with self.lock:
            self.seen.append(item)

    async def wait_if_held(self, mode: str, step: int | None) -> None:
        """A test holding (mode, step) keeps that answer back until it lets go."""
        with self.lock:
            gate = self.holds.get((mode, step)) if step is not None else None
        if gate is not None:
            await asyncio.to_thread(gate.wait, HOLD_MAX_SEC)


STATE: web.AppKey[StandInState] = web.AppKey("state", StandInState)


def _auth(request: web.Request) -> str:
    return request.headers.get("x-api-key") or request.headers.get("authorization", "")


def _usage_numbers(mode: Mode, body: dict[str, Any]) -> tuple[int, int]:
    size = len(json.dumps(body.get("messages") or body.get("input") or ""))
    return (size // 4 + 100) * mode.usage_scale, 40 * mode.usage_scale


async def _sse(request: web.Request, events: list[tuple[str, dict[str, Any]]],
               drop: bool) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    for n, (name, data) in enumerate(events):
        await resp.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        if drop and n == 0:
            # Cut the stream mid-response, as a dying upstream does.
            if request.transport is not None:
                request.transport.abort()
            return resp
    await resp.write_eof()
    return resp


def _error(status: int, vendor: str) -> web.Response:
    if vendor == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {
            "type": "api_error", "message": "stand-in upstream failure (scripted 500)"}}
    else:
        body = {"error": {"message": "stand-in upstream failure (scripted 500)",
                          "type": "server_error", "code": None}}
    return web.json_response(body, status=status)


# -- Anthropic Messages ------------------------------------------------------------------


def _anthropic_step(body: dict[str, Any]) -> int:
    n = 0
    for msg in body.get("messages") or []:
        content = msg.get("content")
        if msg.get("role") == "user" and isinstance(content, list):
            n += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def _anthropic_events(model: str, block: dict[str, Any], stop: str,
                      usage: tuple[int, int]) -> list[tuple[str, dict[str, Any]]]:
    start_block = dict(block)
    deltas: list[dict[str, Any]] = []
    if block["type"] == "text":
        start_block["text"] = ""
        deltas.append({"type": "text_delta", "text": block["text"]})
    else:
        start_block["input"] = {}
        deltas.append({"type": "input_json_delta", "partial_json": json.dumps(block["input"])})
    msg = {"id": _id("msg"), "type": "message", "role": "assistant", "model": model,
           "content": [], "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": usage[0], "output_tokens": 1,
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": msg}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": start_block}),
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
               for d in deltas]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 0}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _anthropic_block(mode: Mode, body: dict[str, Any]) -> tuple[dict[str, Any], str, int | None]:
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Bash" not in tools:
        # An auxiliary request (session title and the like): a short plain answer.
        return {"type": "text", "text": "Stand-in session"}, "end_turn", None
    step = _anthropic_step(body)
    if step < len(mode.commands):
        return ({"type": "tool_use", "id": _id("toolu"), "name": "Bash",
                 "input": {"command": mode.commands[step],
                           "description": f"stand-in step {step + 1}"}}, "tool_use", step)
    return {"type": "text", "text": mode.closing}, "end_turn", step


async def anthropic_messages(request: web.Request) -> web.StreamResponse:
    state: StandInState = request.app[STATE]
    body = await request.json()
    model = str(body.get("model", ""))
    mode = mode_for(model)
    block, stop, step = _anthropic_block(mode, body)
    state.record(Seen(request.method, request.path, model, _auth(request), step))
    await state.wait_if_held(mode.name, step)
    if mode.fail_status is not None:
        return _error(mode.fail_status, "anthropic")
    if mode.delay_sec:
        await asyncio.sleep(mode.delay_sec)
    usage = _usage_numbers(mode, body)
    if mode.drop_stream and step is not None and not body.get("stream"):
        if request.transport is not None:
            request.transport.abort()  # the connection dies before any answer
        return web.Response(status=500)
    if body.get("stream"):
        return await _sse(request, _anthropic_events(model, block, stop, usage),
                          mode.drop_stream and step is not None)
    return web.json_response({
        "id": _id("msg"), "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    })


async def anthropic_count_tokens(request: web.Request) -> web.Response:
    state: StandInState = request.app[STATE]
    body = await request.json()
    state.record(Seen(request.method, request.path, body.get("model"), _auth(request)))
    return web.json_response({"input_tokens": len(json.dumps(body)) // 4})


# -- OpenAI Responses --------------------------------------------------------------------


def _responses_step(body: dict[str, Any]) -> int:
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(1 for it in items if isinstance(it, dict)
               and it.get("type") == "function_call_output")


def _responses_item(mode: Mode, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    step = _responses_step(body)
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if step < len(mode.commands):
        cmd = mode.commands[step]
        if "exec_command" in tools or not tools:
            name, args = "exec_command", {"cmd": cmd}
        else:
            name, args = "shell", {"command": ["bash", "-lc", cmd]}
        return ({"type": "function_call", "id": _id("fc"), "call_id": _id("call"),
                 "name": name, "arguments": json.dumps(args), "status": "completed"}, step)
    return ({"type": "message", "id": _id("msg"), "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": mode.closing, "annotations": []}]},
            step)


async def openai_responses(request: web.Request) -> web.StreamResponse:
    state: StandInState = request.app[STATE]
    body = await request.json()
    model = str(body.get("model", ""))
    mode = mode_for(model)
    item, step = _responses_item(mode, body)
    state.record(Seen(request.method, request.path, model, _auth(request), step))
    await state.wait_if_held(mode.name, step)
    if mode.fail_status is not None:
        return _error(mode.fail_status, "openai")
    if mode.delay_sec:
        await asyncio.sleep(mode.delay_sec)
    inp, out = _usage_numbers(mode, body)
    usage = {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": inp + out}
    rid = _id("resp")
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
    done = {**base, "status": "completed", "output": [item], "usage": usage}
    if not body.get("stream"):
        return web.json_response(done)
    added = dict(item)
    if item["type"] == "message":
        added["content"] = []
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created",
                              "response": {**base, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": added}),
    ]
    if item["type"] == "message":
        events.append(("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
            "content_index": 0, "delta": mode.closing}))
    events += [
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]
    return await _sse(request, events, mode.drop_stream)


# -- Chat Completions (litellm / mini-swe-agent) -------------------------------------------


def _chat_step(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")


async def chat_completions(request: web.Request) -> web.StreamResponse:
    state: StandInState = request.app[STATE]
    body = await request.json()
    model = str(body.get("model", ""))
    mode = mode_for(model)
    step = _chat_step(body)
    state.record(Seen(request.method, request.path, model, _auth(request), step))
    await state.wait_if_held(mode.name, step)
    if mode.fail_status is not None:
        return _error(mode.fail_status, "openai")
    inp, out = _usage_numbers(mode, body)
    if step < len(mode.commands):
        cmd: str | None = mode.commands[step]
    elif mode.commands:
        cmd = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    else:
        cmd = None
    message: dict[str, Any] = {"role": "assistant", "content": mode.closing if cmd is None
                               else f"Stand-in step {step + 1}."}
    if cmd is not None:
        message["tool_calls"] = [{"id": _id("call"), "type": "function", "function": {
            "name": "bash", "arguments": json.dumps({"command": cmd})}}]
    return web.json_response({
        "id": _id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls" if cmd else "stop",
                     "message": message}],
        "usage": {"prompt_tokens": inp, "completion_tokens": out,
                  "total_tokens": inp + out},
    })


async def anything_else(request: web.Request) -> web.Response:
    state: StandInState = request.app[STATE]
    state.record(Seen(request.method, request.path, None, _auth(request)))
    return web.json_response({"error": "not a stand-in route"}, status=404)


def make_app(state: StandInState) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[STATE] = state
    app.router.add_post("/v1/messages", anthropic_messages)
    app.router.add_post("/v1/messages/count_tokens", anthropic_count_tokens)
    app.router.add_post("/v1/responses", openai_responses)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_route("*", "/{tail:.*}", anything_else)
    return app


class StandIn:
    """The stand-in served from a background thread: ``with StandIn() as s: s.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self.state = StandInState()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def seen(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.seen)

    async def _start(self) -> None:
        self._runner = web.AppRunner(make_app(self.state), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> StandIn:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)

    @contextlib.contextmanager
    def holding(self, mode: str, step: int) -> Iterator[threading.Event]:
        """Keep the answer to ``mode``'s request at ``step`` (tool results so far) back
        until the block ends or the test sets the event (bounded by HOLD_MAX_SEC)."""
        gate = threading.Event()
        with self.state.lock:
            self.state.holds[(mode, step)] = gate
        try:
            yield gate
        finally:
            gate.set()
            with self.state.lock:
                self.state.holds.pop((mode, step), None)

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="STAND-IN model server (not a vendor API)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    s = StandIn(args.host, args.port).start()
    print(s.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        s.stop()


if __name__ == "__main__":
    main()
