"""The model access a run's agent gets over srb's model gateway, built on first need (so a
run of a command agent never imports the gateway's HTTP stack). Which access a run gets —
the one given to the run service, else this one — is the orchestrator's choice.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from srb_tui.service.run.agent_phase import STORE_LABEL
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.model_access import ModelAccess

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway


def gateway_access(ctx: RunContext, gateway: Gateway) -> ModelAccess:
    """Model access for the agents of ``ctx``'s engine through ``gateway``."""
    from srb_tui.service.run.gateway_access import GatewayAccess

    return GatewayAccess(
        gateway, ctx.store, ctx.engine,
        socket_dir=gateway.socket_path.parent, base_image=ctx.settings.base_image,
        labels={STORE_LABEL: ctx.store_tag},
        # srb's host as a remote engine's node reaches it (else found from the route).
        host_address=os.environ.get("SRB_CHANNEL_HOST") or None)
