"""One interface for both kinds of agent, chosen once from the run's agent spec.

A built-in agent (``replay:``, ``command:``, ``scripted:`` …) does its work in the agent
container's main process; a real client (Claude Code, Codex CLI, mini-swe-agent) gets a
holder process, the pinned client, the model gateway and a round loop of ``exec`` calls.
The orchestrator does not tell them apart: it asks :func:`agent_for` for the kind and calls
``start``, ``watch``, ``collect`` and ``close`` on it. ``watch`` returns an
:class:`~srb_tui.service.run.agent_phase.AgentOutcome` that says whether the run is
invalid, so the next phase reads the result directly instead of re-reading ``runs.extra``.

A real client's code (installs, adapters, the round loop) is imported only when a real
client runs, so a built-in agent's launch never pays for it (bench/bench_launch.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from srb_tui.agents.kinds import BUILTIN_KINDS, CLIENT_KINDS, is_client, spec_kind
from srb_tui.agents.spec import AgentSpec
from srb_tui.runner import ContainerHandle
from srb_tui.schema import Task
from srb_tui.service.run.agent_phase import AgentOutcome, AgentPhase
from srb_tui.store import RunRecord


class AgentKind(Protocol):
    """What the orchestrator does with an agent, whichever kind it is."""

    async def start(self, run: RunRecord, task: Task, state_a: Path,
                    image: str) -> ContainerHandle: ...

    async def watch(self, run: RunRecord, task: Task,
                    handle: ContainerHandle) -> AgentOutcome: ...

    async def collect(self, run: RunRecord, task: Task,
                      handle: ContainerHandle) -> str | None: ...

    async def close(self, run_id: str) -> None: ...


def uses_gateway(agent_text: str) -> bool:
    """Whether a run's agent (its stored spec text) talks to models through srb's gateway,
    so the gateway must be up before the run is driven."""
    return is_client(spec_kind(agent_text))


class BuiltinAgent:
    """A built-in agent: the container's main process is the agent."""

    def __init__(self, phase: AgentPhase, spec: AgentSpec) -> None:
        self.phase, self.spec = phase, spec

    async def start(self, run: RunRecord, task: Task, state_a: Path,
                    image: str) -> ContainerHandle:
        return await self.phase.start_builtin(run, task, self.spec, state_a, image)

    async def watch(self, run: RunRecord, task: Task,
                    handle: ContainerHandle) -> AgentOutcome:
        return await self.phase.watch_builtin(run, handle)

    async def collect(self, run: RunRecord, task: Task,
                      handle: ContainerHandle) -> str | None:
        return await self.phase.collect(run, task, handle)

    async def close(self, run_id: str) -> None:
        return None  # it had no model access to close


class ClientAgent(BuiltinAgent):
    """A real client behind srb's gateway, driven round by round."""

    async def start(self, run: RunRecord, task: Task, state_a: Path,
                    image: str) -> ContainerHandle:
        from srb_tui.service.run.agent_clients import start_client_container

        return await start_client_container(self.phase, run, task, self.spec, state_a, image)

    async def watch(self, run: RunRecord, task: Task,
                    handle: ContainerHandle) -> AgentOutcome:
        from srb_tui.service.run.agent_clients import watch_client

        return await watch_client(self.phase, run, task, self.spec, handle)

    async def close(self, run_id: str) -> None:
        from srb_tui.service.run.agent_clients import close_client_access

        await close_client_access(self.phase, run_id)


KINDS: dict[str, type[BuiltinAgent]] = {
    **dict.fromkeys(BUILTIN_KINDS, BuiltinAgent),
    **dict.fromkeys(CLIENT_KINDS, ClientAgent),
}
"""The registry: each kind an agent spec can name (srb_tui/agents/kinds.py) and the
implementation that runs it. A built-in kind's own part is its plan
(:func:`srb_tui.agents.plan.plan_agent`); a client's, its adapter
(:data:`srb_tui.agents.adapters.ADAPTERS`)."""


def agent_for(phase: AgentPhase, spec: AgentSpec) -> AgentKind:
    """The kind of agent ``spec`` names: the one place the kinds are told apart."""
    return KINDS[spec.kind](phase, spec)
