"""A run service on a pool of engines: placing a run on its node, the service bound to each
node, and the pool's capacity. :class:`PoolSide` is that side of
:class:`~.orchestrator.RunService` (it inherits it); what it reads of the service is
declared below. Not pooled (no backend, or a local one), every method answers for this
service's own engine.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerError
from srb_tui.service.events import EventBus
from srb_tui.service.run.agent_phase import AgentLimits
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.model_access import ModelAccess
from srb_tui.store import FINAL_STATUSES, RunRecord, Store

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.runner import ExtractLimits
    from srb_tui.runner.backends import Backend, Node
    from srb_tui.runner.reaper import SkippedEngine
    from srb_tui.schema import TaskLoad
    from srb_tui.service.run.orchestrator import RunService


class PoolSide:
    """Where runs go when srb drives a pool of engines."""

    settings: Settings
    store: Store
    engine: DockerEngine
    bus: EventBus
    limits: AgentLimits
    extract_limits: ExtractLimits | None
    model_access: ModelAccess | None
    backend: Backend | None
    ctx: RunContext
    _cancel: dict[str, asyncio.Event]
    _on_node: dict[str, RunService]
    _base_ready: set[str]
    _node_lock: asyncio.Lock

    if TYPE_CHECKING:  # the service's own, used here
        async def ensure_gateway(self) -> Gateway | None: ...

        async def fail_infra(self, run_id: str, message: str) -> RunRecord: ...

        def load_task(self, task_ref: str) -> TaskLoad: ...

    async def _drive_placed(self, run_id: str, *, grade: bool,
                            adversary_budget_sec: float | None) -> RunRecord:
        """Drive ``run_id`` on its node of the pool (placing it first when it has none):
        the node's own service drives it; the run's share of the node is released after."""
        from srb_tui.service.run.run_placement import node_for, task_need

        assert self.backend is not None
        run = await self.store.runs.require_run(run_id)
        if run.status in FINAL_STATUSES:
            return run
        try:
            need = task_need(self.load_task(run.task_path).task)
        except Exception:  # the drive says what is wrong with the task
            need = task_need(None)
        placed = await node_for(self.ctx, self.backend, run, need)
        if isinstance(placed, str):
            return await self.fail_infra(run_id, placed)
        try:
            try:
                on_node = await self.on_node(placed)
            except RunnerError as exc:
                return await self.fail_infra(
                    run_id, f"node {placed.name}: {exc}; the run is invalid (re-run it), "
                    "not a zero")
            return await on_node.drive(run_id, grade=grade,
                                       adversary_budget_sec=adversary_budget_sec)
        finally:
            await self.backend.release(run_id)

    @property
    def _itself(self) -> RunService:
        return cast("RunService", self)  # PoolSide is only ever a RunService's side

    @property
    def pooled(self) -> bool:
        """Whether runs go to the nodes of a pool (not this service's own engine)."""
        return self.backend is not None and not self.backend.local

    async def on_node(self, node: Node) -> RunService:
        """The run service bound to ``node``'s engine, ready to drive a run there: srb's
        base image is brought to the node first (copied from srb's own engine, or pulled
        from the registry). Only placement comes here; upkeep (gc, reaping, cancel) uses
        :meth:`node_service` and never copies an image."""
        svc = await self.node_service(node)
        async with self._node_lock:
            if node.name not in self._base_ready:
                from srb_tui.runner.image_copy import ensure_image

                if node.engine is not self.engine:
                    await ensure_image(node.engine, self.engine, self.settings.base_image,
                                       registry=self.backend.registry if self.backend
                                       else None)
                self._base_ready.add(node.name)
        return svc

    async def node_service(self, node: Node) -> RunService:
        """The run service bound to ``node``'s engine (made once). It shares this
        service's store, bus, cancels and gateway."""
        async with self._node_lock:
            svc = self._on_node.get(node.name)
            if svc is None:
                from srb_tui.service.run.orchestrator import RunService

                svc = RunService(self.settings, self.store, node.engine, self.bus,
                                 limits=self.limits, extract_limits=self.extract_limits,
                                 access=self.model_access, cancel=self._cancel)
                svc.gateway_starter = self.ensure_gateway
                self._on_node[node.name] = svc
        return svc

    async def pool_capacity(self) -> tuple[float, int] | None:
        """CPUs and memory (MB) of the pool's engines that answer (None: not pooled; a
        campaign then schedules against this machine)."""
        if not self.pooled:
            return None
        assert self.backend is not None
        await self.backend.probe_all()
        return self.backend.capacity()

    async def service_of(self, run: RunRecord) -> RunService:
        """The service whose engine holds ``run``'s containers (this one unless pooled)."""
        from srb_tui.service.run.run_node import run_node

        if not self.pooled:
            return self._itself
        assert self.backend is not None
        node = self.backend.node(run_node(run))
        return self._itself if node is None else await self.node_service(node)

    async def _node_services(self) -> tuple[list[tuple[str, RunService]],
                                            list[SkippedEngine]]:
        """The service of every node that answers, by node name (just this one, as
        ``local``, when not pooled), and the nodes that do not answer with their errors.
        No image is brought to any node (:meth:`node_service`)."""
        from srb_tui.runner.reaper import SkippedEngine
        from srb_tui.service.run.run_node import LOCAL

        if not self.pooled:
            return [(LOCAL, self._itself)], []
        assert self.backend is not None
        healths = await self.backend.probe_all()
        up = [(n.name, await self.node_service(n)) for n in self.backend.nodes.values()
              if n.up]
        down = [SkippedEngine(h.name, h.url, h.error) for h in healths if not h.up]
        return up, down
