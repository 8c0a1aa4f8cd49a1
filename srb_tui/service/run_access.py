"""Which model access a run's agent gets: the one given to the run service, else one over
srb's model gateway (built on first need, so a run of a command agent never imports the
gateway's HTTP stack), and closing a run's access when its agent phase ends.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from srb_tui.agents.spec import CLIENT_KINDS
from srb_tui.service.agent_phase import STORE_LABEL
from srb_tui.service.model_access import ModelAccess

if TYPE_CHECKING:
    from srb_tui.service.orchestrator import RunService


def access_for(svc: RunService) -> ModelAccess | None:
    """The explicit access given at construction, else one over ``svc.gateway``."""
    if svc.model_access is not None:
        return svc.model_access
    if svc.gateway is None:
        return None
    from srb_tui.service.gateway_access import GatewayAccess

    svc.model_access = GatewayAccess(
        svc.gateway, svc.store, svc.engine,
        socket_dir=svc.gateway.socket_path.parent, base_image=svc.settings.base_image,
        labels={STORE_LABEL: svc.store_tag},
        # srb's host as a remote engine's node reaches it (else found from the route).
        host_address=os.environ.get("SRB_CHANNEL_HOST") or None)
    return svc.model_access


async def close_access(svc: RunService, run_id: str, kind: str) -> None:
    """End the run's model access (a real client's only); a failure here changes nothing."""
    access = access_for(svc) if kind in CLIENT_KINDS else None
    if access is not None:
        with contextlib.suppress(Exception):
            await access.close_run(run_id)
