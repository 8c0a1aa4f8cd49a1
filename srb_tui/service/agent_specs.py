"""What a front end may know about agent specs without importing the agents room: the
client kinds there are, and whether a spec text is one srb can run for a task."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from srb_tui.agents import AgentSpecError, parse_agent_spec, plan_agent
from srb_tui.agents.spec import CLIENT_KINDS


@dataclass(frozen=True)
class AgentCheck:
    """The spec as srb records it (``text``), or why it cannot run (``problem``)."""

    text: str | None
    problem: str | None


def check_agent(spec_text: str, task_dir: Path) -> AgentCheck:
    """Whether ``spec_text`` names an agent srb can run on the task at ``task_dir``."""
    try:
        spec = parse_agent_spec(spec_text, task_dir)
        plan_agent(spec)
    except AgentSpecError as exc:
        return AgentCheck(None, str(exc))
    return AgentCheck(spec.text, None)


__all__ = ["CLIENT_KINDS", "AgentCheck", "check_agent"]
