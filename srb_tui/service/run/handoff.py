"""Handing a run to a background driver, and stopping one.

``srb run`` is a foreground process: when the operator presses Ctrl-C and chooses to
leave the run going, the run must go on without that process. So srb starts a driver of
its own in a new session (``srb resume --handed-over RUN``, no terminal, its output in the
run's ``driver.log``) once this process has let go of the run; the driver takes the run's
lease, marked ``background``, and drives it to its end exactly as ``srb resume`` would (a
grading stage that was under way starts again: its container was this process's). Every
other srb process — the console, ``runs list`` — sees the run move in the store.

Nobody watches a background driver, so ``srb runs cancel`` may stop it: the driver named
by a ``background`` lease is sent TERM (KILL after a grace), then the run is a run nobody
drives and is cancelled as one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from srb_tui.config import Settings
from srb_tui.service.run.run_faults import drive_in_background, lease_alive, pid_running
from srb_tui.store import Store
from srb_tui.store.run_extra import DriverLease

HANDED_OVER_FLAG = "--handed-over"
LOG_NAME = "driver.log"


@dataclass(frozen=True)
class Handoff:
    """A background driver started for a run."""

    pid: int
    log: Path


def hand_over(settings: Settings, run_id: str) -> Handoff:
    """Start ``srb resume --handed-over RUN`` in a session of its own (it outlives this
    process and its terminal); call it after this process released the run's lease."""
    run_dir = settings.run_dir(run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / LOG_NAME
    argv = [sys.executable, "-m", "srb_tui", "--state", str(settings.state_dir)]
    for root in settings.task_roots:
        argv += ["--tasks", str(root)]
    argv += ["resume", HANDED_OVER_FLAG, run_id]
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                close_fds=True)
    return Handoff(proc.pid, log)


def _is_background_srb(pid: int) -> bool:
    """Whether ``pid`` is still a handed-over srb driver (not a process that reused the
    pid since): its command line says so."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"srb_tui" in argv and HANDED_OVER_FLAG.encode() in argv


async def stop_background_driver(store: Store, run_id: str, *, grace_sec: float = 20.0
                                 ) -> int | None:
    """If a live background driver holds ``run_id``, end it (TERM, then KILL after
    ``grace_sec``) and return its pid; None when the run has no such driver (a console or
    a foreground ``srb run`` driving it is not stopped: the caller refuses those)."""
    run = await store.runs.require_run(run_id)
    lease = DriverLease.read(run.extra)
    if lease is None or not lease.background or not lease_alive(lease):
        return None
    if not _is_background_srb(lease.pid):
        return None
    os.kill(lease.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_sec
    while pid_running(lease.pid):
        if time.monotonic() > deadline:
            os.kill(lease.pid, signal.SIGKILL)
            deadline = time.monotonic() + grace_sec
        await asyncio.sleep(0.1)  # polling another session's process: no handle to wait on
    return lease.pid


__all__ = ["HANDED_OVER_FLAG", "Handoff", "drive_in_background", "hand_over",
           "stop_background_driver"]
