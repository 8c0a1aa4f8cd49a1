"""Where a host-side stage driver (reviewer, adversary) sends its requests when srb runs a
gateway: the gateway's TCP address and a token of the run, in place of the vendor key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srb_tui.gateway.server import Gateway

SDK_DRIVERS = ("anthropic", "openai")


@dataclass(frozen=True)
class DriverEndpoint:
    """A base URL and the credential to send there (a gateway token, never a vendor key)."""

    base_url: str
    api_key: str = field(repr=False)
    label: str = "the srb gateway"


def gateway_base_url(gateway_url: str, driver: str) -> str:
    """The SDK base URL on a gateway: Anthropic's SDK adds /v1/..., OpenAI's expects it."""
    root = gateway_url.rstrip("/")
    return root if driver == "anthropic" else f"{root}/v1"


async def driver_endpoint(
    gateway: Gateway | None, run_id: str, role: str, driver: str, round: int | None = None
) -> DriverEndpoint | None:
    """A fresh token of ``run_id``/``role`` and the gateway's address for an SDK driver;
    None without a gateway or for a driver that makes no model requests (scripted)."""
    if gateway is None or driver not in SDK_DRIVERS:
        return None
    token = await gateway.issue_token(run_id, role, round)
    return DriverEndpoint(gateway_base_url(gateway.tcp_url, driver), token)
