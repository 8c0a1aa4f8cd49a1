"""Pack a host directory, or re-pack an existing tar archive, for ``put_archive``.

Stdlib only. Every member is placed under a destination path and owned by the given
uid/gid in its tar header, so the tree lands in the container already owned by the
agent user. Members that could escape (absolute paths, ``..``) and special files
(devices, FIFOs, sockets) are skipped and reported, never packed.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO


@dataclass
class PackResult:
    """What went into the archive and what was left out (member, reason)."""

    files: int = 0
    bytes: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


def dest_parts(dest: str) -> list[str]:
    """The components of an absolute container path; refuses relative or ``..`` paths."""
    path = PurePosixPath(dest)
    if not path.is_absolute() or ".." in path.parts or len(path.parts) < 2:
        raise ValueError(f"destination {dest!r} must be an absolute path below /")
    return list(path.parts[1:])


class _Packer:
    def __init__(self, out: tarfile.TarFile, uid: int, gid: int, mtime: float) -> None:
        self.out = out
        self.uid = uid
        self.gid = gid
        self.mtime = mtime
        self.result = PackResult()

    def info(self, name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.mode = mode & 0o777
        ti.size = size
        ti.uid, ti.gid = self.uid, self.gid
        ti.uname = ti.gname = ""
        ti.mtime = int(self.mtime)
        return ti

    def add_dir(self, name: str, mode: int = 0o755) -> None:
        self.out.addfile(self.info(name, tarfile.DIRTYPE, mode | 0o700))

    def add_file(self, name: str, mode: int, size: int, data: IO[bytes]) -> None:
        self.out.addfile(self.info(name, tarfile.REGTYPE, mode | 0o600, size), data)
        self.result.files += 1
        self.result.bytes += size

    def add_link(self, name: str, target: str) -> None:
        ti = self.info(name, tarfile.SYMTYPE, 0o777)
        ti.linkname = target
        self.out.addfile(ti)
        self.result.files += 1


def walk_sorted(
    root: Path, prefix: str, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[str, str, os.stat_result | None]]:
    """Every entry below ``root``, folders depth first and names sorted: (member name under
    ``prefix``, host path, its lstat). An entry named in ``skip`` comes with None and is not
    entered."""
    stack = [(root, prefix)]
    while stack:
        folder, name = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            member = f"{name}/{entry.name}"
            if entry.name in skip:
                yield member, entry.path, None
                continue
            st = entry.stat(follow_symlinks=False)
            yield member, entry.path, st
            if stat.S_ISDIR(st.st_mode):
                stack.append((Path(entry.path), member))


def _walk_dir(packer: _Packer, root: Path, prefix: str) -> None:
    for member, path, st in walk_sorted(root, prefix):
        assert st is not None  # nothing is skipped by name here
        if stat.S_ISDIR(st.st_mode):
            packer.add_dir(member, st.st_mode)
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as fh:
                packer.add_file(member, st.st_mode, st.st_size, fh)
        elif stat.S_ISLNK(st.st_mode):
            packer.add_link(member, os.readlink(path))
        else:
            packer.result.skipped.append((member, "special file (device, FIFO or socket)"))


def _member_parts(name: str) -> list[str] | None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        return None
    return [p for p in path.parts if p not in ("", ".")]


def _repack(packer: _Packer, archive: Path, prefix: str, strip_components: int) -> None:
    with tarfile.open(archive, "r:*") as src:
        for m in src:
            parts = _member_parts(m.name)
            if parts is None:
                packer.result.skipped.append((m.name, "absolute path or '..' component"))
                continue
            if len(parts) <= strip_components:
                continue
            member = "/".join([prefix, *parts[strip_components:]])
            if m.isdir():
                packer.add_dir(member, m.mode)
            elif m.isreg():
                data = src.extractfile(m)
                if data is None:
                    packer.result.skipped.append((m.name, "unreadable member"))
                    continue
                packer.add_file(member, m.mode, m.size, data)
            elif m.issym():
                packer.add_link(member, m.linkname)
            else:
                packer.result.skipped.append((m.name, "hard link or special file"))


def pack_tree(
    source: Path,
    dest: str,
    out: IO[bytes],
    *,
    uid: int,
    gid: int,
    strip_components: int = 0,
) -> PackResult:
    """Write a tar to ``out`` that, extracted at ``/``, puts ``source`` at ``dest``.

    ``source`` is a directory or a tar archive (any compression tarfile reads). Every
    directory on the way to ``dest`` is included and owned by ``uid:gid`` too.
    """
    parts = dest_parts(dest)
    mtime = source.stat().st_mtime
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        packer = _Packer(tar, uid, gid, mtime)
        for i in range(1, len(parts) + 1):
            packer.add_dir("/".join(parts[:i]))
        prefix = "/".join(parts)
        if source.is_dir():
            _walk_dir(packer, source, prefix)
        elif tarfile.is_tarfile(source):
            _repack(packer, source, prefix, strip_components)
        else:
            raise ValueError(f"{source} is neither a directory nor a tar archive")
    return packer.result
