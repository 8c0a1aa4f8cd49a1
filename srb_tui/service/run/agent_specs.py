"""What a front end may know about agent specs without importing the agents room: the
client kinds there are, and whether a spec text is one srb can run for a task."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.agents import AgentSpecError, parse_agent_spec, plan_agent
from srb_tui.agents.errors import AdapterError, ClientError
from srb_tui.agents.kinds import CLIENT_KINDS, CLIENT_LINES, is_client

if TYPE_CHECKING:
    from srb_tui.gateway.config import GatewayConfig


@dataclass(frozen=True)
class AgentCheck:
    """The spec as srb records it (``text``), or why it cannot run (``problem``, about the
    launch field named by ``field``: Agent, Effort or Budget). ``client`` is the real
    client's kind (``claude-code`` …) when the spec names one, else None."""

    text: str | None
    problem: str | None
    field: str = "Agent"
    client: str | None = None
    model: str | None = None
    vendor: str | None = None
    """the model vendor the client speaks to (anthropic, openai), for a real client"""


def check_agent(
    spec_text: str,
    task_dir: Path,
    *,
    effort: str | None = None,
    harness: str | None = None,
    client_version: str | None = None,
    max_cost: float | None = None,
    max_tokens: int | None = None,
) -> AgentCheck:
    """Whether ``spec_text`` names an agent srb can run on the task at ``task_dir`` — the
    one check behind ``srb run``, the console's launch dialog and campaign files.

    A built-in agent (untouched, replay:, command:) must plan; a real client
    (``claude-code:MODEL``, ``codex:MODEL``, ``mini-swe-agent:MODEL``) must resolve its
    version (``client_version``, else the task's ``harness`` pin, else srb's), take
    ``effort``, and have positive budgets."""
    try:
        spec = parse_agent_spec(spec_text, task_dir)
        if not is_client(spec.kind):
            plan_agent(spec)
            return AgentCheck(spec.text, None, model=spec.model)
        from srb_tui.agents.adapters import make_adapter  # a real client's: not a command's
        from srb_tui.agents.clients import resolve_pin

        pin = resolve_pin(spec.kind, harness, client_version)
        adapter = make_adapter(pin, spec.model or "", effort)
    except ClientError as exc:
        return AgentCheck(None, str(exc))
    except AdapterError as exc:
        return AgentCheck(None, str(exc), "Effort")
    except AgentSpecError as exc:
        return AgentCheck(None, str(exc))
    for name, value in (("--max-cost", max_cost), ("--max-tokens", max_tokens)):
        if value is not None and value <= 0:
            return AgentCheck(None, f"{name} must be positive (got {value:g})", "Budget",
                              spec.kind)
    return AgentCheck(spec.text, None, client=spec.kind, model=spec.model,
                      vendor=adapter.vendor or None)


def missing_key(config: GatewayConfig, vendor: str) -> str | None:
    """Why a real client of ``vendor`` cannot reach its model through the gateway whose
    config is ``config`` — its upstream key is not set on this host (what ``srb doctor``
    shows as ``!``) — or None. Asked before any container starts: a client without a key
    used to burn its rounds on "server-side issue, try again" and end with nothing
    collected."""
    if config.key_for(vendor) is not None:
        return None
    up = config.upstream(vendor)
    return (f"${up.key_env} is not set on this host: srb's gateway forwards {vendor} "
            f"requests to {up.base_url} with it (see `srb doctor`; export the key, or point "
            f"[gateway.{vendor}] in state/config.toml at another server)")


def client_cache_summary() -> str:
    """The agent clients cached on this host, where, and which are installed on first use."""
    from srb_tui.agents.clients import cache_root, cached_clients
    from srb_tui.agents.kinds import CLIENTS

    found = cached_clients()
    names = {c.pin.name for c in found}
    listed = ", ".join(f"{c.pin.name} {c.pin.version}" for c in found) or "none"
    missing = [f"{k.name} {k.default_version}" for k in CLIENTS.values()
               if k.registry == "npm" and k.name not in names]
    return f"{listed} in {cache_root()}" + (
        f" (installed on first use: {', '.join(missing)})" if missing else "")


def upstream_summaries(state_dir: Path) -> list[tuple[str, str]]:
    """Each configured model upstream as (vendor, "URL, key $NAME set|not set") — whether
    its key is set on this host, never the key itself. GatewayConfigError names a bad
    config file and key."""
    import os

    from srb_tui.gateway import load_gateway_config

    config = load_gateway_config(state_dir)
    lines = []
    for vendor in ("anthropic", "openai"):
        up = config.upstream(vendor)
        has_key = bool(os.environ.get(up.key_env))
        lines.append((vendor, f"{up.base_url}, key ${up.key_env} "
                              f"{'set' if has_key else 'not set'}"))
    return lines


__all__ = ["CLIENT_KINDS", "CLIENT_LINES", "AgentCheck", "check_agent", "client_cache_summary",
           "missing_key", "upstream_summaries"]
