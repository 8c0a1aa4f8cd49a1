"""Creating a run: the task and the agent checked, then a ``pending`` run stored.

:class:`RunLaunch` is the creating side of :class:`~.orchestrator.RunService` (it inherits
it); what it reads of the service is declared below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srb_tui.config import Settings
from srb_tui.service.events import EventBus, RunCreated
from srb_tui.service.provenance import record_launch
from srb_tui.service.run.agent_specs import check_agent, missing_key
from srb_tui.service.run.model_access import ModelAccess
from srb_tui.service.run.run_faults import LEASE, LaunchError, TaskInvalid, this_process_lease
from srb_tui.store import RunRecord, Store
from srb_tui.store.run_extra import BUDGET, CLIENT_VERSION, AgentBudget

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.runner.backends import Backend
    from srb_tui.schema import TaskLoad


class RunLaunch:
    """``launch`` and the key check it asks for a real client."""

    settings: Settings
    store: Store
    bus: EventBus
    backend: Backend | None
    gateway: Gateway | None
    model_access: ModelAccess | None
    _launched: dict[str, TaskLoad]

    if TYPE_CHECKING:  # the service's own, used here
        def load_task(self, task_ref: str) -> TaskLoad: ...

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
        run = await self.store.runs.create_run(
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
        await self.store.runs.merge_extra(run.id, extra)
        run = await self.store.runs.require_run(run.id)
        await record_launch(self.store, run, load.task, client=checked.client,
                            client_version=client_version,
                            backend=self.backend.kind if self.backend else "local")
        run = await self.store.runs.require_run(run.id)
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
