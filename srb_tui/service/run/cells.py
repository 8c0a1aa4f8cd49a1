"""Service calls the campaign scheduler needs beyond launch/drive/cancel: checking an agent
spec before a cell is planned (the one check of ``service.agent_specs``), and clearing the
stage containers a killed srb left for a run. Here, so that ``campaigns/`` reaches agents
and the engine only through the service.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from srb_tui.runner import RunnerError, list_managed, remove
from srb_tui.service.run.agent_specs import check_agent
from srb_tui.service.run.orchestrator import RunService


def agent_problem(
    agent: str,
    task_path: str,
    *,
    effort: str | None = None,
    harness: str | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
) -> str | None:
    """A message when ``agent`` (with its effort and budgets) cannot run on the task, else
    None: :func:`srb_tui.service.run.agent_specs.check_agent`, the check ``srb run`` and the
    launch dialog make, so a spec one accepts every other accepts."""
    checked = check_agent(agent, Path(task_path), effort=effort, harness=harness,
                          max_cost=max_cost, max_tokens=max_tokens)
    if checked.text is not None:
        return None
    return checked.problem if checked.field == "Agent" else (
        f"{checked.field.lower()}: {checked.problem}")


async def clear_stage_containers(service: RunService, run_id: str) -> int:
    """Remove every container of ``run_id`` but its agent container (grading restarts
    from Stage I on re-attach, and a leftover would block the new container's name; the
    agent container is kept: re-attach and collection need it). Returns how many."""
    removed = 0
    for found in await list_managed(service.engine, run_id, store_tag=service.store_tag):
        if found.handle.role != "agent":
            with contextlib.suppress(RunnerError):
                await remove(service.engine, found.handle)
                removed += 1
    return removed
