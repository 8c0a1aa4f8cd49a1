"""Tokens and cost of a run's agent phase, for ``srb runs show``, the Runs screen and exports.

Cost is the gateway ledger's (priced from each response's own usage); the clients' own
estimates are kept beside it as information only.
"""

from __future__ import annotations

import json
from typing import Any

from srb_tui.store import Store

__all__ = ["agent_summary", "cost_text", "tool_input_text"]


async def agent_summary(store: Store, run_id: str) -> dict[str, Any]:
    rounds = await store.agent.agent_rounds(run_id)
    totals = await store.agent.agent_totals(run_id)
    ledger = await store.ledger.ledger_totals(run_id)
    return {
        "rounds": [{
            "round": r.round, "prompt": r.prompt_kind, "started_at": r.started_at,
            "ended_at": r.ended_at, "exit_code": r.exit_code, "session_id": r.session_id,
            "verdict": r.verdict, "error": r.error,
            "tokens": {"input": r.input_tokens, "output": r.output_tokens,
                       "cache_read": r.cache_read_tokens, "cache_write": r.cache_write_tokens,
                       "reasoning": r.reasoning_tokens},
            "client_cost_usd": r.client_cost_usd,
        } for r in rounds],
        "client_totals": totals,
        "ledger": ledger.total.to_json(),
        "ledger_by_role": {role: t.to_json() for role, t in ledger.by_role.items()},
    }


def cost_text(ledger: dict[str, Any]) -> str:
    """``$1.23 · 45k tok`` from a ledger totals document; "unpriced" when nothing is priced."""
    tokens = int(ledger.get("total_tokens") or 0)
    if not ledger.get("requests"):
        return "—"
    tok = f"{tokens / 1000:.0f}k tok" if tokens >= 1000 else f"{tokens} tok"
    if ledger.get("unpriced_requests") and not ledger.get("cost_usd"):
        return f"unpriced · {tok}"
    return f"${float(ledger.get('cost_usd') or 0):.2f} · {tok}"


def tool_input_text(raw: object) -> str:
    """What a tool call acts on, in one string: its command, else the file or path it
    names (Claude Code's Write, Edit and Read give ``file_path``), else its input as JSON
    (never "None": issue 35 item 7)."""
    if isinstance(raw, dict):
        for key in ("command", "cmd", "file_path", "path", "pattern", "url"):
            value = raw.get(key)
            if value:
                return " ".join(map(str, value)) if isinstance(value, list) else str(value)
        return json.dumps(raw, ensure_ascii=False)
    return "" if raw is None else str(raw)
