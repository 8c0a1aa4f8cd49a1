"""The composition root: the one place srb's core is wired together.

``open_service(settings)`` yields a :class:`Services` that owns the store, the Docker
engine (on srb's own thread pool), the task catalogue, the event bus and the run service.
The CLI commands and the console both start here, so there is one way to build each part:

* the catalogue loads on first use (listing tasks needs neither store nor engine);
* the store opens on first use (reading history needs no Docker);
* the engine is constructed on first use and connected by :meth:`Services.connect`, which
  turns an engine that does not answer into :class:`EngineUnreachable` with its message;
* the run service needs both, and is made once.

Everything a front end does with the core that is not a run's lifecycle — preparing State
A, the identity run — is a method here too, so no front end wires runner, sources or stage
internals itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.config import Settings
from srb_tui.gateway import GatewayConfig, GatewayConfigError
from srb_tui.runner import DockerEngine, EngineInfo, RunnerError, RunnerPool
from srb_tui.runner.backend_config import BackendConfig, BackendConfigError, load_backend
from srb_tui.schema import Task, archive_facts
from srb_tui.service.catalog import Catalog, load_catalog
from srb_tui.service.events import EventBus
from srb_tui.sources import PreparedStateA, StateAError, TreeDiff, compare_trees, prepare_state_a
from srb_tui.store import Store

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.runner.backends import Backend
    from srb_tui.service.grading.ladder_identity import IdentityResult
    from srb_tui.service.run.orchestrator import RunService

#: Runs one srb process drives at once; sizes the engine's thread pool.
CONCURRENT_RUNS = 4
DOCKER_FIX = "Fix: run `bash scripts/ensure-docker.sh` (installs and starts a Docker engine)."


async def make_backend_of(config: BackendConfig, engine: DockerEngine, concurrent_runs: int
                          ) -> Backend:
    """The backend ``config`` names (the runner's backends load only when used)."""
    from srb_tui.runner.backends import make_backend

    return await make_backend(config, engine, concurrent_runs)


def _quiet(_event: object) -> None:
    return None


class EngineUnreachable(Exception):
    """The Docker engine does not answer; the message says why and how to fix it."""


class IdentityFailed(Exception):
    """The identity run could not measure (State A missing, a stage fault, the engine)."""


class Services:
    """The wired core of one srb process (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        *,
        bus: EventBus | None = None,
        catalog: Catalog | None = None,
        concurrent_runs: int = CONCURRENT_RUNS,
    ) -> None:
        self.settings = settings
        # Loading a task reads its State A archive: keep what was read for the next process.
        archive_facts.keep_on_disk(settings.archive_facts_dir)
        self.bus = bus or EventBus()
        self._catalog = catalog
        self._concurrent_runs = concurrent_runs
        self._store: Store | None = None
        self._engine: DockerEngine | None = None
        self._engine_ok = False
        self._backend: Backend | None = None
        self._runs: RunService | None = None
        self._gateway: Gateway | None = None
        self.gateway_problem: str | None = None
        self._lock = asyncio.Lock()
        self.engine_problem: str | None = None

    # -- the parts ------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        """The tasks under the task roots (loaded on first use)."""
        if self._catalog is None:
            self._catalog = load_catalog(self.settings.task_roots)
        return self._catalog

    def reload_catalog(self) -> Catalog:
        self._catalog = load_catalog(self.settings.task_roots)
        return self._catalog

    async def store(self) -> Store:
        """The store, opened on first use (StoreError when it cannot be)."""
        if self._store is None:
            async with self._lock:
                if self._store is None:
                    self._store = await Store.open(self.settings.db_path)
        return self._store

    @property
    def engine(self) -> DockerEngine:
        """The engine handle; constructing it never touches Docker (see :meth:`connect`)."""
        if self._engine is None:
            self._engine = DockerEngine(RunnerPool(self._concurrent_runs))
        return self._engine

    def backend_config(self) -> BackendConfig:
        """The execution backend of ``state/config.toml`` (BackendConfigError: a mistake)."""
        return load_backend(self.settings.state_dir)

    async def backend(self) -> Backend:
        """Where runs go: the local engine, or the configured pool (made once; its nodes
        are probed when a run is placed or :meth:`connect` is called)."""
        if self._backend is None:
            try:
                config = self.backend_config()
            except BackendConfigError as exc:
                raise EngineUnreachable(str(exc)) from exc
            self._backend = await make_backend_of(config, self.engine, self._concurrent_runs)
        return self._backend

    async def connect(self) -> EngineInfo:
        """Check the engine answers; EngineUnreachable (with the fix) when it does not.
        With a pool: at least one of its engines must answer (each fault is named)."""
        if not self.backend_config_is_local():
            return await self._connect_pool()
        info = await self.engine.ping()
        if not info.ok:
            self.engine_problem = info.error or "the Docker engine does not answer"
            raise EngineUnreachable(f"{self.engine_problem}\n{DOCKER_FIX}")
        self.engine_problem = None
        self._engine_ok = True
        return info

    def backend_config_is_local(self) -> bool:
        try:
            return self.backend_config().local
        except BackendConfigError:
            return False  # backend() raises with the message

    async def _connect_pool(self) -> EngineInfo:
        try:
            backend = await self.backend()
        except RunnerError as exc:
            self.engine_problem = str(exc)
            raise EngineUnreachable(self.engine_problem) from exc
        healths = await backend.probe_all()
        up = [h for h in healths if h.up]
        if not up:
            self.engine_problem = "no engine of the pool answers: " + "; ".join(
                f"{h.name} ({h.url}): {h.error}" for h in healths)
            raise EngineUnreachable(self.engine_problem)
        self.engine_problem = None
        self._engine_ok = True
        return EngineInfo(ok=True, version=up[0].version)

    async def runs(self) -> RunService:
        """The run service over the store and a connected engine (made once)."""
        if self._runs is not None:
            return self._runs
        # The store (its migrations check) and the engine's first answer wait on different
        # threads: open one while the other is asked.
        if self._engine_ok:
            store = await self.store()
        else:
            opened, answered = await asyncio.gather(self.store(), self.connect(),
                                                    return_exceptions=True)
            for outcome in (opened, answered):  # the store's fault first, as before
                if isinstance(outcome, BaseException):
                    raise outcome
            assert isinstance(opened, Store)
            store = opened
        async with self._lock:
            if self._runs is None:
                from srb_tui.service.run.orchestrator import RunService

                backend = await self.backend()
                service = RunService(self.settings, store, self.engine, self.bus,
                                     backend=backend)
                config = self._gateway_config()  # a bad config file is refused now
                service.gateway_starter = lambda: self._start_gateway(store, config)
                self._runs = service
        return self._runs

    def _gateway_config(self) -> GatewayConfig:
        """The gateway's configuration; a bad config file raises GatewayConfigError
        (naming file and key)."""
        from srb_tui.gateway import load_gateway_config

        return load_gateway_config(self.settings.state_dir)

    async def _start_gateway(self, store: Store, config: GatewayConfig) -> Gateway | None:
        """srb's model gateway for this process's runs, started by the run service on first
        need. A gateway that cannot start (another srb process serves this state dir)
        leaves ``gateway_problem`` set and returns None: runs of real clients are then
        refused with that message."""
        from srb_tui.gateway import Gateway, GatewayError

        try:
            gateway = await Gateway.start(config, store, self.settings.gateway_dir)
        except GatewayError as exc:
            self.gateway_problem = f"model gateway not started: {exc}"
            return None
        self._gateway = gateway
        return gateway

    async def close(self) -> None:
        """Close the gateway, the store and the engine (live runs stay live for the next
        start)."""
        if archive_facts.kept_in() == self.settings.archive_facts_dir:
            archive_facts.keep_on_disk(None)
        if self._gateway is not None:
            with contextlib.suppress(Exception):
                await self._gateway.close()
            self._gateway = None
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self._engine is not None:
            with contextlib.suppress(Exception):
                self._engine.close()
            self._engine = None
        if self._store is not None:
            with contextlib.suppress(Exception):
                await self._store.close()
            self._store = None
        self._runs = None
        self._engine_ok = False

    # -- what front ends ask of the core besides runs -----------------------------------

    async def prepare_state_a(
        self, task: Task, *, offline: bool = False, progress: Callable[[str], None] | None = None
    ) -> PreparedStateA:
        """The task's verified State A from the cache (fetched unless ``offline``);
        StateAError says what is missing."""
        return await asyncio.to_thread(
            prepare_state_a, task.dir, task.state_a, self.settings.state_a_cache,
            offline=offline, progress=progress,
        )

    @staticmethod
    def compare_trees(left: Path, right: Path) -> TreeDiff:
        """Two trees compared by content (file list and hashes)."""
        return compare_trees(left, right)

    async def record_identity(
        self, task: Task, publish: Callable[[object], None] | None = None
    ) -> tuple[IdentityResult, Path]:
        """The identity run (State A graded against itself) and where its record was
        written; IdentityFailed when it could not measure."""
        from srb_tui.grader.envelope import atomic_write_json
        from srb_tui.service.grading.image_plan import ImageMapError, load_image_map
        from srb_tui.service.grading.ladder_identity import record_identity
        from srb_tui.service.grading.stages.common import StageFault

        try:
            original = await self.prepare_state_a(task)
        except StateAError as exc:
            raise IdentityFailed(f"{task.id}: {exc}") from exc
        await self.connect()
        try:
            result = await record_identity(
                self.engine, task, original.tree, base_image=self.settings.base_image,
                publish=publish or _quiet, image_map=load_image_map(self.settings.state_dir),
            )
        except (StageFault, RunnerError, ImageMapError) as exc:
            raise IdentityFailed(f"{task.id}: identity run failed: {exc}") from exc
        target = self.settings.identity_dir / f"{result.task_id}.json"
        await asyncio.to_thread(
            atomic_write_json, target, {**result.to_json(), "envelope": result.envelope}
        )
        return result, target


@contextlib.asynccontextmanager
async def open_service(
    settings: Settings,
    *,
    bus: EventBus | None = None,
    catalog: Catalog | None = None,
    concurrent_runs: int = CONCURRENT_RUNS,
) -> AsyncIterator[Services]:
    """The wired core for ``settings``, closed on exit."""
    services = Services(settings, bus=bus, catalog=catalog, concurrent_runs=concurrent_runs)
    try:
        yield services
    finally:
        await services.close()


__all__ = [
    "CONCURRENT_RUNS",
    "DOCKER_FIX",
    "BackendConfigError",
    "EngineUnreachable",
    "GatewayConfigError",
    "IdentityFailed",
    "PreparedStateA",
    "RunnerError",
    "Services",
    "StateAError",
    "open_service",
]
