"""Wait for a container under a time budget and an optional disk cap, enforced from outside.

When the budget runs out (counted from the container's real start, so a re-attached
run keeps its original deadline), the disk cap is crossed, or the caller asks to
stop, the container gets SIGTERM, then SIGKILL after a grace period. The reason is
recorded in :class:`ExitInfo`.

Disk cap: overlay2 on ext4 has no per-container quota (``storage_opt size`` needs
xfs with pquota), and a tmpfs workspace is invisible to ``put_archive`` /
``get_archive``. So the cap is a watchdog that polls the size of the container's
writable layer (``SizeRw``, computed by the engine, so it works even when the
container's pid limit is exhausted). ``ContainerSpec.max_file_bytes`` (RLIMIT_FSIZE)
bounds a single file between two polls.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from srb_tui.runner import sdk
from srb_tui.runner.containers import ContainerHandle, inspect_state, kill
from srb_tui.runner.engine import DockerEngine, outcome_seen
from srb_tui.runner.errors import ContainerError, EngineUnavailable

ExitReason = Literal["exited", "deadline", "oom", "killed", "disk"]

WAIT_SLICE_SEC = 2.0
MIN_SLICE_SEC = 0.05
AFTER_KILL_WAIT_SEC = 30.0


@dataclass(frozen=True)
class DiskCap:
    """Stop the container once its writable layer exceeds ``max_bytes``."""

    max_bytes: int
    poll_sec: float = 1.0


@dataclass(frozen=True)
class ExitInfo:
    """How a container ended and why."""

    exit_code: int
    reason: ExitReason
    oom_killed: bool
    finished_at: datetime | None
    escalated_to_kill: bool = False
    disk_bytes: int | None = None
    detail: str = ""


def _wait_once(api: Any, cid: str, timeout: float) -> bool:
    """True if the container exited within ``timeout``; False if it is still running."""
    try:
        api.wait(cid, timeout=timeout)
    except sdk.ReadTimeout:
        return False
    except sdk.RequestsConnectionError as err:
        # docker-py over a unix socket reports its read timeout as a ConnectionError
        if any(isinstance(arg, sdk.ReadTimeoutError) for arg in err.args):
            return False
        raise EngineUnavailable(f"lost the Docker engine while waiting: {err}") from err
    return True


def _writable_size(api: Any, cid: str) -> int:
    rows = api.containers(all=True, size=True, filters={"id": cid})
    return int(rows[0].get("SizeRw") or 0) if rows else 0


async def _wait_exit(
    engine: DockerEngine, api: Any, cid: str, timeout: float, stop: asyncio.Event | None
) -> bool:
    """True once the container has exited, False after ``timeout`` or when stop is set."""
    waiter = asyncio.ensure_future(engine.call(_wait_once, api, cid, max(timeout, MIN_SLICE_SEC)))
    if stop is None:
        return await waiter
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if waiter.done():
        return waiter.result()
    waiter.add_done_callback(outcome_seen)
    return False


async def _wait_for_exit(engine: DockerEngine, api: Any, cid: str, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        if await _wait_exit(engine, api, cid, min(left, WAIT_SLICE_SEC), None):
            return True
    return False


async def wait_with_budget(
    engine: DockerEngine,
    handle: ContainerHandle,
    budget_sec: float,
    *,
    started_at: datetime | None = None,
    grace_sec: float = 10.0,
    disk_cap: DiskCap | None = None,
    stop: asyncio.Event | None = None,
) -> ExitInfo:
    """Wait for the container to exit; stop it at the budget, the disk cap or ``stop``.

    ``started_at`` defaults to the container's ``State.StartedAt``.
    """
    api = await engine.api()
    if started_at is None:
        started_at = (await inspect_state(engine, handle)).started_at or datetime.now(UTC)
    elapsed = (datetime.now(UTC) - started_at).total_seconds()
    deadline = time.monotonic() + budget_sec - elapsed
    next_disk = time.monotonic()
    reason: ExitReason | None = None
    disk_bytes: int | None = None
    try:
        while True:
            now = time.monotonic()
            if deadline - now <= 0:
                reason = "deadline"
                break
            piece = min(deadline - now, WAIT_SLICE_SEC)
            if disk_cap is not None:
                piece = min(piece, max(next_disk - now, MIN_SLICE_SEC))
            if await _wait_exit(engine, api, handle.id, piece, stop):
                break
            if stop is not None and stop.is_set():
                reason = "killed"
                break
            if disk_cap is not None and time.monotonic() >= next_disk:
                disk_bytes = await engine.call(_writable_size, api, handle.id)
                if disk_bytes > disk_cap.max_bytes:
                    reason = "disk"
                    break
                next_disk = time.monotonic() + disk_cap.poll_sec
        escalated = False
        if reason is not None:
            await kill(engine, handle, "SIGTERM")
            if not await _wait_for_exit(engine, api, handle.id, grace_sec):
                escalated = True
                await kill(engine, handle, "SIGKILL")
                await _wait_for_exit(engine, api, handle.id, AFTER_KILL_WAIT_SEC)
    except sdk.NotFound as err:
        raise ContainerError(f"run {handle.run_id}: container {handle.name} vanished") from err
    state = await inspect_state(engine, handle)
    if reason is None:
        reason = "oom" if state.oom_killed else "exited"
    return ExitInfo(
        exit_code=state.exit_code,
        reason=reason,
        oom_killed=state.oom_killed,
        finished_at=state.finished_at,
        escalated_to_kill=escalated,
        disk_bytes=disk_bytes,
        detail=_detail(reason, budget_sec, grace_sec, escalated, disk_cap, disk_bytes, state),
    )


def _detail(
    reason: ExitReason,
    budget_sec: float,
    grace_sec: float,
    escalated: bool,
    cap: DiskCap | None,
    disk_bytes: int | None,
    state: Any,
) -> str:
    how = f"SIGTERM, then SIGKILL after {grace_sec:g}s grace" if escalated else "SIGTERM"
    if reason == "deadline":
        return f"time budget of {budget_sec:g}s used up; stopped with {how}"
    if reason == "disk" and cap is not None:
        return (
            f"disk cap of {cap.max_bytes} bytes exceeded ({disk_bytes} bytes written); "
            f"stopped with {how}"
        )
    if reason == "killed":
        return f"stop requested; stopped with {how}"
    if reason == "oom":
        return f"out of memory (killed by the kernel), exit code {state.exit_code}"
    return f"exited with code {state.exit_code}"
