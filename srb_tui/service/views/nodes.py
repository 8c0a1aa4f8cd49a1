"""The engines runs are placed on, as the Nodes screen shows them: plain rows, and this
store's runs counted by the node they were placed on. Filled by
:func:`srb_tui.service.nodes.load_nodes`, which asks the engines; nothing here touches one.
"""

from __future__ import annotations

from dataclasses import dataclass

from srb_tui.store import Store
from srb_tui.store.run_extra import LOCAL_NODE, read_node

LIVE_SHOWN = 8  # live run ids listed per node; the count says how many there are


@dataclass(frozen=True)
class NodeRow:
    """One engine as the Nodes screen shows it."""

    name: str
    url: str
    state: str  # "up" | "down"
    version: str = ""
    cpus: float = 0.0
    memory_mb: int = 0
    srb_running: int = 0  # srb containers running on the engine (any store's)
    held: int = 0  # runs this console placed there and still drives
    error: str = ""  # why the last probe failed (empty when it answered)
    last_error: str = ""  # the last error the engine gave, kept when it answers again
    placed: int = 0  # this store's runs placed there, ever
    live: int = 0  # of those, not finished
    live_runs: tuple[str, ...] = ()  # up to LIVE_SHOWN of the live ones, oldest first

    @property
    def up(self) -> bool:
        return self.state == "up"

    @property
    def memory_text(self) -> str:
        if not self.memory_mb:
            return "—"
        return f"{self.memory_mb / 1024:.1f} GB" if self.memory_mb >= 1024 \
            else f"{self.memory_mb} MB"

    @property
    def cpus_text(self) -> str:
        return f"{self.cpus:g}" if self.cpus else "—"


@dataclass(frozen=True)
class OwnEngine:
    """srb's own engine in pool mode: the source of the base image for the nodes."""

    url: str
    up: bool
    detail: str  # the server version, or why it does not answer


@dataclass(frozen=True)
class NodesView:
    """Every engine of the backend, or the problem that kept them from being listed."""

    kind: str  # "local" | "engines" | "swarm" | "" (not known: see problem)
    rows: tuple[NodeRow, ...] = ()
    own: OwnEngine | None = None
    problem: str | None = None
    registry: str | None = None
    checked_at: float = 0.0  # time.time() of the probes

    @property
    def up(self) -> int:
        return sum(1 for r in self.rows if r.up)


@dataclass(frozen=True)
class RunsOnNodes:
    """This store's runs by the node they were placed on (``local``: the local backend)."""

    counts: dict[str, tuple[int, int]]  # node -> (placed, live)
    live: dict[str, list[str]]  # node -> live run ids, oldest first

    def of(self, node: str) -> tuple[int, int, tuple[str, ...]]:
        placed, live = self.counts.get(node, (0, 0))
        return placed, live, tuple(self.live.get(node, [])[:LIVE_SHOWN])


async def runs_on_nodes(store: Store) -> RunsOnNodes:
    """Count this store's runs by node (one grouped query, and the live runs)."""
    counts = {(name or LOCAL_NODE): n for name, n in (await store.runs.runs_per_node()).items()}
    live: dict[str, list[str]] = {}
    for run in await store.runs.live_runs():
        live.setdefault(read_node(run.extra) or LOCAL_NODE, []).append(run.id)
    return RunsOnNodes(counts, live)


__all__ = ["LIVE_SHOWN", "NodeRow", "NodesView", "OwnEngine", "RunsOnNodes", "runs_on_nodes"]
