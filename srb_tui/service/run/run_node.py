"""The node a run was placed on, as the store keeps it (the run's extra ``node``, read by
:func:`srb_tui.store.run_extra.read_node`).

Runs of the local backend record none and are shown as ``local``.
"""

from __future__ import annotations

from srb_tui.store import RunRecord
from srb_tui.store.run_extra import LOCAL_NODE, NODE, read_node

NODE_KEY = NODE
LOCAL = LOCAL_NODE


def run_node(run: RunRecord) -> str | None:
    """The node a run was placed on (None: never placed, or the local backend)."""
    return read_node(run.extra)


def node_label(run: RunRecord) -> str:
    """What the screens show as the run's node."""
    return run_node(run) or LOCAL


__all__ = ["LOCAL", "NODE_KEY", "node_label", "run_node"]
