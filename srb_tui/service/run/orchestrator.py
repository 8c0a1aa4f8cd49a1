"""The run service: one Run's lifecycle from ``pending`` to ``scored``.

``pending → preparing (State A, images) → agent (container running) → collecting →
audit → behavioural → verification → scored``, with the side exits ``cancelled`` and
``infra_error``. Every transition is written to the store before it is announced on
the event bus. The store is the source of truth: :meth:`RunService.recover` picks up
every run a crashed srb left live, re-attaching to agent containers that are still
running (logs resume after the last stored line, the budget still counts from the
container's start) and reaping containers whose run is over.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui import faultpoint
from srb_tui.agents import parse_agent_spec
from srb_tui.agents.errors import AdapterError, ClientError
from srb_tui.config import Settings
from srb_tui.runner import ContainerHandle, DockerEngine, RunnerError, store_tag
from srb_tui.schema import Task, TaskLoad
from srb_tui.service.events import (
    EventBus,
    RunCreated,
)
from srb_tui.service.provenance import record_launch
from srb_tui.service.provenance import stamp as stamp_provenance
from srb_tui.service.run import run_access, run_prepare, run_upkeep
from srb_tui.service.run.agent_kinds import agent_for, uses_gateway
from srb_tui.service.run.agent_phase import STORE_LABEL, AgentLimits, AgentPhase, PhaseContext
from srb_tui.service.run.agent_specs import check_agent, missing_key
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.model_access import ModelAccess, NoModelAccess
from srb_tui.service.run.run_faults import (
    LEASE,
    LaunchError,
    LeaseHeld,
    TaskInvalid,
    TaskNotFound,
    engine_went_away,
    lease_alive,
    remember_adversary_budget,
    score_already_stored,
    state_dir_unwritable,
    this_process_lease,
)
from srb_tui.service.run.run_moves import RunMoves
from srb_tui.service.run.run_prepare import env_image_tag
from srb_tui.sources import StateAError
from srb_tui.store import FINAL_STATUSES, RunRecord, Store
from srb_tui.store.run_extra import BUDGET, CLIENT_VERSION, AgentBudget

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.runner import ExtractLimits, GcReport
    from srb_tui.runner.backends import Backend, Node
    from srb_tui.runner.reaper import SkippedEngine
    from srb_tui.service.run.run_grading import Graded

# Grading (:mod:`.run_grading`, and with it scoring and the stages) and the real clients'
# code are imported where they are first used, not here: ``srb run`` of a built-in agent
# starts its container before either is needed (bench/bench_launch.py).

def store_label(db_path: Path) -> str:
    """A short stable tag of the store a container belongs to, so one srb never reaps
    the containers of another store's runs on the same engine."""
    return store_tag(db_path)


