"""Small file helpers the grading ladder needs on top of the container basics (one long
exec with its stdin attached is :mod:`srb_tui.runner.exec_session`).

* :func:`put_readonly_tree` copies a host tree (or a handful of in-memory files) into a
  container owned by root with normalised modes (directories 0755, files 0644 or 0755),
  so the container's non-root user can read it but never change it.
* :func:`put_files` writes in-memory files owned by a given user (a candidate's files).
* :func:`put_symlink` places one symbolic link (e.g. an interpreter alias).
* :func:`fetch_file` reads one regular file back out of a container (capped).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import (
    ContainerHandle,
)
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ContainerError
from srb_tui.runner.tarpack import dest_parts, walk_sorted

FETCH_MAX_BYTES = 256 * 1024 * 1024
_SKIP_ALWAYS = frozenset({"__pycache__"})


# --------------------------------------------------------------------------- packing


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
    parts = dest_parts(dest)
    skipped: list[str] = []
    names_to_skip = _SKIP_ALWAYS | set(skip)
    count = 0
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        _add_parents(tar, parts, 0, 0, 0o700 if private else 0o755)
        prefix = "/".join(parts)
        for member, path, st in walk_sorted(source, prefix, names_to_skip):
            if st is None:
                skipped.append(member)
            elif stat.S_ISDIR(st.st_mode):
                tar.addfile(_info(member, tarfile.DIRTYPE, 0o755, 0, 0))
            elif stat.S_ISREG(st.st_mode):
                mode = 0o755 if st.st_mode & 0o111 else 0o644
                with open(path, "rb") as fh:
                    tar.addfile(_info(member, tarfile.REGTYPE, mode, 0, 0, st.st_size), fh)
                count += 1
            elif stat.S_ISLNK(st.st_mode):
                ti = _info(member, tarfile.SYMTYPE, 0o777, 0, 0)
                ti.linkname = os.readlink(path)
                tar.addfile(ti)
                count += 1
            else:
                skipped.append(member)
    return count, skipped


def pack_files(
    files: Mapping[str, bytes], dest: str, out: IO[bytes], *, uid: int, gid: int, mode: int
) -> None:
    """Tar in-memory ``files`` (relative path -> bytes) under ``dest``."""
    parts = dest_parts(dest)
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
    parts = dest_parts(path)
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
