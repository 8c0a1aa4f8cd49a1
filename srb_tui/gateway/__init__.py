"""srb's model gateway: the only way model traffic leaves a run.

Containers and host-side stage drivers get a per-run token; the gateway checks it, puts the
real vendor key in its place (read from the host environment per request), forwards the four
model routes to their configured upstreams, passes streams through chunk by chunk, writes
every request to the store's ledger with tokens and cost from the response's own usage, and
refuses requests past a run's budget in the vendor's own error shape. Any other path is
answered locally and counted, never forwarded.

    config = load_gateway_config(settings.state_dir)
    gateway = await Gateway.start(config, store, settings.state_dir / "gateway")
    token = await gateway.issue_token(run_id, "agent", round=1)
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

# ``Gateway`` (and with it aiohttp, ~0.5 s to import) loads on first use like every name
# here, so a process that never serves model traffic (``srb run`` of a command agent) does
# not pay for it.
if TYPE_CHECKING:
    from srb_tui.gateway.config import (
        GatewayConfig,
        GatewayConfigError,
        Price,
        UpstreamConfig,
        default_config,
        load_gateway_config,
    )
    from srb_tui.gateway.endpoint import DriverEndpoint, driver_endpoint, gateway_base_url
    from srb_tui.gateway.listen import SOCKET_NAME, GatewayError
    from srb_tui.gateway.server import Gateway
    from srb_tui.gateway.vendor import ROUTES

__all__ = [
    "ROUTES",
    "SOCKET_NAME",
    "DriverEndpoint",
    "Gateway",
    "GatewayConfig",
    "GatewayConfigError",
    "GatewayError",
    "Price",
    "UpstreamConfig",
    "default_config",
    "driver_endpoint",
    "gateway_base_url",
    "load_gateway_config",
]

__getattr__ = exports_on_first_use(__name__)
