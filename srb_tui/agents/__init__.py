"""Agent-phase adapters: built-in agents (untouched, replay, command) and the round loop
the real clients (Claude Code, Codex CLI, mini-swe-agent) plug into."""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from srb_tui.agents.plan import AgentPlan, Upload, plan_agent
    from srb_tui.agents.rounds import LoopOutcome, RoundRecord, StopReason, run_rounds
    from srb_tui.agents.spec import AgentSpec, AgentSpecError, parse_agent_spec

__all__ = [
    "AgentPlan",
    "AgentSpec",
    "AgentSpecError",
    "LoopOutcome",
    "RoundRecord",
    "StopReason",
    "Upload",
    "parse_agent_spec",
    "plan_agent",
    "run_rounds",
]

__getattr__ = exports_on_first_use(__name__)
