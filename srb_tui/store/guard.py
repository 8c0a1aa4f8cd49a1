"""No descriptor of a live store's files is opened outside SQLite, in any srb process.

POSIX advisory locks belong to a *process*, not to a descriptor: closing any descriptor of
a file drops every lock the process holds on it, those of its live SQLite connections
included (SQLite's "How To Corrupt An SQLite Database File", section 2.2). Another process
then believes it is alone, checkpoints and deletes the WAL, and the first one goes on
writing into a WAL nobody else sees; when it closes, its orphaned pages are written back
over the file. SQLite itself is safe: connections of one process to one file share their
locks and defer closing a descriptor while a lock is held.

So, once a store is open in this process, an audit hook refuses any Python-level ``open``
(``open()``, ``io.open``, ``os.open``, ``Path.read_bytes`` …) of its database file, its
``-wal``, ``-shm`` or ``-journal``: the caller gets :class:`StoreFileOpenRefused` naming the
file, instead of a silently corrupted store. SQLite's own opens are C calls and raise no
``open`` audit event. The hook costs one set lookup per audited ``open`` of a file whose name
is not a store's (one ``basename``), and nothing for other events.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from srb_tui.store.errors import StoreError

SUFFIXES = ("", "-wal", "-shm", "-journal")


class StoreFileOpenRefused(StoreError):
    """Code in this process tried to open a live store's file with something but SQLite."""


_lock = threading.Lock()
_paths: dict[str, int] = {}  # guarded real paths -> number of live stores holding them
_names: frozenset[str] = frozenset()  # their base names (the fast first test)
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _names:
        return
    target = args[0] if args else None
    if target is None or isinstance(target, int):
        return
    try:
        name = os.fsdecode(target)
    except (TypeError, ValueError):
        return
    if os.path.basename(name) not in _names:
        return
    full = os.path.realpath(name)
    if full in _paths:
        raise StoreFileOpenRefused(
            f"{full}: refused to open a live store's file outside SQLite (closing any "
            "descriptor of it would drop this process's SQLite locks and let another srb "
            "delete the WAL under it); read the store through srb's Store instead"
        )


def _files(db: str) -> list[str]:
    return [db + suffix for suffix in SUFFIXES]


def protect(db_realpath: str) -> None:
    """Refuse Python-level opens of ``db_realpath`` and its companions from now on."""
    global _installed, _names
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
        for path in _files(db_realpath):
            _paths[path] = _paths.get(path, 0) + 1
        _names = frozenset(os.path.basename(p) for p in _paths)


def release(db_realpath: str) -> None:
    """One store of ``db_realpath`` closed; the last one lifts the refusal."""
    global _names
    with _lock:
        for path in _files(db_realpath):
            left = _paths.get(path, 0) - 1
            if left > 0:
                _paths[path] = left
            else:
                _paths.pop(path, None)
        _names = frozenset(os.path.basename(p) for p in _paths)


def guarded() -> frozenset[str]:
    """The real paths refused right now (for tests and ``srb doctor``)."""
    with _lock:
        return frozenset(_paths)
