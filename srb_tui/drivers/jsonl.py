"""One local process spoken to in JSON lines: the host side of every stdin/stdout channel.

The tool channel (`channel.SubprocessToolChannel`) and the scripted driver
(`scripted.ScriptedDriver`) both start a program in its own session, write one JSON object
a line to its stdin, read its replies a line at a time, keep the tail of its stderr for
messages, and at the end close its stdin, give it a moment, and KILL its process group.
This class is that part; each caller turns its failures into its own error type.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from typing import Any

LINE_LIMIT = 64 * 1024 * 1024
STDERR_TAIL = 2000
EXIT_GRACE_SEC = 2.0


class LineTooLong(Exception):
    """The program wrote a line over :data:`LINE_LIMIT` bytes."""


class JsonLinesProcess:
    """A started program (see :meth:`start`) with JSON-lines stdin and stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._stderr = bytearray()
        self._drain = asyncio.create_task(self._drain_stderr())

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> JsonLinesProcess:
        """Start ``argv`` in a new session (OSError when it cannot be started)."""
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        return cls(proc)

    async def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        while True:
            chunk = await stream.read(4096)
            if not chunk:
                return
            self._stderr.extend(chunk)
            del self._stderr[:-STDERR_TAIL]

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def stderr_tail(self, wait_sec: float = 0.0) -> str:
        """The last of what the program wrote to stderr (waiting up to ``wait_sec`` for the
        stream to end, so a program that just exited has said everything)."""
        if wait_sec > 0:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._drain), timeout=wait_sec)
        return self._stderr.decode("utf-8", "replace").strip()

    async def send(self, message: Mapping[str, Any]) -> bool:
        """Write one JSON line; False when the program has closed its input."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def readline(self) -> bytes:
        """The next line of stdout (``b""`` at its end); LineTooLong past the limit."""
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            return await stdout.readline()
        except ValueError:
            raise LineTooLong(f"a line over {LINE_LIMIT // (1024 * 1024)} MiB") from None

    async def close(self) -> None:
        """Close stdin, wait briefly, then KILL whatever is left of its process group."""
        proc = self.proc
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=EXIT_GRACE_SEC)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        self._drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._drain


__all__ = ["LINE_LIMIT", "JsonLinesProcess", "LineTooLong"]
