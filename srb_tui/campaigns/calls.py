"""Every call the campaign scheduler makes into the run service, in one place.

The scheduler drives cells only through ``RunCalls``; ``ServiceCalls`` adapts
``srb_tui.service.orchestrator.RunService`` (launch, drive, cancel, the driver lease). A
merge that changes the service's API changes this file only.
"""

from __future__ import annotations

from typing import Protocol

from srb_tui.service.cells import agent_problem, clear_stage_containers
from srb_tui.service.orchestrator import LaunchError, RunService
from srb_tui.store import RunRecord, Store


class RunCalls(Protocol):
    store: Store

    def check_agent(self, agent: str, task_path: str) -> str | None: ...

    async def launch(self, task_path: str, agent: str, *, campaign: str,
                     budget_sec: float | None, model: str | None, effort: str | None,
                     max_cost: float | None) -> RunRecord: ...

    async def drive(self, run_id: str, *, adversary_budget_sec: float | None) -> RunRecord: ...

    def driven_elsewhere(self, run: RunRecord) -> bool: ...

    def request_cancel(self, run_id: str) -> None: ...

    async def cancel_stored(self, run_id: str) -> RunRecord: ...

    async def clear_grading(self, run_id: str) -> int: ...


class ServiceCalls:
    """``RunCalls`` over a RunService."""

    def __init__(self, service: RunService) -> None:
        self.service = service
        self.store = service.store

    def check_agent(self, agent: str, task_path: str) -> str | None:
        """A message when ``agent`` is not a usable agent spec for the task, else None."""
        return agent_problem(agent, task_path)

    async def launch(self, task_path: str, agent: str, *, campaign: str,
                     budget_sec: float | None, model: str | None, effort: str | None,
                     max_cost: float | None) -> RunRecord:
        run = await self.service.launch(task_path, agent, budget_sec=budget_sec, model=model,
                                        effort=effort, max_cost_usd=max_cost)
        extra: dict[str, object] = {"campaign": campaign}
        if max_cost is not None:
            # The gateway enforces it for real clients (the run's "budget"); kept here too
            # so a report can show what each cell was allowed.
            extra["max_cost_usd"] = max_cost
        return await self.store.merge_extra(run.id, extra, batch_id=campaign)

    async def drive(self, run_id: str, *, adversary_budget_sec: float | None) -> RunRecord:
        return await self.service.drive(run_id, adversary_budget_sec=adversary_budget_sec)

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


__all__ = ["LaunchError", "RunCalls", "ServiceCalls"]
