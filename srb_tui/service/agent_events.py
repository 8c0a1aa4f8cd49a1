"""Event types of the real agent clients' rounds, published on the service's EventBus.

Each is written to the store (``agent_rounds`` / ``agent_events``) before it is published,
like every other service event, so a subscriber that joins late rebuilds from the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from srb_tui.service.events import Event


@dataclass(frozen=True)
class AgentRoundStarted(Event):
    """A real client's round began (its prompt kind: first, continue …)."""

    round: int
    prompt_kind: str


@dataclass(frozen=True)
class AgentTranscript(Event):
    """New transcript events of one round: (seq, ts, kind, data) each."""

    round: int
    events: tuple[tuple[int, str, str, dict[str, Any]], ...]


@dataclass(frozen=True)
class AgentRoundFinished(Event):
    """A real client's round ended: its verdict, exit code, tokens and cost."""

    round: int
    verdict: str
    exit_code: int | None
    tokens: dict[str, int] = field(default_factory=dict)
    client_cost_usd: float | None = None
    ledger_cost_usd: float | None = None  # the run's gateway cost so far (all rounds)


__all__ = ["AgentRoundFinished", "AgentRoundStarted", "AgentTranscript"]
