"""How the agent phase reaches the model gateway: the seam between runs and the gateway.

:class:`ModelAccess` is what the agent phase asks for: an endpoint and a network for the
agent container, a fresh token for each round (the token identifies run, role and round;
the gateway substitutes the real key), whether the run's budget is spent, the ledger's
totals, and cleanup. :mod:`srb_tui.service.run.gateway_access` implements it over srb's own
gateway and relay; a run of a real client without one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from srb_tui.agents.adapters import Endpoint


@dataclass(frozen=True)
class AgentAccess:
    """What an agent container gets to reach the model gateway: endpoint and network."""

    endpoint: Endpoint
    network_mode: str


class ModelAccess(Protocol):
    async def open_run(
        self, run_id: str, labels: dict[str, str], *, max_cost_usd: float | None,
        max_tokens: int | None,
    ) -> AgentAccess:
        """Before the agent container exists: its network and endpoint."""
        ...

    async def resume_run(
        self, run_id: str, *, max_cost_usd: float | None, max_tokens: int | None
    ) -> None:
        """A resumed srb: the run's budget again (tokens are issued per round)."""
        ...

    async def round_token(self, run_id: str, round_no: int) -> str: ...

    async def over_budget(self, run_id: str) -> str | None: ...

    async def totals(self, run_id: str) -> dict[str, Any] | None: ...

    async def close_run(self, run_id: str) -> None: ...


class NoModelAccess(Exception):
    """A real client was asked for but srb has no model gateway to give it."""
