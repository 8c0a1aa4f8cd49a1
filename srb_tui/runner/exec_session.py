"""One long ``exec`` in a container with its stdin attached (:class:`ExecSession`): lines go
in, stdout lines come out (Docker's multiplexed frames are split here; stderr keeps a short
tail). It carries a request/response tool loop without starting a process per call;
:func:`exec_streamed` runs one command to its end with its output streamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any

from srb_tui.grader.contract import EXIT_KILLED
from srb_tui.runner import sdk
from srb_tui.runner.containers import (
    EXEC_KILL_AFTER_SEC,
    ContainerHandle,
    ExecResult,
    interpret_exit,
    with_timeout,
)
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError

STDERR_TAIL = 4000
RECV_CHUNK = 64 * 1024


class ExecSession:
    """One ``exec`` with stdin attached; line-oriented on stdout.

    Blocking socket work runs on the engine's pool. ``readline`` waits at most
    ``timeout_sec``; ``close`` half-closes stdin (the process sees end of input), drains
    what is left for a moment and closes the connection.
    """

    def __init__(self, engine: DockerEngine, handle: ContainerHandle, exec_id: str, sock: Any):
        self.engine = engine
        self.handle = handle
        self.exec_id = exec_id
        self._sock_io = sock
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._pending = b""
        self._lines: list[bytes] = []
        self._stdout = b""
        self._stderr = bytearray()
        self._eof = False
        self._closed = False
        self._lock = asyncio.Lock()

    @property
    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    @property
    def at_eof(self) -> bool:
        return self._eof and not self._lines

    def _send(self, data: bytes) -> None:
        self._sock.settimeout(60.0)
        self._sock.sendall(data)

    async def send(self, data: bytes) -> None:
        if self._closed:
            raise ContainerError(f"run {self.handle.run_id}: exec session is closed")
        try:
            await self.engine.call(self._send, data)
        except OSError as err:
            raise ContainerError(
                f"run {self.handle.run_id}: exec session in {self.handle.name} lost its input: "
                f"{err}"
            ) from err

    def _recv_frames(self, timeout: float) -> None:
        """Read until at least one complete stdout line is buffered, EOF, or timeout."""
        self._sock.settimeout(max(timeout, 0.001))
        while not self._lines and not self._eof:
            try:
                chunk = self._sock.recv(RECV_CHUNK)
            except TimeoutError:
                return
            if not chunk:
                self._eof = True
                if self._stdout:
                    self._lines.append(self._stdout)
                    self._stdout = b""
                return
            self._pending += chunk
            while len(self._pending) >= 8:
                kind = self._pending[0]
                size = struct.unpack(">I", self._pending[4:8])[0]
                if len(self._pending) < 8 + size:
                    break
                payload = self._pending[8 : 8 + size]
                self._pending = self._pending[8 + size :]
                if kind == 2:
                    self._stderr.extend(payload)
                    del self._stderr[:-STDERR_TAIL]
                    continue
                self._stdout += payload
                while b"\n" in self._stdout:
                    line, _, self._stdout = self._stdout.partition(b"\n")
                    self._lines.append(line)

    async def readline(self, timeout_sec: float) -> bytes | None:
        """The next stdout line (without its newline); None at end of output.

        Raises TimeoutError when no line arrives within ``timeout_sec``.
        """
        async with self._lock:
            if not self._lines and not self._eof:
                try:
                    await self.engine.call(self._recv_frames, timeout_sec)
                except OSError as err:
                    raise ContainerError(
                        f"run {self.handle.run_id}: exec session in {self.handle.name} broke: {err}"
                    ) from err
            if self._lines:
                return self._lines.pop(0)
            if self._eof:
                return None
            raise TimeoutError(f"no output within {timeout_sec:g} s")

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            self._sock.settimeout(2.0)
            while self._sock.recv(RECV_CHUNK):
                pass
        with contextlib.suppress(OSError):
            self._sock_io.close()
        with contextlib.suppress(OSError):
            self._sock.close()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.engine.call(self._close)

    async def exit_code(self) -> int | None:
        """The exec's exit code once it has ended (None while it still runs)."""
        api = await self.engine.api()
        data = await self.engine.call(api.exec_inspect, self.exec_id)
        if data.get("Running"):
            return None
        code = data.get("ExitCode")
        return int(code) if code is not None else None


def _open(
    api: Any,
    cid: str,
    argv: list[str],
    user: str,
    workdir: str | None,
    env: Mapping[str, str] | None,
) -> tuple[str, Any]:
    made = api.exec_create(
        cid,
        argv,
        stdin=True,
        stdout=True,
        stderr=True,
        tty=False,
        user=user,
        workdir=workdir,
        environment=dict(env) if env else None,
    )
    sock = api.exec_start(made["Id"], socket=True, tty=False)
    return str(made["Id"]), sock


async def open_exec_session(
    engine: DockerEngine,
    handle: ContainerHandle,
    argv: list[str],
    *,
    user: str = "",
    workdir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecSession:
    """Start ``argv`` in the running container with stdin attached."""
    api = await engine.api()
    try:
        exec_id, sock = await engine.call(_open, api, handle.id, argv, user, workdir, env)
    except sdk.APIError as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot start {argv[0]!r} in {handle.name}: {err}"
        ) from err
    return ExecSession(engine, handle, exec_id, sock)


STREAM_READ_SEC = 2.0
"""How long one read of a streamed exec holds a pool thread (it re-reads until the end)."""
EXIT_POLL_SEC = 0.05
EXIT_POLL_TRIES = 100


async def exec_streamed(
    engine: DockerEngine,
    handle: ContainerHandle,
    argv: list[str],
    *,
    timeout_sec: float,
    on_line: Callable[[bytes], None],
    user: str = "",
    workdir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecResult:
    """Run ``argv`` in the running container and hand each stdout line to ``on_line`` as it
    arrives (stdout is not kept; the result's ``stderr`` is its tail).

    The budget is enforced as :func:`~srb_tui.runner.containers.exec_run` enforces it
    (``timeout -k`` in the container, so 124/137 read as a timeout); should the process
    outlive even that, srb stops reading and reports it as timed out.
    """
    wrapped = with_timeout(argv, timeout_sec)
    started = time.monotonic()
    deadline = started + timeout_sec + EXEC_KILL_AFTER_SEC + 10.0
    session = await open_exec_session(engine, handle, wrapped, user=user, workdir=workdir,
                                      env=env)
    hung = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                hung = True
                break
            try:
                line = await session.readline(min(left, STREAM_READ_SEC))
            except TimeoutError:
                continue
            if line is None:
                break
            on_line(line)
        code = None if hung else await _exit_code_after_eof(session)
    finally:
        await session.close()
    stderr = session.stderr_tail.encode()
    if code is None:
        return ExecResult(EXIT_KILLED, b"", stderr, timed_out=True)
    return interpret_exit(ExecResult(code, b"", stderr), timeout_sec,
                          time.monotonic() - started)


async def _exit_code_after_eof(session: ExecSession) -> int | None:
    """The exec's code once the engine has noticed the end (it may lag the stream's EOF
    by a moment: asked again after 5, 10, 20, 40 ms, then every EXIT_POLL_SEC, for as long
    as EXIT_POLL_TRIES pauses of EXIT_POLL_SEC); None if it never says."""
    deadline = time.monotonic() + EXIT_POLL_TRIES * EXIT_POLL_SEC
    pause = 0.005
    while True:
        code = await session.exit_code()
        if code is not None:
            return code
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(pause)
        pause = min(pause * 2, EXIT_POLL_SEC)
