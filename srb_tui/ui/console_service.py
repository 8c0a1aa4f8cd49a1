"""How the console hosts a RunService: the store and the engine opened lazily, runs launched
and driven in app workers, one event bus every screen subscribes to.

The store opens on first use (reading history needs no Docker). The engine is asked for
only when something has to run: launching, cancelling, re-grading, or driving on at start
the runs a previous srb left unfinished (pending ones included). When it does not answer,
the operator gets the engine's own message plus how to fix it, never a traceback.

Drive workers belong to the app, not to a screen, so leaving the Run screen does not stop
a run; quitting the console leaves live runs live, and the next start re-attaches.

Once the console has asked for the engine, an :class:`EngineWatch` probes it every few
seconds. While it does not answer, every screen's header says "engine down since …" and
a notification says what that stops; when it answers again the header clears and the
console re-attaches to the runs left live (as at start). The console follows
:class:`EngineStateChanged` events on the bus, whoever publishes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App

from srb_tui.config import Settings
from srb_tui.schema import STAGE_NAMES, Task
from srb_tui.service.app import (
    DOCKER_FIX,
    EngineUnreachable,
    GatewayConfigError,
    IdentityFailed,
    PreparedStateA,
    Services,
    StateAError,
)
from srb_tui.service.catalog import Catalog
from srb_tui.service.engine_state import EngineState, EngineStateChanged, EngineWatch
from srb_tui.service.events import EventBus
from srb_tui.store import FINAL_STATUSES, RunRecord, Store, StoreError
from srb_tui.timestamps import parse_ts

if TYPE_CHECKING:
    from srb_tui.service.grading.ladder_identity import IdentityResult
    from srb_tui.service.grading.rerun import RerunResult
    from srb_tui.service.run.orchestrator import RunService

NO_GRADING = "grading is not available in this build"
STAGES = STAGE_NAMES
# Runs in these statuses were left by an srb that stopped: the console drives them on at
# start, as `srb resume` does — pending and preparing runs from the start (State A, the
# image, the agent), agent/collecting/grading runs by re-attaching to their work. A run
# whose driver lease names another live srb process is left to that process.
REATTACH = frozenset({"pending", "preparing", "agent", "collecting", *STAGE_NAMES})
ENGINE_WATCH_SEC = 5.0


class ConsoleError(Exception):
    """Something the console cannot do now, with a message fit for the operator."""


@dataclass(frozen=True)
class LaunchRequest:
    """What the launch dialog asks for: ``repeats`` runs of one agent on one task."""

    task_id: str
    agent: str
    budget_sec: float
    repeats: int = 1
    model: str | None = None
    effort: str | None = None


def grading_available() -> bool:
    """Whether this build has the three-stage ladder (``srb_tui.service.grading.ladder``)."""
    try:
        return importlib.util.find_spec("srb_tui.service.grading.ladder") is not None
    except (ImportError, ValueError):
        return False


class ConsoleService:
    """The app's handle on the store, the engine and the run service."""

    def __init__(self, app: App[Any], settings: Settings, *,
                 catalog: Catalog | None = None) -> None:
        self.app = app
        self.settings = settings
        self.bus = EventBus()
        self.core = Services(settings, bus=self.bus, catalog=catalog)
        self.grade = True
        self.recover_on_start = True
        self.driving: set[str] = set()
        self.engine_watch_sec = ENGINE_WATCH_SEC
        self.engine_state: EngineState | None = None
        self._watch: EngineWatch | None = None
        self._follower: asyncio.Task[None] | None = None
        self._title = str(app.title)
        self._closed = False
        self._gateway_told = False

    @property
    def engine_problem(self) -> str | None:
        return self.core.engine_problem

    @property
    def catalog(self) -> Catalog:
        """The tasks under the task roots (loaded on first use)."""
        return self.core.catalog

    def reload_catalog(self) -> Catalog:
        """The tasks read again from disk (after an edit, or a new task directory)."""
        return self.core.reload_catalog()

    # -- opening ------------------------------------------------------------------------

    async def store(self) -> Store:
        """The store, opened on first use (raises ConsoleError when it cannot be)."""
        try:
            return await self.core.store()
        except StoreError as exc:
            raise ConsoleError(str(exc)) from exc

    async def service(self) -> RunService:
        """The run service; connects to the engine on first use."""
        await self.store()
        try:
            service = await self.core.runs()
        except (EngineUnreachable, GatewayConfigError) as exc:
            raise ConsoleError(str(exc)) from exc
        finally:
            self._watch_engine()
        if self.core.gateway_problem and not self._gateway_told:
            self._gateway_told = True
            self.app.notify(self.core.gateway_problem, title="gateway", severity="warning",
                            timeout=15)
        return service

    async def prepare_state_a(self, task: Task, *, offline: bool = False) -> PreparedStateA:
        """The task's State A (ConsoleError says why it is not available)."""
        try:
            return await self.core.prepare_state_a(task, offline=offline)
        except (StateAError, OSError) as exc:
            raise ConsoleError(str(exc)) from exc

    async def record_identity(self, task: Task) -> IdentityResult:
        """The identity run, recorded as `srb tasks record` records it."""
        try:
            result, _record = await self.core.record_identity(task)
        except (IdentityFailed, EngineUnreachable) as exc:
            raise ConsoleError(str(exc)) from exc
        return result

    async def rerun_counterexample(
        self, run_id: str, counterexample_id: int, progress: Callable[[str], None]
    ) -> RerunResult:
        """Adjudicate a stored candidate again in the run's verification image (ConsoleError
        says why it cannot be: no such candidate, no image recorded, no engine)."""
        from srb_tui.service.grading.rerun import RerunError, rerun_counterexample

        try:
            store = await self.store()
            service = await self.service()
            return await rerun_counterexample(self.settings, store, service.engine, run_id,
                                              counterexample_id, progress=progress)
        except (RerunError, StoreError) as exc:
            raise ConsoleError(str(exc)) from exc


    async def close(self) -> None:
        """Close the store and the engine (live runs stay live for the next start)."""
        if self._closed:
            return
        self._closed = True
        if self._watch is not None:
            await self._watch.stop()
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
            self._follower = None
        await self.core.close()

    # -- the engine's state -------------------------------------------------------------

    def _watch_engine(self) -> None:
        """Start probing the engine (from the first time the console asks for it)."""
        if self._watch is None and not self._closed:
            self._watch = EngineWatch(self.core.engine, self.bus,
                                      interval_sec=self.engine_watch_sec)
            self._watch.start()

    async def _follow_engine(self) -> None:
        async with self.bus.subscribe() as queue:
            while True:
                event = await queue.get()
                if isinstance(event, EngineStateChanged):
                    self._engine_changed(event.state)

    def _engine_changed(self, state: EngineState) -> None:
        """Show a flip of the engine's state; re-attach to live runs when it is back."""
        before, self.engine_state = self.engine_state, state
        if state.status == "down":
            if before is not None and before.status == "down":
                return
            self.app.title = f"{self._title} · engine down since {_clock(state.checked_at)}"
            self.app.notify(
                f"The Docker engine does not answer: {state.detail}\nRuns cannot start, be "
                f"graded or be cancelled until it is back; srb checks every "
                f"{self.engine_watch_sec:g} s and re-attaches to live runs then.",
                title="engine down", severity="error", timeout=30)
            return
        if before is None or before.status != "down":
            return  # up as expected: nothing to show
        self.app.title = self._title
        then = " live runs are re-attached." if self.recover_on_start else ""
        self.app.notify(f"The Docker engine answers again (version {state.version}).{then}",
                        title="engine back", timeout=10)
        if self.recover_on_start:
            self._spawn(self._recover(), name="re-attach", group="console-start")

    # -- workers ------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, None], *, name: str, group: str) -> None:
        async def guarded() -> None:
            try:
                await coro
            except ConsoleError as exc:
                self.app.notify(str(exc), title=name, severity="error", timeout=15)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.app.notify(f"{type(exc).__name__}: {exc}", title=name, severity="error",
                                timeout=15)

        self.app.run_worker(guarded(), name=name, group=group, exit_on_error=False)

    def start(self) -> None:
        """At console start: drive on every run a previous srb left unfinished (pending,
        preparing, or with work under way) that no other live srb process drives; follow
        the engine's state from then on."""
        # A task of its own, not an app worker: it lasts as long as the console, and
        # workers are what screens (and tests) wait to complete.
        if self._follower is None:
            self._follower = asyncio.get_running_loop().create_task(
                self._follow_engine(), name="srb-engine-follower")
        if self.recover_on_start:
            self._spawn(self._recover(), name="re-attach", group="console-start")

    async def _recover(self) -> None:
        if not self.settings.db_path.exists():
            return  # no history yet: nothing to re-attach, and no file made just by looking
        try:
            store = await self.store()
            from srb_tui.service.run.orchestrator import RunService

            live = [r for r in await store.runs.live_runs()
                    if r.status in REATTACH and not RunService.driven_elsewhere(r)]
        except (ConsoleError, StoreError):
            return  # the Runs screen explains a broken store
        if not live:
            return
        try:
            await self.service()
        except ConsoleError as exc:
            self.app.notify(
                f"{len(live)} run(s) were left live and cannot be re-attached now: {exc}\n"
                "They are re-attached when the engine answers.",
                title="re-attach", severity="warning", timeout=20,
            )
            return
        for run in live:
            if run.id not in self.driving:
                self.drive(run.id)
        waiting = sum(1 for r in live if r.status in ("pending", "preparing"))
        parts = [f"re-attached to {len(live) - waiting} live run(s)"] if len(live) > waiting \
            else []
        if waiting:
            parts.append(f"started {waiting} pending run(s)")
        self.app.notify("; ".join(parts), title="re-attach")

    def launch(self, request: LaunchRequest,
               on_launched: Callable[[list[RunRecord]], None] | None = None) -> None:
        """Create ``request.repeats`` runs, drive each in its own worker, then call
        ``on_launched`` with them (the first is the one the console opens)."""
        self._spawn(self._launch(request, on_launched), name="launch", group="console-launch")

    async def _launch(self, request: LaunchRequest,
                      on_launched: Callable[[list[RunRecord]], None] | None) -> None:
        from srb_tui.service.run.orchestrator import LaunchError

        service = await self.service()
        runs: list[RunRecord] = []
        try:
            for _ in range(request.repeats):
                runs.append(await service.launch(
                    request.task_id, request.agent, budget_sec=request.budget_sec,
                    model=request.model, effort=request.effort,
                ))
        except (LaunchError, StoreError) as exc:
            raise ConsoleError(str(exc)) from exc
        finally:
            for run in runs:
                self.drive(run.id)
        if on_launched is not None and runs:
            on_launched(runs)

    def drive(self, run_id: str) -> None:
        """Drive ``run_id`` through its remaining phases in an app worker."""
        self.driving.add(run_id)
        self._spawn(self._drive(run_id), name=f"run {run_id}", group="console-drive")

    async def _drive(self, run_id: str) -> None:
        try:
            service = await self.service()
            grade = self.grade and grading_available()
            try:
                run = await service.drive(run_id, grade=grade)
            except Exception as exc:
                if type(exc).__name__ == "LadderError":
                    raise ConsoleError(str(exc)) from exc
                raise
            if not grade and run.status == "collecting":
                reason = NO_GRADING if self.grade else "grading is switched off"
                self.app.notify(f"run {run_id} collected; {reason}", title=f"run {run_id}")
        finally:
            self.driving.discard(run_id)

    def cancel(self, run_id: str) -> None:
        """Cancel ``run_id``: ask its driver to stop, or cancel it in the store when no
        one in this console drives it."""
        self._spawn(self._cancel(run_id), name=f"cancel {run_id}", group="console-cancel")

    async def _cancel(self, run_id: str) -> None:
        store = await self.store()
        run = await store.runs.require_run(run_id)
        if run.status in FINAL_STATUSES:
            self.app.notify(f"run {run_id} is already {run.status}", title="cancel")
            return
        service = await self.service()
        if run_id in self.driving:
            service.request_cancel(run_id)
            self.app.notify(f"cancelling {run_id}: the agent gets TERM, then KILL",
                            title="cancel")
        else:
            await service.cancel_stored(run_id)

    def regrade(self, run_id: str, stage: str) -> None:
        """Grade one stage of ``run_id`` again with the ladder, in an app worker."""
        if not grading_available():
            self.app.notify(NO_GRADING, title="re-grade", severity="warning")
            return
        if stage not in STAGES:
            self.app.notify(f"unknown stage {stage!r}", title="re-grade", severity="error")
            return
        self._spawn(self._regrade(run_id, stage), name=f"re-grade {run_id}",
                    group="console-grade")

    async def _regrade(self, run_id: str, stage: str) -> None:
        from srb_tui.service.grading.ladder import LadderError
        from srb_tui.service.run.orchestrator import LaunchError

        if run_id in self.driving:
            raise ConsoleError(f"run {run_id} is still being driven; re-grade it when it ends")
        service = await self.service()
        self.driving.add(run_id)
        try:
            await service.regrade(run_id, (stage,))
        except (LadderError, LaunchError, StateAError) as exc:
            raise ConsoleError(str(exc)) from exc
        finally:
            self.driving.discard(run_id)
        self.app.notify(f"run {run_id}: {stage} graded again", title="re-grade")


def _clock(ts: str) -> str:
    """``HH:MM:SS`` (UTC) of a store timestamp, or the timestamp itself."""
    moment = parse_ts(ts)
    return moment.strftime("%H:%M:%S UTC") if moment is not None else ts


__all__ = [
    "DOCKER_FIX",
    "NO_GRADING",
    "ConsoleError",
    "ConsoleService",
    "LaunchRequest",
    "grading_available",
]
