""":class:`ModelAccess` over srb's model gateway and the per-run relay sidecar.

The agent container joins the relay's network namespace (no network of its own) and
reaches the gateway at ``http://127.0.0.1:8642``; each round gets a fresh token for
(run, "agent", round), so the ledger attributes every request to its round.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from srb_tui.agents.adapters import Endpoint
from srb_tui.gateway import Gateway
from srb_tui.runner import LABEL_STORE, DockerEngine, RunnerError, list_managed, remove
from srb_tui.runner.relay import (
    RELAY_PORT,
    agent_network_mode,
    ensure_relay_image,
    start_relay,
)
from srb_tui.service.run.model_access import AgentAccess
from srb_tui.store import Store

RELAY_ROLE = "relay"


class GatewayAccess:
    """The agent phase's way to the model, through ``gateway``."""

    def __init__(self, gateway: Gateway, store: Store, engine: DockerEngine, *,
                 socket_dir: Path, base_image: str, labels: dict[str, str]) -> None:
        self.gateway, self.store, self.engine = gateway, store, engine
        self.socket_dir, self.base_image, self.labels = socket_dir, base_image, labels

    def _set_budget(self, run_id: str, max_cost_usd: float | None,
                    max_tokens: int | None) -> None:
        if max_cost_usd is not None or max_tokens is not None:
            self.gateway.set_budget(run_id, max_cost_usd=max_cost_usd, max_tokens=max_tokens)

    async def open_run(self, run_id: str, labels: dict[str, str], *,
                       max_cost_usd: float | None, max_tokens: int | None) -> AgentAccess:
        self._set_budget(run_id, max_cost_usd, max_tokens)
        await ensure_relay_image(self.engine, self.base_image)
        relay = await start_relay(self.engine, run_id, self.socket_dir,
                                  labels={**self.labels, **labels})
        base = f"http://127.0.0.1:{RELAY_PORT}"
        return AgentAccess(Endpoint(base, f"{base}/v1", ""), agent_network_mode(relay))

    async def resume_run(self, run_id: str, *, max_cost_usd: float | None,
                         max_tokens: int | None) -> None:
        return None  # budgets and token hashes are persisted by the gateway

    async def round_token(self, run_id: str, round_no: int) -> str:
        return await self.gateway.issue_token(run_id, "agent", round=round_no)

    async def over_budget(self, run_id: str) -> str | None:
        return await self.gateway.over_budget(run_id)

    async def totals(self, run_id: str) -> dict[str, Any] | None:
        totals = await self.store.ledger_totals(run_id)
        data: dict[str, Any] = totals.total.to_json()
        return data

    async def close_run(self, run_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.gateway.settle(run_id)
        await self.gateway.revoke_run(run_id)
        for c in await list_managed(self.engine, run_id, store_tag=self.labels.get(LABEL_STORE)):
            if c.handle.role == RELAY_ROLE:
                with contextlib.suppress(RunnerError):
                    await remove(self.engine, c.handle)
