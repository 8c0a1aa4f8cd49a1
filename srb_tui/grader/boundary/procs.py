"""Run a command as its own process group and reap the whole group afterwards.

Every process the grader starts for someone else's code (a suite module, a reviewer's `run`,
a Stage III candidate) goes through here: it is started in a new session, waited for with a
wall-clock budget, and then its whole process group is terminated (TERM, a grace period,
KILL) before anything it wrote is read. Background children left behind are reaped too.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

DEFAULT_GRACE_SEC = 5.0
_POLL_SEC = 0.02


@dataclass(frozen=True)
class Completed:
    """What happened to one process-group run."""

    returncode: int | None
    """Exit status of the group leader; negative = killed by that signal; None = never ran."""
    timed_out: bool
    duration_sec: float
    start_error: str | None = None
    reaped: str = "none"
    """How the group was cleaned up: none (already gone), term, or kill."""

    @property
    def signal_name(self) -> str | None:
        """Name of the signal that ended the leader, if a signal did."""
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def _group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) pids in process group `pgid`; None if /proc is unreadable."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    members: list[int] = []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        tail = raw[raw.rfind(b")") + 2 :].split()
        if len(tail) < 3:
            continue
        state, pgrp = tail[0], tail[2]
        if state in (b"Z", b"X"):
            continue
        if pgrp == str(pgid).encode():
            members.append(int(name))
    return members


def group_alive(pgid: int) -> bool:
    """True while any non-zombie process remains in the process group."""
    members = _group_members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_gone(pgid: int, budget: float) -> bool:
    deadline = time.monotonic() + budget
    while True:
        if not group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SEC)


def reap_group(pgid: int, grace_sec: float = DEFAULT_GRACE_SEC) -> str:
    """Terminate every process of the group: TERM, wait `grace_sec`, then KILL.

    Returns "none" when the group was already empty, "term" when TERM sufficed, "kill"
    when KILL was needed (or the group would not die even then: "kill-failed").
    """
    if not group_alive(pgid):
        return "none"
    _signal_group(pgid, signal.SIGTERM)
    if _wait_gone(pgid, grace_sec):
        return "term"
    _signal_group(pgid, signal.SIGKILL)
    if _wait_gone(pgid, 5.0):
        return "kill"
    return "kill-failed"


def run_group(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_sec: float,
    stdout: IO[bytes] | int,
    stderr: IO[bytes] | int,
    grace_sec: float = DEFAULT_GRACE_SEC,
    umask: int = -1,
    preexec: Callable[[], None] | None = None,
    started_as: Callable[[int], None] | None = None,
) -> Completed:
    """Run `argv` in a new session (with ``umask`` when not -1), wait up to `timeout_sec`,
    then reap the whole group. ``preexec`` runs in the child just before the exec;
    ``started_as`` sees the pid once it runs."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            umask=umask,
            preexec_fn=preexec,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return Completed(None, False, time.monotonic() - started, start_error=str(exc))
    timed_out = wait_started(proc, timeout_sec, started_as)
    reaped = reap_group(proc.pid, grace_sec)
    end_leader(proc)
    return Completed(proc.returncode, timed_out, time.monotonic() - started, reaped=reaped)


def wait_started(
    proc: subprocess.Popen[bytes], timeout_sec: float, started_as: Callable[[int], None] | None
) -> bool:
    """Tell ``started_as`` the pid of ``proc`` (just started), then wait up to
    ``timeout_sec`` for it to end; True when it timed out."""
    if started_as is not None:
        started_as(proc.pid)
    return not wait_exit(proc, timeout_sec)


def wait_exit(proc: subprocess.Popen[bytes], timeout_sec: float) -> bool:
    """Wait up to ``timeout_sec`` for ``proc`` to end and reap it; True when it ended.

    Woken by the process's pidfd the moment it ends: ``Popen.wait(timeout)`` polls with
    sleeps that grow to 50 ms, which every module of a suite paid once (~25 ms on average
    after its end). Without pidfds (an old kernel), that wait."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=max(timeout_sec, 0.0))
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        deadline = time.monotonic() + max(timeout_sec, 0.0)
        while not poller.poll(max(0, math.ceil((deadline - time.monotonic()) * 1000))):
            if time.monotonic() >= deadline:
                return proc.poll() is not None
    finally:
        os.close(pidfd)
    proc.wait()
    return True


def end_leader(proc: subprocess.Popen[bytes]) -> None:
    """Kill and reap the group leader if it is still not reaped by us (TERM ignored and
    KILL racing)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
