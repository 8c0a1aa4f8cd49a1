"""Scripted driver: a reviewer/adversary PROGRAM driven through the same loop as a model.

The program speaks this JSON-lines protocol:

* host -> program, first line: ``{"type": "start", "role", "prompt", "system", "gates",
  "tools"}``
* program -> host: ``{"tool": NAME, "args": {...}}`` -> a turn with one tool call;
  host -> program: ``{"type": "tool_result", "ok": bool, "result" | "error"}``
* program -> host: ``{"submit_review": {...}}`` (reviewers) or ``{"report": {...}}``
  (adversaries) -> a turn calling the ``submit_review`` / ``report`` tool; the host answers
  ``{"type": "review_rejected" | "report_rejected", "message"}`` once if it is invalid, and
  ``{"type": "review_accepted" | "report_accepted"}`` when the session ends.
* a line that is not a JSON object gets ``{"type": "error", "error"}`` and is not a turn.

One program runs per session (a review sample or an adversary round), in its own process
group; `end_session` closes its stdin and reaps the group.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import (
    DriverConfigError,
    DriverError,
    ModelDriver,
    ModelRequest,
    ModelTurn,
    RetryPolicy,
    ToolCall,
    ToolResults,
    Usage,
    UserText,
    parse_options,
    positive_float,
    positive_int,
)
from .jsonl import JsonLinesProcess, LineTooLong

FINAL_KEYS = ("submit_review", "report")
OPTIONS = {"timeout_sec": positive_float, "max_bad_lines": positive_int}


@dataclass
class _Program:
    """The running script of one session and how many model calls it has answered."""

    proc: JsonLinesProcess
    calls: int = 0


class ScriptedDriver(ModelDriver):
    """Runs `argv` once per session and turns its lines into model turns."""

    name = "scripted"

    def __init__(
        self,
        argv: Sequence[str],
        *,
        model: str = "",
        options: Mapping[str, Any] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not argv or not all(isinstance(part, str) and part for part in argv):
            raise DriverConfigError("the scripted driver needs a program: a non-empty argv list")
        super().__init__(model or os.path.basename(argv[0]), retry=RetryPolicy(max_attempts=1))
        self.argv = tuple(argv)
        self.options = parse_options("scripted", options or {}, OPTIONS)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self._programs: dict[str, _Program] = {}

    async def _start(self, request: ModelRequest) -> _Program:
        try:
            proc = await JsonLinesProcess.start(self.argv, cwd=self.cwd, env=self.env)
        except OSError as exc:
            raise DriverError(f"{self.label}: cannot start {self.argv[0]!r}: {exc}") from None
        program = _Program(proc)
        self._programs[request.session] = program
        context = request.context
        prompt = next((m.text for m in request.messages if isinstance(m, UserText)), "")
        start = {
            "type": "start",
            "role": str(context.get("role", "reviewer")),
            "prompt": prompt,
            "system": request.system,
            "gates": list(context.get("gates", [])),
            "tools": [t.name for t in request.tools if t.name not in FINAL_KEYS],
        }
        for key, value in context.items():
            start.setdefault(key, value)
        await self._send(program, start)
        return program

    async def _send(self, program: _Program, message: Mapping[str, Any]) -> None:
        # a program that is gone is reported by the next read, with how it ended
        await program.proc.send(message)

    async def _attempt(self, request: ModelRequest, timeout_sec: float | None) -> ModelTurn:
        started = time.monotonic()
        session, messages = request.session, request.messages
        program = self._programs.get(session)
        if program is None:
            program = await self._start(request)
        else:
            last = messages[-1] if messages else None
            if isinstance(last, ToolResults):
                for result in last.results:
                    payload = result.payload
                    if payload is None:
                        payload = (
                            {"type": "tool_result", "ok": False, "error": result.content}
                            if result.is_error
                            else {"type": "tool_result", "ok": True, "result": result.content}
                        )
                    await self._send(program, payload)
            elif isinstance(last, UserText):
                await self._send(program, {"type": "message", "text": last.text})
        limit = self.options.get("timeout_sec")
        if timeout_sec is not None:
            limit = timeout_sec if limit is None else min(limit, timeout_sec)
        try:
            turn = await asyncio.wait_for(self._next_turn(program, session), timeout=limit)
        except TimeoutError:
            raise DriverError(
                f"{self.label}: the program gave no answer within {limit:g} s"
            ) from None
        return ModelTurn(
            text=turn[0],
            tool_calls=turn[1],
            stop_reason=turn[2],
            usage=Usage(),
            latency_sec=time.monotonic() - started,
            raw_stop_reason=turn[2],
        )

    async def _next_turn(
        self, program: _Program, session: str
    ) -> tuple[str, tuple[ToolCall, ...], str]:
        bad = 0
        while True:
            try:
                line = await program.proc.readline()
            except LineTooLong:
                raise DriverError(f"{self.label}: the program wrote a line over 64 MiB") from None
            if not line:
                code = await program.proc.proc.wait()
                tail = await program.proc.stderr_tail(wait_sec=1.0)
                text = f"the program exited (status {code}) without a final call"
                return (text + (f"; stderr: {tail[-500:]}" if tail else ""), (), "exited")
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                message, problem = None, f"not valid JSON: {exc}"
            else:
                problem = "each line must be a JSON object"
            if not isinstance(message, dict):
                bad += 1
                if bad > self.options.get("max_bad_lines", 20):
                    raise DriverError(f"{self.label}: too many unreadable lines ({problem})")
                await self._send(program, {"type": "error", "error": problem})
                continue
            program.calls += 1
            call_id = f"{session or 'scripted'}-{program.calls}"
            for key in FINAL_KEYS:
                if key in message:
                    value = message[key]
                    if isinstance(value, dict):
                        return "", (ToolCall(call_id, key, value),), "tool_use"
                    error = f"{key} must carry a JSON object"
                    return "", (ToolCall(call_id, key, {}, error=error),), "tool_use"
            tool = message.get("tool")
            args = message.get("args", {})
            if args is None:
                args = {}
            if not isinstance(tool, str) or not tool:
                error = 'expected {"tool": NAME, "args": {...}} or a final submit line'
                return "", (ToolCall(call_id, str(tool), {}, error=error),), "tool_use"
            if not isinstance(args, dict):
                return (
                    "",
                    (ToolCall(call_id, tool, {}, error="args must be an object"),),
                    "tool_use",
                )
            return "", (ToolCall(call_id, tool, args),), "tool_use"

    async def end_session(self, session: str, farewell: Mapping[str, Any] | None = None) -> None:
        program = self._programs.pop(session, None)
        if program is None:
            return
        if farewell is not None and program.proc.returncode is None:
            await self._send(program, farewell)
        await program.proc.close()

    async def aclose(self) -> None:
        for session in list(self._programs):
            await self.end_session(session)

