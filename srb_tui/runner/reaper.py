"""Find srb's containers by label after a restart: reap the dead runs', re-attach the live;
``gc`` also removes the workspace images nothing uses any more.

A run is *live* when the store says it is still in progress; the service passes those
run ids in, best as a call (:data:`LiveRuns`) that reads the store *after* the engine has
been listed: a run another srb process launches between a read of the store and the
listing would otherwise look over, and its agent container would be taken from under it
(seen: ``srb gc`` beside ``srb run``, "container srb-RUN-agent is gone").

Several stores may share one engine, so a caller only ever reaps the
containers that belong to *its* store: those labelled ``srb.store=<its tag>``, and
unlabelled ones (made before stage containers carried the label) whose run id its store
knows. Every other container is left alone, live or not. For live runs the caller
gets handles plus the real ``State.StartedAt``, so the budget keeps counting from the
original start and logs can resume from the last stored line.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import (
    ContainerHandle,
    handle_from_inspect,
    remove,
    state_from_inspect,
)
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.images import prune_images
from srb_tui.runner.spec import LABEL_MANAGED, LABEL_RUN, LABEL_STORE
from srb_tui.runner.workspace import BUILDER_ROLE, prune_workspaces
from srb_tui.timestamps import parse_ts


@dataclass(frozen=True)
class ManagedContainer:
    """A container srb manages, as the engine lists it (run, role, store, state)."""

    handle: ContainerHandle
    status: str
    running: bool
    started_at: datetime | None
    store: str | None = None  # the srb.store label, None when the container has none
    created_at: datetime | None = None

    def owned_by(self, store_tag: str, known_run_ids: Collection[str]) -> bool:
        """Whether this container belongs to the store tagged ``store_tag``."""
        if self.store is not None:
            return self.store == store_tag
        return self.handle.run_id in known_run_ids


@dataclass(frozen=True)
class SkippedEngine:
    """An engine garbage collection could not visit, and why (its error)."""

    name: str
    url: str
    error: str


@dataclass(frozen=True)
class GcReport:
    """What one garbage collection removed, reclaimed and left to other stores."""

    containers_removed: int
    image_bytes_reclaimed: int
    foreign_kept: int = 0  # containers of other stores on the engine, left alone
    removed: tuple[ManagedContainer, ...] = ()
    workspace_images_removed: tuple[str, ...] = ()  # srb-workspace images (tags) removed
    workspace_bytes_reclaimed: int = 0  # their own layers' bytes
    workspace_images_kept: int = 0  # in use by a container or a live run, or another store's
    rows_marked_removed: int = 0  # recorded containers found gone from their engine
    skipped: tuple[SkippedEngine, ...] = ()  # engines that did not answer: not collected

    @property
    def complete(self) -> bool:
        """Whether every engine was visited."""
        return not self.skipped


def _list(api: Any, run_id: str | None) -> list[ManagedContainer]:
    wanted = [f"{LABEL_MANAGED}=1"]
    if run_id is not None:
        wanted.append(f"{LABEL_RUN}={run_id}")
    out = []
    for row in api.containers(all=True, filters={"label": wanted}):
        try:
            data = api.inspect_container(row["Id"])
        except sdk.NotFound:
            continue  # removed meanwhile
        state = state_from_inspect(data)
        out.append(
            ManagedContainer(
                handle=handle_from_inspect(data),
                status=state.status,
                running=state.running,
                started_at=state.started_at,
                store=state.labels.get(LABEL_STORE),
                created_at=parse_ts(data["Created"]) if data.get("Created") else None,
            )
        )
    return out


async def list_managed(
    engine: DockerEngine, run_id: str | None = None, *, store_tag: str | None = None
) -> list[ManagedContainer]:
    """Every container labelled ``srb.managed=1`` (optionally of one run); with
    ``store_tag``, without those labelled as another store's (a copied store shares
    run ids with its original)."""
    api = await engine.api()
    found: list[ManagedContainer] = await engine.call(_list, api, run_id)
    if store_tag is None:
        return found
    return [c for c in found if c.store in (None, store_tag)]


def _absent(api: Any, container_ids: Collection[str]) -> list[str]:
    gone = []
    for container_id in container_ids:
        try:
            api.inspect_container(container_id)
        except sdk.NotFound:
            gone.append(container_id)
    return gone


async def absent_containers(engine: DockerEngine, container_ids: Collection[str]) -> set[str]:
    """Which of ``container_ids`` the engine does not have (it answers "no such
    container"); any other error of the engine is raised, never taken for "gone"."""
    if not container_ids:
        return set()
    api = await engine.api()
    return set(await engine.call(_absent, api, list(container_ids)))


LiveRuns = Collection[str] | Callable[[], Awaitable[Collection[str]]]
"""The live run ids, or a call that reads them: called after the engine is listed, so that
any run whose container the listing holds was already recorded when it is asked."""


async def live_now(live: LiveRuns) -> Collection[str]:
    """The live run ids, read now when ``live`` is a call."""
    return await live() if callable(live) else live


BUILDER_GRACE_SEC = 600.0
"""How old a workspace builder (created, filled, committed, removed: seconds) must be before
a reap takes it for a dead srb's."""


def _younger(c: ManagedContainer, now: datetime, seconds: float) -> bool:
    return c.created_at is not None and (now - c.created_at).total_seconds() < seconds


async def reap(
    engine: DockerEngine,
    live_run_ids: LiveRuns,
    *,
    store_tag: str,
    known_run_ids: Collection[str] = (),
) -> list[ManagedContainer]:
    """Force-remove this store's managed containers whose run is not live; returns what
    was removed. Containers of other stores are never touched, nor a workspace builder
    younger than :data:`BUILDER_GRACE_SEC` (it belongs to no run: another srb on this store
    may be making the image now; an older one was left by an srb that died making it)."""
    listed = await list_managed(engine)
    live = await live_now(live_run_ids)  # after the listing: see LiveRuns
    now = datetime.now(UTC)
    gone = [c for c in listed
            if c.owned_by(store_tag, known_run_ids) and c.handle.run_id not in live
            and not (c.handle.role == BUILDER_ROLE and _younger(c, now, BUILDER_GRACE_SEC))]
    for c in gone:
        await remove(engine, c.handle)
    return gone


async def reattach(
    engine: DockerEngine, live_run_ids: Collection[str], *, store_tag: str | None = None
) -> list[ManagedContainer]:
    """Containers of live runs (running or stopped but not yet collected), to resume;
    with ``store_tag``, only that store's (labelled or unlabelled) ones."""
    return [c for c in await list_managed(engine) if c.handle.run_id in live_run_ids
            and (store_tag is None or c.store in (None, store_tag))]


async def gc(
    engine: DockerEngine,
    live_run_ids: LiveRuns,
    *,
    store_tag: str,
    known_run_ids: Collection[str] = (),
    keep_image_ids: Collection[str] | Callable[[], Awaitable[Collection[str]]] = (),
) -> GcReport:
    """Reap this store's dead runs' containers, then remove the workspace images nothing
    uses any more (see :func:`.workspace.prune_workspaces`; ``keep_image_ids`` are the live
    runs' recorded images, best read after the images are listed) and prune dangling srb
    images."""
    before = await list_managed(engine)
    removed = await reap(engine, live_run_ids, store_tag=store_tag, known_run_ids=known_run_ids)
    foreign = sum(1 for c in before if not c.owned_by(store_tag, known_run_ids))
    workspaces = await prune_workspaces(engine, store_tag=store_tag, keep_ids=keep_image_ids)
    reclaimed = await prune_images(engine)
    return GcReport(containers_removed=len(removed), image_bytes_reclaimed=reclaimed,
                    foreign_kept=foreign, removed=tuple(removed),
                    workspace_images_removed=workspaces.removed,
                    workspace_bytes_reclaimed=workspaces.bytes_reclaimed,
                    workspace_images_kept=workspaces.in_use_kept + workspaces.foreign_kept)
