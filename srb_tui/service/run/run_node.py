"""The node a run was placed on, as the store keeps it (the run's extra ``node``).

Runs of the local backend record none and are shown as ``local``.
"""

from __future__ import annotations

from srb_tui.store import RunRecord

NODE_KEY = "node"
LOCAL = "local"


def run_node(run: RunRecord) -> str | None:
    """The node a run was placed on (None: never placed, or the local backend)."""
    value = run.extra.get(NODE_KEY)
    return value if isinstance(value, str) and value else None


def node_label(run: RunRecord) -> str:
    """What the screens show as the run's node."""
    return run_node(run) or LOCAL


__all__ = ["LOCAL", "NODE_KEY", "node_label", "run_node"]
