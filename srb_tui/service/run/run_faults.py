"""What the run service does about faults around a run: the driver lease, and picking a
run up again at the boundary where a killed srb left it.

- **The lease.** One process drives (or re-grades) a run at a time. The lease is
  the ``driver`` key of ``runs.extra`` (:class:`DriverLease`), claimed atomically
  (:meth:`Store.runs.claim_extra`); a lease whose process is gone does not hold. A second
  srb is refused with :class:`LeaseHeld`, whose message names the holder.
- **Boundaries.** :func:`score_already_stored` sees that a killed srb had recorded
  the score before the run became ``scored`` (so resume finishes it, and never records
  a second score); :func:`remember_adversary_budget` keeps a launch's Stage III
  override with the run so a resumed run grades as it was launched.
- **A state dir that cannot be written** (full, read-only) leaves the run as it was:
  :func:`state_dir_unwritable` makes the message naming the path. (An agent srb was killed
  before starting is found by :func:`.run_upkeep.agent_never_ran`.)
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from srb_tui.runner import DockerEngine
from srb_tui.store import RunRecord, Store, StoreError, utc_now
from srb_tui.store.run_extra import (
    ADVERSARY_BUDGET,
    LEASE,
    AgentExit,
    DriverLease,
    read_adversary_budget,
)


class LaunchError(Exception):
    """A run that cannot be created: unknown task, invalid task, bad agent spec."""


class TaskNotFound(LaunchError):
    """No task of that id under the task roots (``srb`` exits NOT_FOUND)."""


class TaskInvalid(LaunchError):
    """The task does not validate, or lacks a file a run needs (``srb`` exits FAILED)."""


class LeaseHeld(LaunchError):
    """Another live srb process drives (or re-grades) the run; the message says which."""

    def __init__(self, run_id: str, lease: dict[str, object]) -> None:
        self.lease = lease
        super().__init__(
            f"run {run_id} is being driven by another srb process (pid {lease.get('pid')} on "
            f"{lease.get('host')}, since {lease.get('since')}); it was left alone. Wait for "
            "that process to finish, or stop it and run `srb resume`."
        )


def lease_alive(lease: DriverLease | object) -> bool:
    """Whether ``lease`` (a :class:`DriverLease`, or the stored value that
    ``claim_extra`` hands its predicate) names another running srb process on this host
    (a killed driver's lease, or our own, does not hold)."""
    held = lease if isinstance(lease, DriverLease) else DriverLease.of(lease)
    if held is None or held.host != socket.gethostname() or held.pid == os.getpid():
        return False
    return pid_running(held.pid)


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie nobody reaped yet does not: a driver whose
    parent died before it, under a pid 1 that does not reap, stays one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc to ask: kill(0) said it exists
    return state != "Z"


_BACKGROUND = False


def drive_in_background() -> None:
    """Mark this process as a background driver (``srb resume --handed-over``): the
    leases it takes say so, and ``srb runs cancel`` may stop it."""
    global _BACKGROUND
    _BACKGROUND = True


def this_process_lease() -> dict[str, object]:
    """The driver lease naming this process (see :func:`lease_alive`)."""
    return DriverLease(os.getpid(), socket.gethostname(), utc_now(), _BACKGROUND).to_json()


async def take_lease(store: Store, run_id: str) -> None:
    """Claim the run for this process; LeaseHeld when a live srb holds it already."""
    holder = await store.runs.claim_extra(run_id, LEASE, this_process_lease(), held=lease_alive)
    if isinstance(holder, dict):
        raise LeaseHeld(run_id, holder)


async def release_lease(store: Store, run_id: str) -> None:
    run = await store.runs.require_run(run_id)
    lease = DriverLease.read(run.extra)
    if lease is not None and lease.pid == os.getpid():
        await store.runs.merge_extra(run_id, drop=[LEASE])


async def remember_adversary_budget(store: Store, run_id: str, given: float | None
                                    ) -> float | None:
    """The Stage III budget override of this run: ``given`` is stored with the run, so a
    resumed run (``srb resume``, the console) grades as it was launched."""
    run = await store.runs.require_run(run_id)
    if given is None:
        return read_adversary_budget(run.extra)
    if read_adversary_budget(run.extra) != given:
        await store.runs.merge_extra(run_id, {ADVERSARY_BUDGET: given})
    return given


def state_dir_unwritable(state_dir: Path, run_id: str, exc: OSError) -> StoreError:
    """The state directory cannot be written (full, read-only): nothing more can be
    recorded, so the run is left in its status for `srb resume`; say where."""
    where = exc.filename or state_dir
    return StoreError(f"{where}: {exc.strerror or exc}; run {run_id} was left as it was: "
                      "make room (or make it writable) and `srb resume` goes on")


SIGNAL_EXITS = (128 + 9, 128 + 15)  # KILL, TERM


async def engine_went_away(engine: DockerEngine, run: RunRecord, *, watch_sec: float = 5.0
                           ) -> bool:
    """Whether the agent's container died because the engine itself went down.

    A dockerd that stops signals its containers first and closes its API a moment later,
    so an agent that "exited" by TERM or KILL that srb did not send (not the deadline,
    not a cancel) is watched for a few seconds: if the engine stops answering, the exit
    was the engine's, and collecting the half-done workspace would turn an
    infrastructure fault into a score."""
    info = AgentExit.read(run.extra)
    if info is None or info.reason != "exited":
        return False
    if info.exit_code not in SIGNAL_EXITS or run.stop_reason == "cancelled":
        return False
    end = asyncio.get_running_loop().time() + watch_sec
    while True:
        try:
            answered = (await asyncio.wait_for(engine.ping(), 3.0)).ok
        except TimeoutError:
            answered = False
        if not answered:
            return True
        if asyncio.get_running_loop().time() >= end:
            return False
        await asyncio.sleep(0.5)


async def score_already_stored(store: Store, run_dir: Path, run: RunRecord) -> bool:
    """Whether this grading's score is already in the store (srb stopped after recording
    it, before the run became ``scored``): grading again would record a second score."""
    entered = [t.at for t in await store.runs.transitions(run.id) if t.to_status == "audit"]
    if not entered or not (run_dir / "score.json").is_file():
        return False
    scores = [e.at for e in await store.infra.events(run.id, limit=100_000) if e.kind == "score"]
    return bool(scores) and max(scores) > max(entered)


__all__ = [
    "ADVERSARY_BUDGET",
    "LEASE",
    "LaunchError",
    "LeaseHeld",
    "drive_in_background",
    "engine_went_away",
    "lease_alive",
    "pid_running",
    "release_lease",
    "remember_adversary_budget",
    "score_already_stored",
    "state_dir_unwritable",
    "take_lease",
    "this_process_lease",
]
