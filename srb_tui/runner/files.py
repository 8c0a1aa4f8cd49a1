"""Small file and stream helpers the grading ladder needs on top of the container basics.

* :func:`put_readonly_tree` copies a host tree (or a handful of in-memory files) into a
  container owned by root with normalised modes (directories 0755, files 0644 or 0755),
  so the container's non-root user can read it but never change it.
* :func:`put_files` writes in-memory files owned by a given user (a candidate's files).
* :func:`put_symlink` places one symbolic link (e.g. an interpreter alias).
* :func:`fetch_file` reads one regular file back out of a container (capped).
* :class:`ExecSession` is one long ``exec`` with its stdin attached: lines go in, stdout
  lines come out (Docker's multiplexed frames are split here; stderr keeps a short tail).
  It carries a request/response tool loop without starting a process per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import stat
import struct
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

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

FETCH_MAX_BYTES = 256 * 1024 * 1024
STDERR_TAIL = 4000
RECV_CHUNK = 64 * 1024
_SKIP_ALWAYS = frozenset({"__pycache__"})


# --------------------------------------------------------------------------- packing


def _parts(dest: str) -> list[str]:
    path = PurePosixPath(dest)
    if not path.is_absolute() or ".." in path.parts or len(path.parts) < 2:
        raise ValueError(f"destination {dest!r} must be an absolute path below /")
    return list(path.parts[1:])


def _info(name: str, kind: bytes, mode: int, uid: int, gid: int, size: int = 0) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.size = size
    ti.uid, ti.gid = uid, gid
    ti.uname = ti.gname = ""
    ti.mtime = 946684800
    return ti


def _add_parents(
    tar: tarfile.TarFile, parts: list[str], uid: int, gid: int, last_mode: int = 0o755
) -> None:
    """Directory entries for ``parts`` below the top-level folder. The top-level folder
    itself (/tmp, /opt, ...) is never in the archive, so its owner and mode (the sticky
    bit of /tmp) stay as the image made them; the engine creates it if it is missing.
    The deepest folder gets ``last_mode``."""
    for i in range(2, len(parts) + 1):
        mode = last_mode if i == len(parts) else 0o755
        tar.addfile(_info("/".join(parts[:i]), tarfile.DIRTYPE, mode, uid, gid))


def pack_readonly(
    source: Path, dest: str, out: IO[bytes], *, skip: Iterable[str] = (), private: bool = False
) -> tuple[int, list[str]]:
    """Tar ``source`` (a folder) so it lands at ``dest`` owned by root, modes normalised.

    Links are kept as links; special files and names in ``skip`` (plus ``__pycache__``) are
    left out. ``private`` makes ``dest`` itself mode 0700 (nobody but root may enter it).
    Returns (files packed, members skipped).
    """
    parts = _parts(dest)
    skipped: list[str] = []
    names_to_skip = _SKIP_ALWAYS | set(skip)
    count = 0
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        _add_parents(tar, parts, 0, 0, 0o700 if private else 0o755)
        prefix = "/".join(parts)
        stack = [(source, prefix)]
        while stack:
            folder, name = stack.pop()
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
            for entry in entries:
                member = f"{name}/{entry.name}"
                if entry.name in names_to_skip:
                    skipped.append(member)
                    continue
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    tar.addfile(_info(member, tarfile.DIRTYPE, 0o755, 0, 0))
                    stack.append((Path(entry.path), member))
                elif stat.S_ISREG(st.st_mode):
                    mode = 0o755 if st.st_mode & 0o111 else 0o644
                    with open(entry.path, "rb") as fh:
                        tar.addfile(_info(member, tarfile.REGTYPE, mode, 0, 0, st.st_size), fh)
                    count += 1
                elif stat.S_ISLNK(st.st_mode):
                    ti = _info(member, tarfile.SYMTYPE, 0o777, 0, 0)
                    ti.linkname = os.readlink(entry.path)
                    tar.addfile(ti)
                    count += 1
                else:
                    skipped.append(member)
    return count, skipped


def pack_files(
    files: Mapping[str, bytes], dest: str, out: IO[bytes], *, uid: int, gid: int, mode: int
) -> None:
    """Tar in-memory ``files`` (relative path -> bytes) under ``dest``."""
    parts = _parts(dest)
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        _add_parents(tar, parts, uid, gid)
        made: set[str] = set()
        for rel in sorted(files):
            rel_parts = PurePosixPath(rel).parts
            if not rel_parts or PurePosixPath(rel).is_absolute() or ".." in rel_parts:
                raise ValueError(f"file name {rel!r} must be a plain relative path")
            for i in range(1, len(rel_parts)):
                folder = "/".join([*parts, *rel_parts[:i]])
                if folder not in made:
                    made.add(folder)
                    tar.addfile(_info(folder, tarfile.DIRTYPE, 0o755, uid, gid))
            data = files[rel]
            member = "/".join([*parts, *rel_parts])
            tar.addfile(_info(member, tarfile.REGTYPE, mode, uid, gid, len(data)), io.BytesIO(data))


def _put(api: Any, cid: str, writer: Any) -> Any:
    with tempfile.TemporaryFile(prefix="srb-put-") as fh:
        result = writer(fh)
        fh.seek(0)
        api.put_archive(cid, "/", fh)
    return result


async def put_readonly_tree(
    engine: DockerEngine,
    handle: ContainerHandle,
    source: Path,
    dest: str,
    *,
    skip: Iterable[str] = (),
    private: bool = False,
) -> int:
    """Copy the folder ``source`` to ``dest``, root-owned and read-only for everyone else
    (``private``: ``dest`` itself 0700, so no other uid can even read it)."""
    if not source.is_dir():
        raise ContainerError(f"run {handle.run_id}: {source} is not a folder")
    api = await engine.api()
    skip_names = tuple(skip)
    try:
        count, _ = await engine.call(
            _put,
            api,
            handle.id,
            lambda fh: pack_readonly(source, dest, fh, skip=skip_names, private=private),
        )
    except (sdk.APIError, ValueError, OSError) as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot copy {source} into {handle.name}:{dest}: {err}"
        ) from err
    return int(count)


async def put_files(
    engine: DockerEngine,
    handle: ContainerHandle,
    dest: str,
    files: Mapping[str, bytes],
    *,
    uid: int,
    gid: int,
    mode: int = 0o644,
) -> None:
    """Write in-memory files under ``dest`` owned by ``uid:gid``."""
    api = await engine.api()
    try:
        await engine.call(
            _put,
            api,
            handle.id,
            lambda fh: pack_files(files, dest, fh, uid=uid, gid=gid, mode=mode),
        )
    except (sdk.APIError, ValueError, OSError) as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot write files to {handle.name}:{dest}: {err}"
        ) from err


def _pack_link(path: str, target: str, out: IO[bytes]) -> None:
    parts = _parts(path)
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        _add_parents(tar, parts[:-1], 0, 0)
        ti = _info("/".join(parts), tarfile.SYMTYPE, 0o777, 0, 0)
        ti.linkname = target
        tar.addfile(ti)


async def put_symlink(
    engine: DockerEngine, handle: ContainerHandle, path: str, target: str
) -> None:
    """Create the symbolic link ``path -> target`` (parents root-owned, 0755)."""
    api = await engine.api()
    try:
        await engine.call(_put, api, handle.id, lambda fh: _pack_link(path, target, fh))
    except (sdk.APIError, ValueError, OSError) as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot link {handle.name}:{path} -> {target}: {err}"
        ) from err


# --------------------------------------------------------------------------- fetching


def _fetch(api: Any, cid: str, path: str, max_bytes: int) -> bytes | None:
    try:
        chunks, _stat = api.get_archive(cid, path)
    except sdk.NotFound:
        return None
    with tempfile.TemporaryFile(prefix="srb-get-") as fh:
        size = 0
        try:
            for chunk in chunks:
                size += len(chunk)
                if size > max_bytes + 1024 * 1024:
                    raise ValueError(f"{path} is larger than {max_bytes} bytes")
                fh.write(chunk)
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        fh.seek(0)
        with tarfile.open(fileobj=fh, mode="r:") as tar:
            for member in tar:
                if not member.isreg():
                    raise ValueError(f"{path} is not a regular file")
                if member.size > max_bytes:
                    raise ValueError(f"{path} is {member.size} bytes, over {max_bytes}")
                data = tar.extractfile(member)
                return b"" if data is None else data.read()
    return None


async def fetch_file(
    engine: DockerEngine,
    handle: ContainerHandle,
    path: str,
    *,
    max_bytes: int = FETCH_MAX_BYTES,
) -> bytes | None:
    """The bytes of the regular file ``path`` in the container, or None if it is absent."""
    api = await engine.api()
    try:
        return await engine.call(_fetch, api, handle.id, path, max_bytes)
    except (sdk.APIError, ValueError, OSError, tarfile.TarError) as err:
        raise ContainerError(
            f"run {handle.run_id}: cannot fetch {handle.name}:{path}: {err}"
        ) from err


# --------------------------------------------------------------------------- exec session


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
    by a moment); None if it never says."""
    for _ in range(EXIT_POLL_TRIES):
        code = await session.exit_code()
        if code is not None:
            return code
        await asyncio.sleep(EXIT_POLL_SEC)
    return None
