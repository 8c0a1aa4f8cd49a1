"""Run upkeep: cancelling a run nobody drives, recovering the runs a stopped srb left live,
and removing containers (recording their removal) — the run service's housekeeping, apart
from driving a run (:mod:`.orchestrator`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from srb_tui.runner import ContainerHandle, GcReport, RunnerError, gc, list_managed, reap, remove
from srb_tui.service.run.run_faults import LEASE, LeaseHeld, lease_alive
from srb_tui.store import FINAL_STATUSES, RunRecord, StoreError

if TYPE_CHECKING:
    from srb_tui.service.run.orchestrator import RunService


async def finish_cancelled(svc: RunService, run_id: str) -> RunRecord:
    return await svc.moves.finish(run_id, "cancelled", "cancelled by the operator",
                                  detail="cancelled")


async def cancel_stored(svc: RunService, run_id: str) -> RunRecord:
    """Cancel a run that no process is driving: remove its containers, mark it."""
    held = (await svc.store.require_run(run_id)).extra.get(LEASE)
    if lease_alive(held):
        assert isinstance(held, dict)
        raise LeaseHeld(run_id, held)
    on = await svc.service_of(await svc.store.require_run(run_id))
    with contextlib.suppress(OSError, RunnerError):  # a node that is gone holds nothing
        for c in await list_managed(on.engine, run_id, store_tag=svc.store_tag):
            await remove_quietly(on, c.handle)
    run = await svc.store.require_run(run_id)
    if run.status in FINAL_STATUSES:
        return run
    return await finish_cancelled(svc, run_id)


async def _reap_leftovers(svc: RunService, live_ids: set[str]) -> None:
    known = await svc.store.known_run_ids(
        [c.handle.run_id for c in await list_managed(svc.engine)])
    for c in await reap(svc.engine, live_ids, store_tag=svc.store_tag,
                        known_run_ids=known):
        await mark_removed(svc, c.handle)
        svc.moves.say(c.handle.run_id, f"reaped leftover container {c.handle.name}")


async def node_services(svc: RunService) -> list[RunService]:
    """The service of every node that answers (just ``svc`` when not pooled)."""
    if not svc.pooled:
        return [svc]
    assert svc.backend is not None
    await svc.backend.probe_all()
    return [await svc.on_node(n) for n in svc.backend.nodes.values() if n.up]


async def recover(svc: RunService, *, grade: bool = True) -> list[RunRecord]:
    """Finish every run a previous srb left live; reap containers of finished runs (on
    every node of a pool; the live runs of a pool are driven at once, each on its node)."""
    live = await svc.store.live_runs()
    live_ids = {r.id for r in live}
    for on in await node_services(svc):
        await _reap_leftovers(on, live_ids)
    if svc.pooled:
        return list(await asyncio.gather(*(_recover_one(svc, run, grade) for run in live)))
    return [await _recover_one(svc, run, grade) for run in live]


async def _recover_one(svc: RunService, run: RunRecord, grade: bool) -> RunRecord:
    if svc.driven_elsewhere(run):
        svc.moves.say(run.id, "driven by another srb process; left alone")
        return run
    try:
        return await svc.drive(run.id, grade=grade)
    except LeaseHeld as exc:  # another srb claimed it since we looked
        svc.moves.say(run.id, str(exc))
        return await svc.store.require_run(run.id)


async def collect_garbage(svc: RunService) -> tuple[GcReport, set[str]]:
    """Remove this store's containers of runs that are over (never another store's,
    never a live run's), the workspace images no container and no live run uses, and
    dangling srb images; returns the report and the live run ids kept. On a pool: on
    every node that answers, the reports summed."""
    live = {r.id for r in await svc.store.live_runs()}
    reports = [await _gc_one(on, live) for on in await node_services(svc)]
    if len(reports) == 1:
        return reports[0], live
    return GcReport(
        containers_removed=sum(r.containers_removed for r in reports),
        image_bytes_reclaimed=sum(r.image_bytes_reclaimed for r in reports),
        foreign_kept=sum(r.foreign_kept for r in reports),
        removed=tuple(c for r in reports for c in r.removed),
        workspace_images_removed=tuple(t for r in reports for t in r.workspace_images_removed),
        workspace_bytes_reclaimed=sum(r.workspace_bytes_reclaimed for r in reports),
        workspace_images_kept=sum(r.workspace_images_kept for r in reports)), live


async def _gc_one(svc: RunService, live: set[str]) -> GcReport:
    known = await svc.store.known_run_ids(
        [c.handle.run_id for c in await list_managed(svc.engine)])
    keep = {i.image_id for run_id in live for i in await svc.store.images(run_id)
            if i.role == "workspace" and i.image_id}  # a launch between image and container
    report = await gc(svc.engine, live, store_tag=svc.store_tag, known_run_ids=known,
                      keep_image_ids=keep)
    for c in report.removed:
        await mark_removed(svc, c.handle)
    return report


async def remove_quietly(svc: RunService, handle: ContainerHandle) -> None:
    with contextlib.suppress(RunnerError):
        await remove(svc.engine, handle)
        await mark_removed(svc, handle)


async def mark_removed(svc: RunService, handle: ContainerHandle) -> None:
    """Record the container's removal (``removed_at``) when srb recorded it."""
    with contextlib.suppress(StoreError):
        await svc.store.mark_container_removed(handle.id)
