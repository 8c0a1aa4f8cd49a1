"""Service calls the campaign scheduler needs beyond launch/drive/cancel: checking an agent
spec before a cell is planned, and clearing the stage containers a killed srb left for a
run. Here, so that ``campaigns/`` reaches agents and the engine only through the service.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from srb_tui.agents import AgentSpecError, parse_agent_spec, plan_agent
from srb_tui.runner import RunnerError, list_managed, remove
from srb_tui.service.orchestrator import RunService


def agent_problem(agent: str, task_path: str) -> str | None:
    """A message when ``agent`` is not a usable agent spec for the task, else None."""
    try:
        plan_agent(parse_agent_spec(agent, Path(task_path)))
    except AgentSpecError as exc:
        return str(exc)
    return None


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
