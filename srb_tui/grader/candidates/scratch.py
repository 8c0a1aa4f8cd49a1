"""Stage III: the writable places a candidate run has besides its tree, and who may reach them.

**The shared /tmp.** Published ``run-candidate.sh`` scripts write fixed paths under /tmp
(lang03 rebuilds ``/tmp/srb-candidate-view`` on every run). The published harness runs
every candidate run one after another as root, so a fixed path there is never seen by two
runs at once. srb runs Stage III rounds concurrently, each as its own slot uid, so a fixed
path would be fought over (the second uid cannot remove the first one's folder in a sticky
/tmp: the run fails with a fault code and the candidate is invalid) and one round's State A
files would sit where another round's submission can read or pre-empt them. So in a Stage
III container /tmp and /dev/shm are mode 1770, owned by root and the group
:func:`..boundary.sandbox.tmp_gid`; a candidate run gets that group only while it holds the
container's *run lease* (:func:`run_lease`, an exclusive lock on a grader-only file), and
the lease empties both folders when it is taken and again before it is given back. Two
candidate runs therefore never share /tmp, never see each other's files there, and no
other submission code of the stage (fuzz executions, reviewer tools: no group) reaches it.

**SRB_WORK, one per run.** The published contract keeps ``SRB_WORK`` through a round, and
task scripts may cache per-tree builds in it (``$SRB_WORK/$SRB_TARGET_TOKEN``). A kept folder
is a channel from one run of the program to the next: a program that notes each input it
has seen there answers a repeat differently, and every counterexample stops reproducing.
So every run gets a fresh, empty ``SRB_WORK`` (the slot's own, at the same path), and it is
wiped when the run ends: a cache there serves that run only (a task that builds in it
builds once per run; the cost is that build time, per attempt). A folder that cannot be
wiped is a harness fault naming it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from ..boundary import sandbox
from ..boundary.wipe import remove_owned

LEASE_FILE = Path("/srb/grader/candidate-runs.lock")
CANDIDATE_TMP = ("/tmp", "/dev/shm")
WORK = "work"


class ScratchError(Exception):
    """The harness could not prepare a candidate run's scratch (a harness fault)."""


# --------------------------------------------------------------------------- the run lease


def _entries(folder: str) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for entry in listing:
            with contextlib.suppress(OSError):
                found.append((entry.path, entry.stat(follow_symlinks=False).st_uid))
    return found


def _open_up(root: str) -> None:
    """Give the owner every right on the folders under ``root`` (so it can remove them)."""
    with contextlib.suppress(OSError):
        os.chmod(root, 0o700)
    for current, dirs, _files in os.walk(root):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(current, name), 0o700, follow_symlinks=False)


def _remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            _open_up(path)
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def clear_candidate_tmp(folders: tuple[str, ...] = CANDIDATE_TMP) -> None:
    """Remove every entry a slot uid left in the candidate /tmp and /dev/shm (as that uid:
    the grader may not enter another uid's folders). Raises ScratchError when something
    of a slot is still there afterwards."""
    base = sandbox.load_limits().uid_base
    groups = (sandbox.tmp_gid(),)
    by_slot: dict[int, list[str]] = {}
    for folder in folders:
        for path, uid in _entries(folder):
            if base <= uid < base + sandbox.TMP_GROUP_OFFSET:
                by_slot.setdefault(uid - base, []).append(path)
    for slot, paths in sorted(by_slot.items()):
        sandbox.run_as_slot(slot, functools.partial(_remove, paths), groups)
    left = [
        path
        for folder in folders
        for path, uid in _entries(folder)
        if base <= uid < base + sandbox.TMP_GROUP_OFFSET
    ]
    if left:
        shown = ", ".join(_describe(path) for path in sorted(left)[:5])
        raise ScratchError(f"cannot empty the candidate /tmp before a run: {shown} is left")


def _describe(path: str) -> str:
    """``path (uid U, mode M)`` and the same for what is inside it, to say who left what."""
    def one(p: str) -> str:
        try:
            info = os.lstat(p)
        except OSError as exc:
            return f"{p} ({exc.strerror})"
        uid = info.st_uid - sandbox.load_limits().uid_base
        return f"{p} (uid base{uid:+d}, mode {info.st_mode & 0o7777:o})"

    inner: list[str] = []
    if os.path.isdir(path) and not os.path.islink(path):
        with contextlib.suppress(OSError):
            inner = [one(os.path.join(path, name)) for name in sorted(os.listdir(path))[:3]]
    return one(path) + (f" holding {', '.join(inner)}" if inner else "")


@contextlib.contextmanager
def run_lease(lock_file: Path = LEASE_FILE) -> Iterator[tuple[int, ...]]:
    """Hold the container's run lease for one candidate run: the groups the run gets (the
    candidate /tmp group), with /tmp and /dev/shm emptied before and after. Outside a stage
    container there is nothing shared to guard and no group to give."""
    if not sandbox.enabled():
        yield ()
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        clear_candidate_tmp()
        try:
            yield (sandbox.tmp_gid(),)
        finally:
            clear_candidate_tmp()
    finally:
        os.close(fd)  # closing the descriptor gives the lock back


# --------------------------------------------------------------------------- SRB_WORK per run


def _make_work(slot: int, work: Path) -> None:
    """A fresh SRB_WORK, the slot's own, group-writable (the candidate writes there too)."""

    def make() -> None:
        work.mkdir()
        os.chmod(work, 0o770)

    if sandbox.enabled():
        if sandbox.run_as_slot(slot, make) != 0:
            raise ScratchError(f"cannot create {work} as the uid of slot {slot}")
    else:
        make()


def _wipe(slot: int, path: Path) -> None:
    def wipe() -> None:
        if not remove_owned(path):
            raise OSError(f"{path} is left")

    if sandbox.enabled():
        sandbox.run_as_slot(slot, wipe)
        if os.path.lexists(path):  # the candidate's own folders in it
            sandbox.run_as_ids(sandbox.candidate_ids(slot), wipe)
            sandbox.run_as_slot(slot, wipe)
    else:
        with contextlib.suppress(OSError):
            wipe()
    if os.path.lexists(path):
        raise ScratchError(f"cannot clear {path}")


def enter_work(slot: int, scratch: Path, token: str) -> Path:
    """A fresh, empty SRB_WORK at ``scratch/work`` for one run (``token``: the role's,
    unused: no role and no run finds another's folder)."""
    del token
    work = scratch / WORK
    if os.path.lexists(work):
        _wipe(slot, work)  # left by an interrupted run
    _make_work(slot, work)
    return work


def leave_work(slot: int, scratch: Path, token: str) -> None:
    """Wipe ``scratch/work`` at the end of a run: nothing of it reaches a later run."""
    del token
    work = scratch / WORK
    if os.path.lexists(work):
        _wipe(slot, work)
