"""What the agent phase asks of the runner: the container's main command, trees to put
in before it starts, environment, and (for real clients) the command of each round.

Built-in agents do all their work in the container's main process. Real clients keep
the container alive with a holder process and run one ``exec`` per round, so a session
can be resumed with "continue" (see :mod:`srb_tui.agents.rounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from srb_tui.agents.spec import AgentSpec, AgentSpecError

REPO = "/workspace/repo"
REPLAY_DIR = "/workspace/.srb-replay"
HOLDER = ("sleep", "infinity")


@dataclass(frozen=True)
class Upload:
    """A host tree copied into the container before it starts, owned by the agent."""

    source: Path
    dest: str


@dataclass(frozen=True)
class AgentPlan:
    """The agent phase of one run, as the runner executes it."""

    agent: AgentSpec
    command: tuple[str, ...]
    uploads: tuple[Upload, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    uses_rounds: bool = False


_UNTOUCHED = (
    "bash", "-c",
    'echo "untouched: handing the repository back as it was given"; '
    'find "$1" -type f | wc -l | sed "s/^/files in the workspace: /"',
    "untouched", REPO,
)

_REPLAY = (
    "bash", "-c",
    'set -eu; repo="$1"; src="$2"; '
    'echo "replay: replacing the workspace with the recorded submission"; '
    'find "$repo" -mindepth 1 -maxdepth 1 -exec rm -rf {} +; '
    'cp -a "$src"/. "$repo"/; '
    'rm -rf "$src"; '
    'find "$repo" -type f | wc -l | sed "s/^/files in the workspace: /"',
    "replay", REPO, REPLAY_DIR,
)


def plan_agent(agent: AgentSpec) -> AgentPlan:
    """The plan for a built-in agent. Real clients have their own adapters."""
    plan = _PLANS.get(agent.kind)
    if plan is None:
        raise AgentSpecError(
            f"agent {agent.text!r}: the {agent.kind} client is not available in this build; "
            "use untouched, replay:NAME or command:ARGV"
        )
    return plan(agent)


def _replay_plan(agent: AgentSpec) -> AgentPlan:
    assert agent.replay_tree is not None
    return AgentPlan(agent, _REPLAY, uploads=(Upload(agent.replay_tree, REPLAY_DIR),))


_PLANS: dict[str, Callable[[AgentSpec], AgentPlan]] = {
    "untouched": lambda agent: AgentPlan(agent, _UNTOUCHED),
    "replay": _replay_plan,
    "command": lambda agent: AgentPlan(agent, agent.argv),
}