class RunService:
    """Creates runs and drives them through their lifecycle."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        engine: DockerEngine,
        bus: EventBus | None = None,
        *,
        limits: AgentLimits | None = None,
        extract_limits: ExtractLimits | None = None,
        access: ModelAccess | None = None,
        backend: Backend | None = None,
        cancel: dict[str, asyncio.Event] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine
        self.bus = bus or EventBus()
        self.limits = limits or AgentLimits()
        self.extract_limits = extract_limits  # None: the runner's defaults
        # Shared with the services of a pool's nodes, so a cancel reaches the run's drive.
        self._cancel: dict[str, asyncio.Event] = {} if cancel is None else cancel
        #: Where runs go (None or local: this service's own engine, as always).
        self.backend = backend
        self._on_node: dict[str, RunService] = {}
        self._base_ready: set[str] = set()  # nodes srb's base image was brought to
        self._node_lock = asyncio.Lock()
        self.moves = RunMoves(store, self.bus)
        self.ctx = RunContext(settings, store, engine, self.moves, store_label(settings.db_path))
        # The task as :meth:`launch` loaded it, for the drive that follows in this process
        # (loading validates the whole task directory; once per launch is enough).
        self._launched: dict[str, TaskLoad] = {}
        self.store_tag = store_label(settings.db_path)
        self.model_access = access
        self.agent_phase = AgentPhase(PhaseContext(
            store=store, engine=engine, bus=self.bus, limits=self.limits,
            extract_limits=self.extract_limits, store_tag=self.store_tag,
            cancel=self._cancel, say=self.moves.say, run_dir=self.run_dir,
            access=self._model_access,
        ))
        self.gateway: Gateway | None = None  # set by whoever starts srb's model gateway
        # Or started on first need (a real client's run, a grading): see ensure_gateway.
        self.gateway_starter: Callable[[], Awaitable[Gateway | None]] | None = None
        self._gateway_lock = asyncio.Lock()

    async def ensure_gateway(self) -> Gateway | None:
        """The model gateway, started now by ``gateway_starter`` if it is not running yet
        (tried once). A run of a command agent that is not graded never starts it, so its
        launch does not pay for the HTTP stack."""
        async with self._gateway_lock:
            starter, self.gateway_starter = self.gateway_starter, None
            if self.gateway is None and starter is not None:
                self.gateway = await starter()
        return self.gateway

    # -- creating ----------------------------------------------------------------------

    def load_task(self, task_ref: str) -> TaskLoad:
        """The task a run names (its directory or id), loaded and validated afresh."""
        return run_prepare.load_task_ref(self.settings, task_ref)

    async def launch(
        self,
        task_ref: str,
        agent: str,
        *,
        budget_sec: float | None = None,
        model: str | None = None,
        effort: str | None = None,
        client_version: str | None = None,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
    ) -> RunRecord:
        """Validate the task and the agent, then create a ``pending`` run.

        For a real client (``claude-code:MODEL`` …) the client version (task pin, or
        ``client_version``), the effort level and the gateway budget are checked here."""
        load = self.load_task(task_ref)
        if load.task is None or not load.ok or load.missing:  # missing: files a run needs
            first = "; ".join(str(p) for p in (load.errors or load.missing)[:3])
            raise TaskInvalid(f"task {load.task_id} does not validate: {first}")
        checked = check_agent(agent, load.path, effort=effort,
                              harness=load.task.manifest.agent.harness,
                              client_version=client_version, max_cost=max_cost_usd,
                              max_tokens=max_tokens)
        if checked.text is None:
            raise LaunchError(checked.problem or f"agent {agent!r} cannot run")
        if checked.vendor is not None:
            problem = self.key_problem(checked.vendor)
            if problem is not None:
                raise LaunchError(f"agent {agent!r}: {problem}")
        extra: dict[str, object] = {}
        if checked.client is not None:
            if client_version:
                extra[CLIENT_VERSION] = client_version
            if max_cost_usd is not None or max_tokens is not None:
                extra[BUDGET] = AgentBudget(max_cost_usd, max_tokens).to_json()
        budget = budget_sec if budget_sec is not None else load.task.budget_sec
        if budget is None or budget <= 0:
            raise LaunchError(f"task {load.task_id}: no positive budget; pass --budget SECONDS")
        run = await self.store.create_run(
            task_id=load.task_id,
            task_path=str(load.path),
            agent=checked.text,
            model=model or checked.model,
            effort=effort,
            budget_sec=float(budget),
        )
        # The creator drives the run next: its lease keeps a console starting meanwhile
        # from picking the pending run up too (a dead creator's lease does not count).
        extra[LEASE] = this_process_lease()
        await self.store.merge_extra(run.id, extra)
        run = await self.store.require_run(run.id)
        await record_launch(self.store, run, load.task, client=checked.client,
                            client_version=client_version,
                            backend=self.backend.kind if self.backend else "local")
        run = await self.store.require_run(run.id)
        self._launched[run.id] = load
        self.bus.publish(RunCreated(run.id, load.task_id, checked.text))
        return run

    def key_problem(self, vendor: str) -> str | None:
        """Why a real client of ``vendor`` cannot reach its model — its key is not set for
        srb's gateway (the running one's config, else state/config.toml's) — or None. An
        explicit model access (a node's channel) answers for its own keys."""
        if self.model_access is not None:
            return None
        from srb_tui.gateway import GatewayConfigError, load_gateway_config

        try:
            config = (self.gateway.config if self.gateway is not None
                      else load_gateway_config(self.settings.state_dir))
        except GatewayConfigError as exc:
            return str(exc)
        return missing_key(config, vendor)

    # -- transitions ---------------------------------------------------------------------

    async def fail_infra(self, run_id: str, message: str) -> RunRecord:
        """End ``run_id`` in ``infra_error`` (invalid) with ``message``."""
        return await self._fail_infra(run_id, message)

    async def _fail_infra(self, run_id: str, message: str) -> RunRecord:
        return await self.moves.finish(run_id, "infra_error", message, detail=message,
                                       if_live=True, harness_error=message, valid=False)

    # -- driving -------------------------------------------------------------------------

    async def drive(
        self, run_id: str, *, grade: bool = True, adversary_budget_sec: float | None = None
    ) -> RunRecord:
        """Run every remaining phase of ``run_id``; infrastructure faults end in
        ``infra_error`` with the reason, never in a score. ``adversary_budget_sec``
        overrides the task's Stage III budgets (a quick look, not a published score).
        On a pool the run is driven on its node (:mod:`.run_placement`)."""
        if self.pooled:
            return await self._drive_placed(run_id, grade=grade,
                                            adversary_budget_sec=adversary_budget_sec)
        self._cancel.setdefault(run_id, asyncio.Event())
        try:
            await self.moves.hold(run_id)
            self.moves.set_budget(run_id, await remember_adversary_budget(
                self.store, run_id, adversary_budget_sec))
            run = await self.store.require_run(run_id)
            if uses_gateway(run.agent):
                await self.ensure_gateway()
            return await self._drive(run_id, grade=grade)
        except (ClientError, AdapterError, NoModelAccess) as exc:
            # Refused before the agent did anything: nothing of the run is worth keeping.
            from srb_tui.runner.reaper import list_managed

            for c in await list_managed(self.engine, run_id, store_tag=self.store_tag):
                await self.remove_quietly(c.handle)
            return await self._fail_infra(run_id, str(exc))
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
                raise state_dir_unwritable(self.settings.state_dir, run_id, exc) from exc
            if type(exc).__module__.startswith(("requests", "urllib3")):  # the engine's socket
                return await self._fail_infra(
                    run_id, f"lost the Docker engine at {self.engine.base_url}: {exc}; the "
                    "run is invalid (re-run it), not a zero")
            return await self._fail_infra(run_id, str(exc))
        except (RunnerError, StateAError) as exc:
            return await self._fail_infra(run_id, str(exc))
        except Exception as exc:
            from srb_tui.service.grading.ladder import LadderError

            if not isinstance(exc, LadderError):
                raise
            return await self._fail_infra(run_id, str(exc))
        finally:
            self._cancel.pop(run_id, None)
            await self.moves.let_go(run_id)

    async def _drive_placed(self, run_id: str, *, grade: bool,
                            adversary_budget_sec: float | None) -> RunRecord:
        """Drive ``run_id`` on its node of the pool (placing it first when it has none):
        the node's own service drives it; the run's share of the node is released after."""
        from srb_tui.service.run.run_placement import node_for, task_need

        assert self.backend is not None
        run = await self.store.require_run(run_id)
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
            return self
        assert self.backend is not None
        node = self.backend.node(run_node(run))
        return self if node is None else await self.node_service(node)

    @staticmethod
    def driven_elsewhere(run: RunRecord) -> bool:
        """Whether another live srb process on this machine is driving ``run`` (its lease
        names a running pid that is not ours); a killed driver's lease does not count."""
        return lease_alive(run.extra.get(LEASE))

    async def _drive(self, run_id: str, *, grade: bool) -> RunRecord:
        run = await self.store.require_run(run_id)
        load = self._launched.pop(run_id, None) or self.load_task(run.task_path)
        if load.task is None:
            return await self._fail_infra(run_id, f"task {run.task_id} no longer loads")
        task = load.task
        agent = parse_agent_spec(run.agent, load.path)
        kind = agent_for(self.agent_phase, agent)
        handle: ContainerHandle | None = None
        state_a: Path | None = None

        if run.status == "pending":
            await self.moves.to(run_id, "preparing")
            run = await self.store.require_run(run_id)
        if run.status == "preparing":
            state_a, image = await self.prepare(run_id, task)
            if self._cancelled(run_id):
                return await run_upkeep.finish_cancelled(self.moves, run_id)
            await self.moves.to(run_id, "agent")
            handle = await kind.start(run, task, state_a, image)
            faultpoint.reached("agent:started")
            await stamp_provenance(self.store, run_id, "agent")
            run = await self.store.require_run(run_id)
        if run.status == "agent":
            if handle is None and await run_upkeep.agent_never_ran(self.ctx, run):
                state_a, image = await self.prepare(run_id, task)
                handle = await kind.start(run, task, state_a, image)
            if handle is None:
                handle = await self.agent_phase.find_agent_container(run_id)
                if handle is None:
                    return await self._fail_infra(
                        run_id, "the agent container is gone (removed while srb was down?)"
                    )
            outcome = await kind.watch(run, task, handle)
            await kind.close(run_id)
            if await engine_went_away(self.engine, await self.store.require_run(run_id)):
                return await self._fail_infra(
                    run_id, "the Docker engine stopped under the agent (its container was "
                    "signalled by the engine shutting down, not by srb); the run is invalid "
                    "(re-run it), not a zero")
            if self._cancelled(run_id):
                await self.remove_quietly(handle)
                return await run_upkeep.finish_cancelled(self.moves, run_id)
            if outcome.invalid:
                await self.remove_quietly(handle)
                return await self._fail_infra(
                    run_id, f"agent phase stopped on an infrastructure fault: "
                    f"{outcome.detail}; the run is invalid (re-run it), not a zero")
            await self.moves.to(run_id, "collecting")
            run = await self.store.require_run(run_id)
        if run.status == "collecting":
            if handle is None:
                handle = await self.agent_phase.find_agent_container(run_id)
            if handle is None:
                return await self._fail_infra(run_id, "the agent container is gone; "
                                              "nothing to collect")
            aborted = await kind.collect(run, task, handle)
            faultpoint.reached("collect:done")
            await self.remove_quietly(handle)
            if aborted:
                from srb_tui.service.run import run_grading

                return await run_grading.zero_for_collection(self.ctx, run_id, aborted)
            run = await self.store.require_run(run_id)
        if not grade or run.status not in ("collecting", "audit", "behavioural",
                                           "verification"):
            return await self.store.require_run(run_id)
        from srb_tui.service.run import run_grading

        if run.status != "collecting" and \
                await score_already_stored(self.store, self.run_dir(run.id), run):
            return await run_grading.finish_stored_score(self.ctx, run_id)
        gateway = await self.ensure_gateway()
        return (await run_grading.grade(self.ctx, run_id, task, state_a,
                                        gateway=gateway)).run

    async def prepare(self, run_id: str, task: Task) -> tuple[Path, str]:
        """State A and the agent's image for a run (:func:`.run_prepare.prepare`)."""
        return await run_prepare.prepare(self.ctx, run_id, task)

    async def regrade(
        self,
        run_id: str,
        stages: Sequence[str] | None = None,
        *,
        force: bool = False,
        adversary_budget_sec: float | None = None,
    ) -> Graded:
        """Grade a collected run again (all stages, or ``stages``): the one way `srb eval`
        and the console re-grade. Raises LaunchError when the task no longer loads,
        LadderError or StateAError when the submission or State A is missing."""
        from srb_tui.service.run import run_grading

        run = await self.store.require_run(run_id)
        load = self.load_task(run.task_path)
        if load.task is None:
            raise LaunchError(f"run {run_id}: task {run.task_id} no longer loads")
        await self.moves.hold(run_id)
        self.moves.set_budget(run_id, adversary_budget_sec)
        try:
            gateway = await self.ensure_gateway()
            return await run_grading.grade(self.ctx, run_id, load.task, None, gateway=gateway,
                                           stages=stages, force=force)
        finally:
            await self.moves.let_go(run_id)

    # -- cancel, recover -------------------------------------------------------------------

    def _cancelled(self, run_id: str) -> bool:
        event = self._cancel.get(run_id)
        return event is not None and event.is_set()

    def request_cancel(self, run_id: str) -> None:
        """Ask a driven run to stop; the agent container gets TERM, grace, KILL."""
        self._cancel.setdefault(run_id, asyncio.Event()).set()

    async def cancel_stored(self, run_id: str) -> RunRecord:
        """Cancel a run that no process is driving: remove its containers (on its node),
        mark it. A background driver ``srb run`` handed the run to is stopped first
        (:mod:`.handoff`); another live srb's run is refused (:class:`LeaseHeld`)."""
        from srb_tui.service.run.handoff import stop_background_driver

        await stop_background_driver(self.store, run_id)
        run = await run_upkeep.refuse_if_driven(self.store, run_id)
        return await run_upkeep.cancel_on((await self.service_of(run)).ctx, run_id)

    async def recover(self, *, grade: bool = True, only: set[str] | None = None
                      ) -> list[RunRecord]:
        """Finish every run a previous srb left live (``only``: those of them), and first
        reap the containers of runs that are over (on every node of a pool). Each live run
        is driven on from where it stopped (:meth:`drive`); on a pool they are driven at
        once, each on its node. A run another live srb drives is left alone."""
        live = await self.reap_leftovers()
        if only is not None:
            live = [r for r in live if r.id in only]
        if self.pooled:
            return list(await asyncio.gather(*(self._recover_one(r, grade) for r in live)))
        return [await self._recover_one(r, grade) for r in live]

    async def reap_leftovers(self) -> list[RunRecord]:
        """Remove, on every node that answers, this store's containers whose run is over
        (a dead srb's leftovers: a finished run's, a stale workspace builder) and mark
        removed the recorded containers the node no longer has; the live runs, whose
        containers stay."""
        live = await self.store.live_runs()
        services, _skipped = await self._node_services()
        for name, on in services:
            await run_upkeep.reap_leftovers(on.ctx, name)  # reads the live runs again
        return live

    async def _recover_one(self, run: RunRecord, grade: bool) -> RunRecord:
        if self.driven_elsewhere(run):
            self.moves.say(run.id, "driven by another srb process; left alone")
            return run
        try:
            return await self.drive(run.id, grade=grade)
        except LeaseHeld as exc:  # another srb claimed it since we looked
            self.moves.say(run.id, str(exc))
            return await self.store.require_run(run.id)

    async def gc(self) -> tuple[GcReport, set[str]]:
        """Remove this store's containers of runs that are over, the workspace images no
        live run uses and dangling srb images (:func:`.run_upkeep.collect_garbage`), on
        every node that answers; returns the summed report and the live run ids kept. A
        node that does not answer (or fails during the collection) is named in the
        report's ``skipped`` with its error; nothing is copied to any node."""
        from srb_tui.runner.reaper import SkippedEngine

        live: set[str] = set()
        services, skipped = await self._node_services()
        reports = []
        for name, on in services:
            try:
                reports.append(await run_upkeep.collect_garbage(on.ctx, live, name))
            except (RunnerError, OSError) as exc:
                skipped.append(SkippedEngine(name, on.engine.base_url,
                                             f"{type(exc).__name__}: {exc}"))
        report = run_upkeep.summed(reports)
        return replace(report, skipped=(*report.skipped, *skipped)), live

    async def _node_services(self) -> tuple[list[tuple[str, RunService]],
                                            list[SkippedEngine]]:
        """The service of every node that answers, by node name (just this one, as
        ``local``, when not pooled), and the nodes that do not answer with their errors.
        No image is brought to any node (:meth:`node_service`)."""
        from srb_tui.runner.reaper import SkippedEngine
        from srb_tui.service.run.run_node import LOCAL

        if not self.pooled:
            return [(LOCAL, self)], []
        assert self.backend is not None
        healths = await self.backend.probe_all()
        up = [(n.name, await self.node_service(n)) for n in self.backend.nodes.values()
              if n.up]
        down = [SkippedEngine(h.name, h.url, h.error) for h in healths if not h.up]
        return up, down

    def _model_access(self) -> ModelAccess | None:
        """The explicit access given at construction, else one over ``self.gateway``
        (made once, when the gateway is up)."""
        if self.model_access is None and self.gateway is not None:
            self.model_access = run_access.gateway_access(self.ctx, self.gateway)
        return self.model_access

    async def remove_quietly(self, handle: ContainerHandle) -> None:
        """Remove a container of srb's and record its removal; an engine error is ignored."""
        await run_upkeep.remove_quietly(self.ctx, handle)

    # -- paths -------------------------------------------------------------------------

    def run_dir(self, run_id: str) -> Path:
        return self.settings.run_dir(run_id)

    def submission_dir(self, run_id: str) -> Path:
        return self.settings.submission_dir(run_id)


__all__ = [
    "STORE_LABEL", "AgentLimits", "Graded", "LaunchError", "LeaseHeld", "RunService",
    "TaskInvalid", "TaskNotFound", "env_image_tag",
]  # fmt: skip
