"""Every call the campaign scheduler makes into the run service, in one place.

The scheduler drives cells only through ``RunCalls``; ``ServiceCalls`` adapts
``srb_tui.service.run.orchestrator.RunService`` (launch, drive, cancel, the driver lease). A
merge that changes the service's API changes this file only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from srb_tui.campaigns.plan import TaskInfo
from srb_tui.service.run.agent_specs import check_agent
from srb_tui.service.run.cells import agent_problem, clear_stage_containers
from srb_tui.service.run.orchestrator import LaunchError, RunService
from srb_tui.store import RunRecord, Store
from srb_tui.store.campaign_records import CampaignConfigRecord
from srb_tui.store.run_extra_more import CampaignCell


class RunCalls(Protocol):
    store: Store

    def check_agent(self, config: CampaignConfigRecord, task: TaskInfo) -> str | None: ...

    async def launch(self, task_path: str, config: CampaignConfigRecord, *, campaign: str,
                     budget_sec: float | None) -> RunRecord: ...

    async def drive(self, run_id: str, *, adversary_budget_sec: float | None,
                    grade: bool = True) -> RunRecord: ...

    def driven_elsewhere(self, run: RunRecord) -> bool: ...

    def request_cancel(self, run_id: str) -> None: ...

    async def cancel_stored(self, run_id: str) -> RunRecord: ...

    async def clear_grading(self, run_id: str) -> int: ...

    async def reap_leftovers(self) -> None: ...


def config_problem(config: CampaignConfigRecord, task: TaskInfo) -> str | None:
    """The check ``srb run`` makes of a configuration's agent on a task (no engine, no
    store: ``srb campaign validate`` uses it too)."""
    return agent_problem(config.agent, task.path, effort=config.effort,
                         harness=task.harness, max_cost=config.max_cost,
                         max_tokens=config.max_tokens)


class ServiceCalls:
    """``RunCalls`` over a RunService."""

    def __init__(self, service: RunService) -> None:
        self.service = service
        self.store = service.store

    def check_agent(self, config: CampaignConfigRecord, task: TaskInfo) -> str | None:
        """A message when the configuration cannot run on the task, else None: the check
        ``srb run`` makes (agent spec, a real client's effort and budgets, and its
        vendor's key for srb's gateway)."""
        problem = config_problem(config, task)
        if problem is None:
            vendor = check_agent(config.agent, Path(task.path), effort=config.effort,
                                 harness=task.harness).vendor
            if vendor is not None and (missing := self.service.key_problem(vendor)):
                problem = f"agent {config.agent!r}: {missing}"
        return problem

    async def launch(self, task_path: str, config: CampaignConfigRecord, *, campaign: str,
                     budget_sec: float | None) -> RunRecord:
        """Launch the cell's run as ``srb run`` does: a real client goes through the
        gateway with the configuration's effort and budgets; the configuration's own
        wall clock wins over the campaign's ``budget_sec``."""
        run = await self.service.launch(
            task_path, config.agent, budget_sec=config.budget_sec or budget_sec,
            model=config.model, effort=config.effort, max_cost_usd=config.max_cost,
            max_tokens=config.max_tokens)
        cell = CampaignCell(campaign, config.max_cost)
        return await self.store.runs.merge_extra(run.id, cell.to_json(), batch_id=campaign)

    async def drive(self, run_id: str, *, adversary_budget_sec: float | None,
                    grade: bool = True) -> RunRecord:
        return await self.service.drive(run_id, grade=grade,
                                        adversary_budget_sec=adversary_budget_sec)

    def driven_elsewhere(self, run: RunRecord) -> bool:
        return RunService.driven_elsewhere(run)

    def request_cancel(self, run_id: str) -> None:
        self.service.request_cancel(run_id)

    async def cancel_stored(self, run_id: str) -> RunRecord:
        return await self.service.cancel_stored(run_id)

    async def clear_grading(self, run_id: str) -> int:
        """Remove the stage containers a killed srb left for ``run_id`` (grading restarts
        from Stage I on re-attach, and a leftover would block the new container's name).
        The agent container is kept: re-attach and collection need it."""
        return await clear_stage_containers(self.service, run_id)

    async def reap_leftovers(self) -> None:
        """Before a campaign (re)starts: remove what a dead srb left on every node (the
        containers of runs that are over, a workspace builder it died making)."""
        await self.service.reap_leftovers()


__all__ = ["LaunchError", "RunCalls", "ServiceCalls"]
