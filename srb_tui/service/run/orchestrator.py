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
)
from srb_tui.service.provenance import stamp as stamp_provenance
from srb_tui.service.run import run_access, run_prepare, run_upkeep
from srb_tui.service.run.agent_kinds import agent_for, uses_gateway
from srb_tui.service.run.agent_phase import STORE_LABEL, AgentLimits, AgentPhase, PhaseContext
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.model_access import ModelAccess, NoModelAccess
from srb_tui.service.run.run_faults import (
    LaunchError,
    LeaseHeld,
    TaskInvalid,
    TaskNotFound,
    engine_went_away,
    lease_alive,
    remember_adversary_budget,
    score_already_stored,
    state_dir_unwritable,
)
from srb_tui.service.run.run_launch import RunLaunch
from srb_tui.service.run.run_moves import RunMoves
from srb_tui.service.run.run_pool import PoolSide
from srb_tui.service.run.run_prepare import env_image_tag
from srb_tui.sources import StateAError
from srb_tui.store import RunRecord, Store
from srb_tui.store.run_extra import DriverLease

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.runner import ExtractLimits, GcReport
    from srb_tui.runner.backends import Backend
    from srb_tui.service.run.run_grading import Graded

# Grading (:mod:`.run_grading`, and with it scoring and the stages) and the real clients'
# code are imported where they are first used, not here: ``srb run`` of a built-in agent
# starts its container before either is needed (bench/bench_launch.py).

def store_label(db_path: Path) -> str:
    """A short stable tag of the store a container belongs to, so one srb never reaps
    the containers of another store's runs on the same engine."""
    return store_tag(db_path)


class RunService(RunLaunch, PoolSide):
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
            run = await self.store.runs.require_run(run_id)
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

    @staticmethod
    def driven_elsewhere(run: RunRecord) -> bool:
        """Whether another live srb process on this machine is driving ``run`` (its lease
        names a running pid that is not ours); a killed driver's lease does not count."""
        return lease_alive(DriverLease.read(run.extra))

    async def _drive(self, run_id: str, *, grade: bool) -> RunRecord:
        run = await self.store.runs.require_run(run_id)
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
            run = await self.store.runs.require_run(run_id)
        if run.status == "preparing":
            state_a, image = await self.prepare(run_id, task)
            if self._cancelled(run_id):
                return await run_upkeep.finish_cancelled(self.moves, run_id)
            await self.moves.to(run_id, "agent")
            handle = await kind.start(run, task, state_a, image)
            faultpoint.reached("agent:started")
            await stamp_provenance(self.store, run_id, "agent")
            run = await self.store.runs.require_run(run_id)
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
            if await engine_went_away(self.engine, await self.store.runs.require_run(run_id)):
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
            run = await self.store.runs.require_run(run_id)
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
            run = await self.store.runs.require_run(run_id)
        if not grade or run.status not in ("collecting", "audit", "behavioural",
                                           "verification"):
            return await self.store.runs.require_run(run_id)
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

        run = await self.store.runs.require_run(run_id)
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
        live = await self.store.runs.live_runs()
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
            return await self.store.runs.require_run(run.id)

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
