"""Find srb's containers by label after a restart: reap the dead runs', re-attach the live.

A run is *live* when the store says it is still in progress; the service passes those
run ids in. Containers of any other run are force-removed. For live runs the caller
gets handles plus the real ``State.StartedAt``, so the budget keeps counting from the
original start and logs can resume from the last stored line.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from docker.errors import NotFound  # type: ignore[import-untyped]

from srb_tui.runner.containers import (
    ContainerHandle,
    handle_from_inspect,
    remove,
    state_from_inspect,
)
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.images import prune_images
from srb_tui.runner.spec import LABEL_MANAGED, LABEL_RUN


@dataclass(frozen=True)
class ManagedContainer:
    handle: ContainerHandle
    status: str
    running: bool
    started_at: datetime | None


@dataclass(frozen=True)
class GcReport:
    containers_removed: int
    image_bytes_reclaimed: int


def _list(api: Any, run_id: str | None) -> list[ManagedContainer]:
    wanted = [f"{LABEL_MANAGED}=1"]
    if run_id is not None:
        wanted.append(f"{LABEL_RUN}={run_id}")
    out = []
    for row in api.containers(all=True, filters={"label": wanted}):
        try:
            data = api.inspect_container(row["Id"])
        except NotFound:
            continue  # removed meanwhile
        state = state_from_inspect(data)
        out.append(
            ManagedContainer(
                handle=handle_from_inspect(data),
                status=state.status,
                running=state.running,
                started_at=state.started_at,
            )
        )
    return out


async def list_managed(engine: DockerEngine, run_id: str | None = None) -> list[ManagedContainer]:
    """Every container labelled ``srb.managed=1`` (optionally of one run)."""
    api = await engine.api()
    return await engine.call(_list, api, run_id)


async def reap(engine: DockerEngine, live_run_ids: Collection[str]) -> list[ManagedContainer]:
    """Force-remove managed containers whose run is not live; returns what was removed."""
    gone = [c for c in await list_managed(engine) if c.handle.run_id not in live_run_ids]
    for c in gone:
        await remove(engine, c.handle)
    return gone


async def reattach(engine: DockerEngine, live_run_ids: Collection[str]) -> list[ManagedContainer]:
    """Containers of live runs (running or stopped but not yet collected), to resume."""
    return [c for c in await list_managed(engine) if c.handle.run_id in live_run_ids]


async def gc(engine: DockerEngine, live_run_ids: Collection[str]) -> GcReport:
    """Reap dead runs' containers and prune dangling srb images."""
    removed = await reap(engine, live_run_ids)
    reclaimed = await prune_images(engine)
    return GcReport(containers_removed=len(removed), image_bytes_reclaimed=reclaimed)
