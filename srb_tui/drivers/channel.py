"""Tool channels: where a loop's tool calls are executed.

`ToolChannel` is the one method the loops need: ``await channel.call(tool, args)`` returns
the grader's reply ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``. The
runner implements it over one `exec` of the grader's tools loop inside the stage container;
`SubprocessToolChannel` speaks the same JSON-lines protocol (``{"id", "tool", "args"}`` in,
``{"id", "ok", "result" | "error"}`` out) to any local process, e.g.
``python3 -m srb_tui.grader tools --original A --submission B`` on the host.
A channel that breaks (process gone, unreadable reply) raises `ChannelError`: a harness
fault, never a verdict about the submission.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .jsonl import JsonLinesProcess, LineTooLong


class ChannelError(Exception):
    """The tool channel itself failed (not a tool answering with an error)."""


@runtime_checkable
class ToolChannel(Protocol):
    """Executes one tool call and returns the grader's reply object."""

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]: ...


class SubprocessToolChannel:
    """One long-lived local process speaking the grader's tools protocol.

    Calls are serialised; each request carries an increasing id and replies with an older id
    (left over from a call abandoned on timeout) are skipped. Use as an async context manager
    or call `aclose`.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_sec: float = 300.0,
    ) -> None:
        if not argv:
            raise ValueError("SubprocessToolChannel needs a non-empty argv")
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.timeout_sec = timeout_sec
        self._proc: JsonLinesProcess | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0

    async def __aenter__(self) -> SubprocessToolChannel:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start the process (done lazily by the first call otherwise)."""
        if self._proc is not None:
            return
        try:
            self._proc = await JsonLinesProcess.start(self.argv, cwd=self.cwd, env=self.env)
        except OSError as exc:
            raise ChannelError(f"cannot start the tool channel {self.argv[0]!r}: {exc}") from None

    async def _gone(self, what: str) -> ChannelError:
        proc = self._proc
        tail = "" if proc is None else await proc.stderr_tail()
        code = proc.returncode if proc is not None else None
        status = f" (exit status {code})" if code is not None else ""
        return ChannelError(f"tool channel {what}{status}" + (f": {tail[-500:]}" if tail else ""))

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return its reply without the id."""
        await self.start()
        proc = self._proc
        assert proc is not None
        async with self._lock:
            self._next_id += 1
            request_id = self._next_id
            if not await proc.send({"id": request_id, "tool": tool, "args": dict(args)}):
                raise await self._gone("closed its input")
            try:
                return await asyncio.wait_for(self._reply(proc, request_id), self.timeout_sec)
            except TimeoutError:
                raise ChannelError(
                    f"tool channel gave no reply to {tool} within {self.timeout_sec:g} s"
                ) from None

    async def _reply(self, proc: JsonLinesProcess, request_id: int) -> dict[str, Any]:
        while True:
            try:
                raw = await proc.readline()
            except LineTooLong:
                raise ChannelError("tool channel wrote a reply line over 64 MiB") from None
            if not raw:
                await proc.proc.wait()
                raise await self._gone("exited")
            try:
                reply = json.loads(raw)
            except ValueError as exc:
                raise ChannelError(f"tool channel wrote a line that is not JSON: {exc}") from None
            if not isinstance(reply, dict):
                raise ChannelError("tool channel wrote a reply that is not a JSON object")
            reply_id = reply.pop("id", None)
            if isinstance(reply_id, int) and reply_id < request_id:
                continue
            if reply_id != request_id:
                raise ChannelError(f"tool channel answered request {reply_id!r}, not {request_id}")
            if not isinstance(reply.get("ok"), bool):
                raise ChannelError("tool channel reply has no boolean 'ok'")
            return reply

    async def aclose(self) -> None:
        """Close stdin, wait briefly, then KILL the process group it leads."""
        proc, self._proc = self._proc, None
        if proc is not None:
            await proc.close()
