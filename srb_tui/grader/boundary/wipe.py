"""What a slot's uid leaves behind, and its removal (the file side of a slot's reset,
:func:`.sandbox.wipe_slot`): entries of its scratch and of the shared folders every uid may
write, removed by their owner without changing anything outside them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from .ipc_wipe import owned_ipc

SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")


def _open_inside(path: str) -> None:
    """Give the owner every right on ``path`` and the folders below it, never above it:
    only what is being removed (the caller's own entries; another owner's chmod fails and
    changes nothing)."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for current, dirs, _files in os.walk(path):
        for name in dirs:
            folder = os.path.join(current, name)
            if not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)


def remove_owned(path: Path) -> bool:
    """Remove ``path`` (a file or a tree the caller owns), restoring owner rights on its own
    folders first; True when it is gone. No error changes anything outside ``path``: the
    folder holding it (a slot's scratch, /tmp) keeps its owner and mode whatever happens."""
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(OSError):
            path.unlink()
        return not os.path.lexists(path)
    _open_inside(str(path))
    shutil.rmtree(path, ignore_errors=True)
    return not os.path.lexists(path)


WIPED_BY_OWNER = (*SHARED_TMP, "/dev/mqueue")
"""Shared folders every uid may create in: a slot's entries there go at every reset (POSIX
message queues are files of /dev/mqueue; unlinking one removes the queue)."""


def fresh_world() -> bool:
    """True but when ``SRB_FRESH_WORLD=off`` (only to measure what it costs,
    bench/bench_candidate_boundary.py): then a reset leaves /dev/mqueue and System V IPC
    as srb did before issue 32, and the fuzzer wipes nothing between two executions."""
    return os.environ.get("SRB_FRESH_WORLD") != "off"


def wipe_entries(
    uid: int, scratch: Path | None, folders: Sequence[str], keep: Sequence[str]
) -> list[str]:
    """As the process's uid (``uid``): remove every entry of ``scratch`` but ``keep`` and
    every entry of ``folders`` that ``uid`` owns; the paths that are still there."""
    left: list[str] = []
    if scratch is not None and scratch.is_dir():
        with contextlib.suppress(OSError), os.scandir(scratch) as listing:
            for entry in list(listing):
                if entry.name not in keep and not remove_owned(Path(entry.path)):
                    left.append(entry.path)
    for folder in folders:
        with contextlib.suppress(OSError), os.scandir(folder) as listing:
            for entry in list(listing):
                with contextlib.suppress(OSError):
                    mine = entry.stat(follow_symlinks=False).st_uid == uid
                    if mine and not remove_owned(Path(entry.path)):
                        left.append(entry.path)
    return left


def owns_any(uids: set[int], folders: Sequence[str], ipc: bool) -> bool:
    """Whether one of ``uids`` owns an entry of ``folders`` (or, with ``ipc``, a System V
    object), as the grader sees them (it may list every one of these folders)."""
    for folder in folders:
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    with contextlib.suppress(OSError):
                        if entry.stat(follow_symlinks=False).st_uid in uids:
                            return True
        except FileNotFoundError:
            continue
        except OSError:
            return True  # cannot tell: wipe as the slot
    return ipc and any(owned_ipc(uid) for uid in uids)
