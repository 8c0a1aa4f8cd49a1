"""What srb reads from a State A archive — its SHA-256 and its file list — read once per
version of the file within a process.

Loading a task checks both (the archive against its pinned digest, the excludes against
the files it ships), and so does every reload of the console's catalogue and every
launch; for a real task's archive (tens of MB, thousands of files) that is most of a
second each time. A version of the file is its device, inode, size, and modification and
change times in nanoseconds: any write to the archive, or a new file in its place,
changes one of them and the archive is read again. The memory holds the last
:data:`KEEP` archives.

A process may also keep what it read on disk (:func:`keep_on_disk`, which srb's
composition root points at ``state/cache/archive-facts``), so that the next ``srb run``
of the same task does not read the archive again either: one small JSON file per version
of an archive, written atomically, read only when its recorded version is the file's
version now. Nothing is ever written outside an existing cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TypeVar

from srb_tui.schema.excludes import relative_name

KEEP = 64
_Version = tuple[str, int, int, int, int, int]
V = TypeVar("V")


class ArchiveUnreadable(OSError):
    """The archive cannot be listed (not a tar, truncated, compressed wrongly)."""


_lock = threading.Lock()
_disk: Path | None = None  # where facts are kept on disk (None: memory only)
_digests: OrderedDict[_Version, str] = OrderedDict()
_listings: OrderedDict[_Version, tuple[str, ...]] = OrderedDict()
LISTING = "files-as-extracted"  # the disk key of a listing (earlier "files" cut a wrapper folder)


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


def keep_on_disk(directory: Path | None) -> None:
    """Keep facts in ``directory`` too (None: memory only). Its parent must exist."""
    global _disk
    with _lock:
        _disk = directory


def kept_in() -> Path | None:
    """The directory facts are kept in, if any."""
    with _lock:
        return _disk


def _disk_file(key: _Version) -> Path | None:
    directory = kept_in()
    if directory is None:
        return None
    name = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]
    return directory / f"{name}.json"


def _disk_get(key: _Version, what: str) -> object | None:
    path = _disk_file(key)
    if path is None:
        return None
    try:
        facts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(facts, dict) or facts.get("version") != list(key):
        return None
    return facts.get(what)


def _disk_put(key: _Version, what: str, value: object) -> None:
    path = _disk_file(key)
    if path is None or not path.parent.parent.is_dir():
        return
    try:
        path.parent.mkdir(exist_ok=True)
        facts: dict[str, object] = {"version": list(key)}
        with contextlib.suppress(OSError, ValueError):
            old = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(old, dict) and old.get("version") == list(key):
                facts.update(old)
        facts[what] = value
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        scratch.write_text(json.dumps(facts), encoding="utf-8")
        os.replace(scratch, path)
    except OSError:
        return  # a cache: a fact not kept is read again next time


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of the file at ``path`` (read once per version of it)."""
    key = _version(path)
    known = _recall(_digests, key)
    if known is not None:
        return known
    kept = _disk_get(key, "sha256")
    if isinstance(kept, str):
        _remember(_digests, key, kept)
        return kept
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    if _version(path) == key:  # not changed while it was read
        _remember(_digests, key, value)
        _disk_put(key, "sha256", value)
    return value


def archive_files(archive: Path, strip: int = 0) -> list[str]:
    """The files (regular files and links) the archive ships, relative to where it is
    extracted, sorted (read once per version of it). ``strip`` drops leading folders as
    extraction does (``tar --strip-components``; a task's ``[srb.state_a]``); the default
    0 is how the published images unpack ``original.tar.gz`` into ``/workspace/repo``, so an
    archive whose files all sit under one folder keeps that folder. Raises OSError
    (ArchiveUnreadable for an archive that is there but cannot be listed)."""
    key = _version(archive)
    known = _recall(_listings, key)
    if known is None:
        kept = _disk_get(key, LISTING)
        if isinstance(kept, list) and all(isinstance(n, str) for n in kept):
            known = tuple(kept)
            _remember(_listings, key, known)
    if known is None:
        known = _list(archive)
        if _version(archive) == key:
            _remember(_listings, key, known)
            _disk_put(key, LISTING, list(known))
    if not strip:
        return list(known)
    return sorted("/".join(parts[strip:]) for parts in (n.split("/") for n in known)
                  if len(parts) > strip)


def _list(archive: Path) -> tuple[str, ...]:
    import tarfile  # only when the archive is read: a launch from the kept facts does not

    try:
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
    except (tarfile.TarError, EOFError) as exc:
        raise ArchiveUnreadable(f"{archive}: {exc}") from exc
    names = (relative_name(m.name, "") for m in members if not m.isdir())
    return tuple(sorted(n for n in names if n))


def forget() -> None:
    """Drop everything remembered (tests)."""
    with _lock:
        _digests.clear()
        _listings.clear()


__all__ = [
    "KEEP", "ArchiveUnreadable", "archive_files", "file_sha256", "forget", "keep_on_disk",
    "kept_in",
]  # fmt: skip
