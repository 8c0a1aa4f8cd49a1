"""The submission identity: who runs submission code inside a stage container, and its end.

A stage container starts the grader as uid 0 with every capability dropped except SETUID,
SETGID and KILL (no DAC_OVERRIDE, FOWNER, CHOWN or SYS_PTRACE). The grader's files (its
code and interpreter, State A, the suite and its recorded data, the result files) are owned
by uid 0 with mode 0700/0600, so a process of any other uid can neither read nor write them,
nor signal or ptrace the grader (a different uid). Submission code never runs as uid 0: it
is started through :func:`spawn` (the ``srb-submission`` launcher of the module contract,
Stage III candidates, the fuzzer, the reviewer's ``run``), which drops to the *slot* identity
``uid_base + slot`` (the host draws ``uid_base`` per container; no supplementary groups),
in a session of its own, with an rlimit on file size and processes, core dumps off and
``oom_score_adj`` 1000 (the kernel's OOM killer takes submission code before anything of
the grader's).

:func:`reset` ends a slot whole: as the slot uid it sends ``kill(-1, SIGKILL)`` (which
reaches every process of that uid, setsid escapes included) until /proc shows none, then
removes what the uid left in its scratch, in the shared folders every uid may write (/tmp,
/var/tmp, /dev/shm, /dev/mqueue) and in System V IPC: nothing one run of a program leaves
reaches a later run (issue 32). What it cannot remove is a :class:`SandboxError` naming the
path (a harness fault); no error path changes the owner or mode of the slot's folders.
Stage III runs several rounds at once, each on a slot of its own, so one round's cleanup
never reaches another's processes and one round's files never reach another's trees.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from ..contract import CANDIDATE_OFFSET, MAX_SLOTS, SLOT_UID_BASE
from .ipc_wipe import wipe_ipc
from .procs import end_leader, wait_started
from .slot import (
    CONFIG_PATH,
    DEFAULT_FSIZE_BYTES,
    DEFAULT_NPROC,
    SandboxError,
    SlotLimits,
    candidate_group,
    candidate_ids,
    enabled,
    load_limits,
    scratch_path,
    slot_ids,
    submission_env,
)
from .spawn import spawn
from .wipe import SHARED_TMP, WIPED_BY_OWNER, fresh_world, owns_any, wipe_entries

TMP_GROUP_OFFSET = MAX_SLOTS - 1
"""Stage III: the gid (``uid_base`` + this) that owns /tmp and /dev/shm (mode 1770). Only a
candidate run holding the container's run lease gets it (:mod:`..candidates.scratch`)."""
_POLL_SEC = 0.02

__all__ = [
    "CANDIDATE_OFFSET", "CONFIG_PATH", "DEFAULT_FSIZE_BYTES", "DEFAULT_NPROC", "MAX_SLOTS",
    "SLOT_UID_BASE", "SandboxError", "SlotLimits", "candidate_group", "candidate_ids",
    "enabled", "load_limits", "slot_ids", "spawn", "submission_env",
]  # fmt: skip


def tmp_gid() -> int:
    """The group that may use the candidate /tmp and /dev/shm of a Stage III container."""
    return load_limits().uid_base + TMP_GROUP_OFFSET


def scratch_dir(slot: int) -> Path:
    """The slot's own writable folder (a size-limited tmpfs owned by the slot uid)."""
    return Path(scratch_path(slot))


def join_slot_groups(slots: Iterable[int]) -> None:
    """Add the slots' gids to the grader's supplementary groups, so it may give a folder it
    owns to one slot's group (chgrp of one's own file needs membership, not CAP_CHOWN)."""
    if not enabled():
        return
    gids = sorted({slot_ids(slot)[1] for slot in slots} | set(os.getgroups()))
    os.setgroups(gids)


def give_to_slot(path: Path, slot: int, mode: int = 0o750) -> None:
    """Make a grader-owned folder readable by one slot only (group = the slot's gid)."""
    if not enabled():
        return
    os.chown(path, -1, slot_ids(slot)[1])
    os.chmod(path, mode)


# --------------------------------------------------------------------------- ending a slot


