"""Run upkeep over one engine's :class:`.RunContext`: removing containers (recording their
removal), cancelling a run nobody drives, reaping the containers of runs that are over and
collecting garbage. Each function does its job on the context it is handed and returns
what happened; which engines (one, or every node of a pool) and in what order is the
orchestrator's business (:meth:`.RunService.recover`, :meth:`.RunService.gc`), as is
driving the runs a stopped srb left live.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from srb_tui.runner import ContainerHandle, RunnerError, remove
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.run_faults import LeaseHeld, lease_alive
from srb_tui.service.run.run_moves import RunMoves
from srb_tui.service.run.run_node import node_label
from srb_tui.store import FINAL_STATUSES, RunRecord, Store, StoreError
from srb_tui.store.run_extra import DriverLease

if TYPE_CHECKING:
    from srb_tui.runner import GcReport

# The reaper (:mod:`srb_tui.runner.reaper`) loads when one of these first lists the engine:
# a launch never does (bench/bench_launch.py).


async def finish_cancelled(moves: RunMoves, run_id: str) -> RunRecord:
    """End ``run_id`` as the operator asked."""
    return await moves.finish(run_id, "cancelled", "cancelled by the operator",
                              detail="cancelled")


async def refuse_if_driven(store: Store, run_id: str) -> RunRecord:
    """The run, unless another live srb process drives it (:class:`LeaseHeld`)."""
    run = await store.runs.require_run(run_id)
    held = DriverLease.read(run.extra)
    if held is not None and lease_alive(held):
        raise LeaseHeld(run_id, held.to_json())
    return run


async def cancel_on(on: RunContext, run_id: str) -> RunRecord:
    """Cancel a run nobody drives whose containers are on ``on``'s engine: remove them,
    then mark the run (a run already over keeps its ending)."""
    from srb_tui.runner import reaper

    with contextlib.suppress(OSError, RunnerError):  # a node that is gone holds nothing
        for c in await reaper.list_managed(on.engine, run_id, store_tag=on.store_tag):
            await remove_quietly(on, c.handle)
    run = await on.store.runs.require_run(run_id)
    if run.status in FINAL_STATUSES:
        return run
    return await finish_cancelled(on.moves, run_id)


async def live_ids(store: Store) -> set[str]:
    """The ids of the runs the store has in progress, read now."""
    return {r.id for r in await store.runs.live_runs()}


async def reap_leftovers(on: RunContext, node: str | None = None) -> int:
    """Remove this store's containers on ``on``'s engine whose run is over; how many. The
    store is asked which runs are live after the engine is listed (another srb process may
    launch a run meanwhile: see :data:`.reaper.LiveRuns`). With ``node`` (the engine's name
    in the backend), recorded containers of runs there that the engine no longer has are
    marked removed too (:func:`stamp_gone`)."""
    from srb_tui.runner import reaper

    if node is not None:
        await stamp_gone(on, node)
    known = await on.store.runs.known_run_ids(
        [c.handle.run_id for c in await reaper.list_managed(on.engine)])
    reaped = await reaper.reap(on.engine, lambda: live_ids(on.store), store_tag=on.store_tag,
                        known_run_ids=known)
    for c in reaped:
        await mark_removed(on, c.handle)
        on.moves.say(c.handle.run_id, f"reaped leftover container {c.handle.name}")
    return len(reaped)


async def collect_garbage(on: RunContext, live: set[str], node: str | None = None
                          ) -> GcReport:
    """On ``on``'s engine: remove this store's containers of runs that are over (never
    another store's, never a live run's), the workspace images no container and no live
    run uses, and dangling srb images. Which runs are live is read again after each
    listing of the engine (a run launched meanwhile is kept); every run so read is added
    to ``live``. With ``node`` (the engine's name in the backend), recorded containers of
    runs placed there that the engine no longer has are marked removed
    (:func:`stamp_gone`)."""
    from srb_tui.runner import reaper

    known = await on.store.runs.known_run_ids(
        [c.handle.run_id for c in await reaper.list_managed(on.engine)])

    async def live_now() -> set[str]:
        live.update(await live_ids(on.store))
        return live

    async def keep() -> set[str]:  # a launch between image and container
        return {
            i.image_id
            for run_id in await live_now()
            for i in await on.store.infra.images(run_id)
            if i.role == "workspace" and i.image_id
        }

    report = await reaper.gc(on.engine, live_now, store_tag=on.store_tag, known_run_ids=known,
                      keep_image_ids=keep)
    for c in report.removed:
        await mark_removed(on, c.handle)
    if node is None:
        return report
    return replace(report, rows_marked_removed=await stamp_gone(on, node))


async def stamp_gone(on: RunContext, node: str) -> int:
    """Mark removed (``removed_at``) the recorded containers of runs placed on ``node``
    (``on``'s engine) that the engine does not have any more: its engine lost them (a
    node that died and came back empty), or they were removed without srb recording it.
    The rows are read before the engine is asked, so a container made meanwhile is never
    taken for gone; only "no such container" counts, never an engine error. How many."""
    from srb_tui.runner import reaper

    rows = await on.store.infra.containers(present_only=True)
    runs: dict[str, RunRecord | None] = {}
    mine = []
    for row in rows:
        if row.run_id not in runs:
            runs[row.run_id] = await on.store.runs.get_run(row.run_id)
        run = runs[row.run_id]
        if run is not None and node_label(run) == node:
            mine.append(row.container_id)
    marked = 0
    for container_id in sorted(await reaper.absent_containers(on.engine, mine)):
        with contextlib.suppress(StoreError):
            marked += await on.store.infra.mark_container_removed(container_id)
    return marked


def summed(reports: Sequence[GcReport]) -> GcReport:
    """The reports of several engines as one."""
    from srb_tui.runner import reaper

    if len(reports) == 1:
        return reports[0]
    return reaper.GcReport(
        containers_removed=sum(r.containers_removed for r in reports),
        image_bytes_reclaimed=sum(r.image_bytes_reclaimed for r in reports),
        foreign_kept=sum(r.foreign_kept for r in reports),
        removed=tuple(c for r in reports for c in r.removed),
        workspace_images_removed=tuple(t for r in reports for t in r.workspace_images_removed),
        workspace_bytes_reclaimed=sum(r.workspace_bytes_reclaimed for r in reports),
        workspace_images_kept=sum(r.workspace_images_kept for r in reports),
        rows_marked_removed=sum(r.rows_marked_removed for r in reports),
        skipped=tuple(e for r in reports for e in r.skipped))


async def remove_quietly(on: RunContext, handle: ContainerHandle) -> None:
    """Remove a container of srb's and record its removal; an engine error is ignored."""
    with contextlib.suppress(RunnerError):
        await remove(on.engine, handle)
        await mark_removed(on, handle)


async def mark_removed(on: RunContext, handle: ContainerHandle) -> None:
    """Record the container's removal (``removed_at``) when srb recorded it."""
    with contextlib.suppress(StoreError):
        await on.store.infra.mark_container_removed(handle.id)


async def agent_never_ran(on: RunContext, run: RunRecord) -> bool:
    """Whether the agent of a run in ``agent`` never ran: srb stopped between entering
    the status and starting the container. A container created but never started is
    removed (its files may be half-copied); the orchestrator then starts the agent
    afresh. False when it did start, or existed and is gone (a fault, not a fresh start)."""
    from srb_tui.runner import reaper

    found = [c for c in await reaper.list_managed(on.engine, run.id, store_tag=on.store_tag)
             if c.handle.role == "agent"]
    if any(c.started_at is not None or c.running for c in found):
        return False
    recorded = [c for c in await on.store.infra.containers(run.id) if c.role == "agent"]
    if recorded and not found:
        return False
    for c in found:
        await remove_quietly(on, c.handle)
    on.moves.say(run.id, "the agent had not started when srb stopped; starting it now")
    return True
