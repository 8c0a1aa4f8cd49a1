""":class:`ModelAccess` over srb's model gateway and the per-run relay sidecar.

The agent container joins the relay's network namespace (no network of its own) and
reaches the gateway at ``http://127.0.0.1:8642``; each round gets a fresh token for
(run, "agent", round), so the ledger attributes every request to its round.

On a local engine the relay reaches the gateway's Unix socket through a bind mount. On a
remote engine (:func:`srb_tui.runner.relay_uplink.relay_route`) the run gets a node channel
here (:class:`srb_tui.gateway.channel.NodeChannel`, TLS with per-run keys, on the address
the node reaches this host by) and an uplink sidecar on the node that dials it.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from srb_tui.agents.adapters import Endpoint
from srb_tui.gateway import Gateway
from srb_tui.gateway.channel import GATEWAY_NAME, NodeChannel, Refusal
from srb_tui.runner import LABEL_STORE, DockerEngine, RunnerError, list_managed, remove
from srb_tui.runner.relay import (
    RELAY_PORT,
    agent_network_mode,
    ensure_relay_image,
    start_relay,
)
from srb_tui.runner.relay_uplink import (
    UPLINK_ROLE,
    Uplink,
    relay_route,
    repoint_uplink,
    start_remote_relay,
)
from srb_tui.service.run.model_access import AgentAccess
from srb_tui.store import Store

RELAY_ROLE = "relay"
LOG = logging.getLogger("srb.gateway.channel")


class GatewayAccess:
    """The agent phase's way to the model, through ``gateway``."""

    def __init__(self, gateway: Gateway, store: Store, engine: DockerEngine, *,
                 socket_dir: Path, base_image: str, labels: dict[str, str],
                 host_address: str | None = None) -> None:
        self.gateway, self.store, self.engine = gateway, store, engine
        self.socket_dir, self.base_image, self.labels = socket_dir, base_image, labels
        #: srb's host as the engine's node reaches it (None: found from the route).
        self.host_address = host_address
        self.channels: dict[str, NodeChannel] = {}
        #: Runs an execution backend placed on another engine: (engine, host address).
        self.placed: dict[str, tuple[DockerEngine, str | None]] = {}

    def place(self, run_id: str, engine: DockerEngine, host_address: str | None = None) -> None:
        """Say the run's agent goes to ``engine`` (call before :meth:`open_run`);
        ``host_address`` is srb's host as that engine's node reaches it (None: the route's)."""
        self.placed[run_id] = (engine, host_address)

    def _engine(self, run_id: str) -> tuple[DockerEngine, str | None]:
        return self.placed.get(run_id, (self.engine, self.host_address))

    def _set_budget(self, run_id: str, max_cost_usd: float | None,
                    max_tokens: int | None) -> None:
        if max_cost_usd is not None or max_tokens is not None:
            self.gateway.set_budget(run_id, max_cost_usd=max_cost_usd, max_tokens=max_tokens)

    async def open_run(self, run_id: str, labels: dict[str, str], *,
                       max_cost_usd: float | None, max_tokens: int | None) -> AgentAccess:
        self._set_budget(run_id, max_cost_usd, max_tokens)
        engine, host_address = self._engine(run_id)
        await ensure_relay_image(engine, self.base_image)
        route = relay_route(engine.base_url, host_address)
        all_labels = {**self.labels, **labels}
        if route.local:
            relay = await start_relay(engine, run_id, self.socket_dir, labels=all_labels)
        else:
            relay = await self._open_remote(engine, run_id, str(route.host_address), all_labels)
        base = f"http://127.0.0.1:{RELAY_PORT}"
        return AgentAccess(Endpoint(base, f"{base}/v1", ""), agent_network_mode(relay))

    async def _open_remote(self, engine: DockerEngine, run_id: str, host: str,
                           labels: dict[str, str]) -> Any:
        """The run's node channel here and its uplink and relay on the node."""
        old = self.channels.pop(run_id, None)
        if old is not None:
            await old.close()
        channel = await NodeChannel.open(run_id, host, self.gateway.socket_path,
                                         on_refused=lambda r: self._note_refusal(run_id, r))
        self.channels[run_id] = channel
        uplink = Uplink(host, channel.port, channel.credentials.relay_pem,
                        channel.credentials.gateway_cert, GATEWAY_NAME)
        try:
            relay, _ = await start_remote_relay(engine, run_id, uplink, labels=labels)
        except BaseException:
            self.channels.pop(run_id, None)
            await channel.close()
            raise
        return relay

    def _note_refusal(self, run_id: str, refusal: Refusal) -> None:
        LOG.warning("run %s: a connection from %s to its node channel was refused (%s)",
                    run_id, refusal.peer, refusal.reason)

    async def resume_run(self, run_id: str, *, max_cost_usd: float | None,
                         max_tokens: int | None) -> None:
        """Budgets and token hashes are persisted by the gateway. A run on a remote node
        whose channel this process does not hold (srb restarted) gets a new channel, new
        keys and its uplink pointed at it; the relay and the agent stay as they are."""
        engine, host_address = self._engine(run_id)
        route = relay_route(engine.base_url, host_address)
        if route.local or run_id in self.channels:
            return
        managed = await list_managed(engine, run_id, store_tag=self.labels.get(LABEL_STORE))
        uplink = next((c.handle for c in managed if c.handle.role == UPLINK_ROLE), None)
        if uplink is None:
            return  # nothing dials back: the run's rounds fail as they would have
        host = str(route.host_address)
        channel = await NodeChannel.open(run_id, host, self.gateway.socket_path,
                                         on_refused=lambda r: self._note_refusal(run_id, r))
        self.channels[run_id] = channel
        try:
            await repoint_uplink(engine, uplink, Uplink(
                host, channel.port, channel.credentials.relay_pem,
                channel.credentials.gateway_cert, GATEWAY_NAME))
        except BaseException:
            self.channels.pop(run_id, None)
            await channel.close()
            raise
        LOG.info("run %s: its uplink on %s now dials the new channel on %s:%d", run_id,
                 engine.name, host, channel.port)

    async def round_token(self, run_id: str, round_no: int) -> str:
        return await self.gateway.issue_token(run_id, "agent", round=round_no)

    async def over_budget(self, run_id: str) -> str | None:
        return await self.gateway.over_budget(run_id)

    async def totals(self, run_id: str) -> dict[str, Any] | None:
        totals = await self.store.ledger.ledger_totals(run_id)
        data: dict[str, Any] = totals.total.to_json()
        return data

    async def close_run(self, run_id: str) -> None:
        with contextlib.suppress(Exception):
            await self.gateway.settle(run_id)
        await self.gateway.revoke_run(run_id)
        engine, _ = self._engine(run_id)
        managed = await list_managed(engine, run_id, store_tag=self.labels.get(LABEL_STORE))
        # The relay before its uplink: the relay uses the uplink's volume.
        for role in (RELAY_ROLE, UPLINK_ROLE):
            for c in managed:
                if c.handle.role == role:
                    with contextlib.suppress(RunnerError):
                        await remove(engine, c.handle)
        self.placed.pop(run_id, None)
        channel = self.channels.pop(run_id, None)
        if channel is not None:
            await channel.close()