def uid_processes(uid: int) -> list[int]:
    """Live (non-zombie) pids whose real uid is ``uid``."""
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                text = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        state = uid_line = ""
        for line in text.splitlines():
            if line.startswith("State:"):
                state = line.split()[1] if len(line.split()) > 1 else ""
            elif line.startswith("Uid:"):
                uid_line = line
        parts = uid_line.split()
        if state in ("Z", "X") or len(parts) < 2:
            continue
        if str(uid) in parts[1:3]:
            found.append(int(name))
    return found


def _as_slot(slot: int, body: Callable[[], None], groups: Sequence[int] = ()) -> int:
    """Run ``body`` in a child process that has become the slot uid; its exit status."""
    return run_as_ids(slot_ids(slot), body, groups)


def run_as_ids(
    ids: tuple[int, int], body: Callable[[], None], groups: Sequence[int] = ()
) -> int:
    """Run ``body`` in a child process that has become ``ids`` (uid, gid); 0 when it
    returned, 1 when it raised."""
    uid, gid = ids
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.setgroups(list(groups))
            os.setgid(gid)
            os.setuid(uid)
            body()
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def run_as_slot(slot: int, body: Callable[[], None], groups: Sequence[int] = ()) -> int:
    """Run ``body`` as the slot uid (with only ``groups`` as supplementary groups) in a child
    process; 0 when it returned, 1 when it raised (for reading what only the slot may read,
    e.g. its own working copies)."""
    return _as_slot(slot, body, groups)


def kill_slot(slot: int, budget_sec: float = 10.0) -> bool:
    """SIGKILL every process of the slot's uid; True when none is left."""
    if not enabled():
        return True
    return kill_ids(slot_ids(slot), budget_sec)


def kill_ids(ids: tuple[int, int], budget_sec: float = 10.0) -> bool:
    """SIGKILL every process of uid ``ids[0]`` (as that uid); True when none is left."""
    if not enabled():
        return True
    uid, _ = ids
    deadline = time.monotonic() + budget_sec

    def killer() -> None:
        while time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)  # every process this uid may signal, not itself
            if not [p for p in uid_processes(uid) if p != os.getpid()]:
                return
            time.sleep(_POLL_SEC)

    while time.monotonic() < deadline:
        if not uid_processes(uid):
            return True
        run_as_ids(ids, killer)
    return not uid_processes(uid)



def _as_ids_report(ids: tuple[int, int], body: Callable[[], list[str]]) -> list[str] | None:
    """Run ``body`` as ``ids`` in a child process; the paths it returned, the first 20
    (None when it failed). The parent reads only after the child ended, so what the child
    writes stays far below a pipe's buffer."""
    read_fd, write_fd = os.pipe()

    def child() -> None:
        os.close(read_fd)
        shown = [path[:1000] for path in body()[:20]]
        os.write(write_fd, "\0".join(shown).encode("utf-8", "surrogateescape"))
        os.close(write_fd)

    code = run_as_ids(ids, child)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as handle:
        text = handle.read().decode("utf-8", "surrogateescape")
    if code != 0:
        return None
    return [path for path in text.split("\0") if path]


def wipe_slot(
    slot: int,
    extra: Iterable[str] = (),
    remake: Sequence[str] = (),
    keep: Sequence[str] = (),
    *,
    own: bool = True,
) -> None:
    """As the slot uid: empty its scratch (but its ``keep`` entries) and remove its entries
    from the shared folders every uid may write (:data:`WIPED_BY_OWNER`), from ``extra``
    folders and its System V IPC objects (:mod:`.ipc_wipe`); then create the ``remake``
    folders of its scratch. What the slot cannot remove is passed once to the slot's
    candidate identity (Stage III: its files in the slot's group folders), then to the slot
    again. Anything still there is a harness fault naming the path (SandboxError): no error
    path changes the owner or mode of the slot's own folders. ``own=False`` leaves the
    scratch (only the slot reaches it) and wipes what every uid could see."""
    if not enabled():
        return
    scratch = scratch_dir(slot) if own else None
    fresh = fresh_world()
    if not (own or fresh):
        return
    folders = [*(WIPED_BY_OWNER if fresh else SHARED_TMP), *extra]
    passes = [slot_ids(slot)]
    if 0 <= slot < CANDIDATE_OFFSET - 1:
        passes += [candidate_ids(slot), slot_ids(slot)]
    if not own and not owns_any({ids[0] for ids in passes}, folders, fresh):
        return  # the usual case between two fuzz executions: no fork at all
    left: list[str] | None = []
    for ids in passes:

        def wipe(owner: int = ids[0]) -> list[str]:
            return [*wipe_entries(owner, scratch, folders, keep),
                    *(wipe_ipc(owner) if fresh else [])]

        left = _as_ids_report(ids, wipe)
        if left == []:
            break
    if left is None:
        raise SandboxError(f"the reset of slot {slot} failed")
    if left:
        shown = ", ".join(sorted(left)[:5])
        raise SandboxError(f"the reset of slot {slot} cannot remove {shown}")
    if remake:

        def make() -> None:
            for name in remake:
                (scratch_dir(slot) / name).mkdir(parents=True, exist_ok=True)

        if _as_slot(slot, make) != 0:
            raise SandboxError(f"cannot prepare the scratch of slot {slot}")


