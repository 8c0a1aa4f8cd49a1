"""Which model access a run's agent gets: the one given to the run service, else one over
srb's model gateway (built on first need, so a run of a command agent never imports the
gateway's HTTP stack).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srb_tui.service.run.agent_phase import STORE_LABEL
from srb_tui.service.run.model_access import ModelAccess

if TYPE_CHECKING:
    from srb_tui.service.run.orchestrator import RunService


def access_for(svc: RunService) -> ModelAccess | None:
    """The explicit access given at construction, else one over ``svc.gateway``."""
    if svc.model_access is not None:
        return svc.model_access
    if svc.gateway is None:
        return None
    from srb_tui.service.run.gateway_access import GatewayAccess

    svc.model_access = GatewayAccess(
        svc.gateway, svc.store, svc.engine,
        socket_dir=svc.gateway.socket_path.parent, base_image=svc.settings.base_image,
        labels={STORE_LABEL: svc.store_tag})
    return svc.model_access
