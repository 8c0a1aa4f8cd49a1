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
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

_LINE_LIMIT = 64 * 1024 * 1024
_STDERR_TAIL = 2000


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
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0
        self._stderr = bytearray()
        self._drain: asyncio.Task[None] | None = None

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
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise ChannelError(f"cannot start the tool channel {self.argv[0]!r}: {exc}") from None
        self._drain = asyncio.create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while True:
            chunk = await self._proc.stderr.read(4096)
            if not chunk:
                return
            self._stderr.extend(chunk)
            del self._stderr[:-_STDERR_TAIL]

    def _gone(self, what: str) -> ChannelError:
        tail = self._stderr.decode("utf-8", "replace").strip()
        code = self._proc.returncode if self._proc is not None else None
        status = f" (exit status {code})" if code is not None else ""
        return ChannelError(f"tool channel {what}{status}" + (f": {tail[-500:]}" if tail else ""))

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return its reply without the id."""
        await self.start()
        assert self._proc is not None
        async with self._lock:
            self._next_id += 1
            request_id = self._next_id
            line = json.dumps({"id": request_id, "tool": tool, "args": dict(args)})
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(line.encode("utf-8") + b"\n")
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                raise self._gone("closed its input") from None
            try:
                return await asyncio.wait_for(self._reply(stdout, request_id), self.timeout_sec)
            except TimeoutError:
                raise ChannelError(
                    f"tool channel gave no reply to {tool} within {self.timeout_sec:g} s"
                ) from None

    async def _reply(self, stdout: asyncio.StreamReader, request_id: int) -> dict[str, Any]:
        while True:
            try:
                raw = await stdout.readline()
            except ValueError:
                raise ChannelError("tool channel wrote a reply line over 64 MiB") from None
            if not raw:
                if self._proc is not None:
                    await self._proc.wait()
                raise self._gone("exited")
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
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=2.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if self._drain is not None:
            self._drain.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._drain