def wipe_shared(slot: int) -> None:
    """Kill-time cleanup between two runs of a slot: what its uid left where other slots'
    programs could see it (/tmp, /var/tmp, /dev/shm, /dev/mqueue, System V IPC); its own
    scratch goes at its next reset."""
    wipe_slot(slot, own=False)


def reset(slot: int, remake: Sequence[str] = (), keep: Sequence[str] = ()) -> bool:
    """End a slot whole: kill every process of its uid, then wipe what it wrote but its
    scratch's ``keep`` entries (and create the ``remake`` folders afresh). True when no
    process of the uid survived."""
    gone = kill_slot(slot)
    wipe_slot(slot, remake=remake, keep=keep)
    return gone


def make_slot_dirs(slot: int, names: Sequence[str]) -> dict[str, Path]:
    """Create folders in the slot's scratch as the slot uid (HOME, TMPDIR, ...)."""
    scratch = scratch_dir(slot)
    paths = {name: scratch / name for name in names}
    if not enabled():
        for path in paths.values():
            path.mkdir(parents=True, exist_ok=True)
        return paths

    def make() -> None:
        for path in paths.values():
            path.mkdir(parents=True, exist_ok=True)

    if _as_slot(slot, make) != 0:
        names = ", ".join(str(p) for p in paths.values())
        raise SandboxError(f"cannot create {names} as the uid of slot {slot}")
    return paths


def copy_as_slot(slot: int, source: Path, dest: Path, group_write: bool = False) -> int:
    """Copy ``source`` (readable by the slot) to ``dest`` as the slot uid, its folders
    also writable by the slot's group when ``group_write``; exit status."""

    def copy() -> None:
        shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
        if group_write:
            for current, dirs, _files in os.walk(dest):
                for name in [".", *dirs]:
                    path = os.path.join(current, name)
                    if not os.path.islink(path):
                        os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | 0o070)

    return _as_slot(slot, copy)


def run_in_slot(
    argv: Sequence[str],
    *,
    slot: int,
    cwd: str,
    env: Mapping[str, str],
    timeout_sec: float,
    stdout: int | IO[bytes] | None,
    stderr: int | IO[bytes] | None,
    grace_sec: float = 5.0,
    keep: Sequence[str] = (),
    groups: Sequence[int] = (),
    ids: tuple[int, int] | None = None,
    then: Callable[[], None] | None = None,
    started_as: Callable[[int], None] | None = None,
) -> tuple[int | None, bool, float, str | None, str]:
    """Run ``argv`` as the slot uid (or ``ids``, which is then ended too) to its end or
    ``timeout_sec``, then end the slot whole. ``then`` runs in the child just before the
    exec; ``started_as`` sees the pid once it runs.

    Returns (returncode, timed_out, duration_sec, start_error, reaped) where reaped says how
    the rest was cleaned up: "none", "term" or "kill"."""
    started = time.monotonic()
    try:
        proc = spawn(
            argv, slot=slot, cwd=cwd, env=env, stdout=stdout, stderr=stderr, groups=groups,
            ids=ids, then=then,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return None, False, time.monotonic() - started, str(exc), "none"
    timed_out = wait_started(proc, timeout_sec, started_as)
    if timed_out:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_sec)
    uid, _ = slot_ids(slot)
    left = uid_processes(uid) if enabled() else []
    if ids is not None and enabled():
        left += uid_processes(ids[0])
        kill_ids(ids)
    reaped = "kill" if left or proc.poll() is None else ("term" if timed_out else "none")
    reset(slot, keep=keep)
    end_leader(proc)
    return proc.returncode, timed_out, time.monotonic() - started, None, reaped
