"""What srb reads from a State A archive — its SHA-256 and its file list — read once per
version of the file within a process.

Loading a task checks both (the archive against its pinned digest, the excludes against
the files it ships), and so does every reload of the console's catalogue and every
launch; for a real task's archive (tens of MB, thousands of files) that is most of a
second each time. A version of the file is its device, inode, size, and modification and
change times in nanoseconds: any write to the archive, or a new file in its place,
changes one of them and the archive is read again. The memory holds the last
:data:`KEEP` archives.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TypeVar

from srb_tui.schema.excludes import archive_root, relative_name

KEEP = 64
_Version = tuple[str, int, int, int, int, int]
V = TypeVar("V")

_lock = threading.Lock()
_digests: OrderedDict[_Version, str] = OrderedDict()
_listings: OrderedDict[_Version, tuple[str, ...]] = OrderedDict()


def _version(path: Path) -> _Version:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
            st.st_ctime_ns)


def _remember(table: OrderedDict[_Version, V], key: _Version, value: V) -> None:
    with _lock:
        table[key] = value
        table.move_to_end(key)
        while len(table) > KEEP:
            table.popitem(last=False)


def _recall(table: OrderedDict[_Version, V], key: _Version) -> V | None:
    with _lock:
        value = table.get(key)
        if value is not None:
            table.move_to_end(key)
        return value


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of the file at ``path`` (read once per version of it)."""
    key = _version(path)
    known = _recall(_digests, key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    if _version(path) == key:  # not changed while it was read
        _remember(_digests, key, value)
    return value


def archive_files(archive: Path) -> list[str]:
    """The files (regular files and links) the archive ships, relative to its root, sorted
    (read once per version of it). Raises tarfile.TarError / OSError / EOFError."""
    key = _version(archive)
    known = _recall(_listings, key)
    if known is not None:
        return list(known)
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
    root = archive_root(m.name for m in members)
    names = (relative_name(m.name, root) for m in members if not m.isdir())
    files = tuple(sorted(n for n in names if n))
    if _version(archive) == key:
        _remember(_listings, key, files)
    return list(files)


def forget() -> None:
    """Drop everything remembered (tests)."""
    with _lock:
        _digests.clear()
        _listings.clear()


__all__ = ["KEEP", "archive_files", "file_sha256", "forget"]
