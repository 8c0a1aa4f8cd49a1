"""Execution backends behind one interface: where a run's containers go.

A :class:`Backend` is a set of named :class:`Node` s, each one Docker engine
(:class:`~srb_tui.runner.engine.DockerEngine`) with a capacity in CPUs and memory. Every
container of a run (agent, relay, the three stages) is made on the node the run was placed
on, through that node's engine, so everything a run does works the same on any node.

* ``local`` — the one engine of today (``DOCKER_HOST`` or the default socket); placing a
  run there never waits and never asks the engine anything.
* ``engines`` — a named pool from ``state/config.toml``; a run goes to a healthy engine
  with free CPUs and memory for its task's declared limits (the one with most CPUs free),
  or waits until a run ends. A task larger than every node runs alone on the largest.
* ``swarm`` — the nodes a Swarm manager lists (its ready, active nodes; each node's engine
  at ``tcp://<address>:<engine_port>``), placed by the same rule.

A node that does not answer is skipped (its health says why); one that answers again is
used again. Reservations are this process's: a run holds its share of its node from
placement until its drive ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.backend_config import LOCAL_NAME, BackendConfig, EngineSpec
from srb_tui.runner.engine import DockerEngine, outcome_seen, start_hint
from srb_tui.runner.errors import EngineUnavailable
from srb_tui.runner.pool import RunnerPool
from srb_tui.runner.wire import WireError

PROBE_TIMEOUT_SEC = 5.0
HEALTH_FRESH_SEC = 3.0


@dataclass(frozen=True)
class Need:
    """What a run reserves on its node: its task's declared CPUs and memory."""

    cpus: float
    memory_mb: int


@dataclass(frozen=True)
class NodeHealth:
    """What the last probe of a node found."""

    name: str
    url: str
    up: bool
    version: str = ""
    cpus: float = 0.0
    memory_mb: int = 0
    containers: int = 0  # running containers with srb's labels (any store)
    error: str = ""
    checked_at: float = 0.0


@dataclass
class Node:
    """One engine of the backend, its capacity and this process's reservations on it."""

    spec: EngineSpec
    engine: DockerEngine
    health: NodeHealth | None = None
    last_error: str = ""
    reserved: dict[str, Need] = field(default_factory=dict)
    #: The engine call of a probe still under way (a probe that timed out leaves it
    #: running on the engine's pool; the next probe waits on it instead of adding one).
    asking: asyncio.Future[dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def up(self) -> bool:
        return self.health is not None and self.health.up

    @property
    def cpus(self) -> float:
        return self.spec.cpus or (self.health.cpus if self.health else 0.0)

    @property
    def memory_mb(self) -> int:
        return self.spec.memory_mb or (self.health.memory_mb if self.health else 0)

    def free(self) -> tuple[float, int]:
        return (self.cpus - sum(n.cpus for n in self.reserved.values()),
                self.memory_mb - sum(n.memory_mb for n in self.reserved.values()))

    def fits(self, need: Need) -> bool:
        cpus, memory = self.free()
        return need.cpus <= cpus + 1e-9 and need.memory_mb <= memory


def _info(engine: DockerEngine) -> dict[str, Any]:
    client = engine._make_client() if engine._client is None else engine._client
    engine._client = client
    info: dict[str, Any] = client.info()
    running = client.api.containers(filters={"label": "srb.run"})
    info["_srb_running"] = len(running)
    return info


def _fault(exc: BaseException, url: str) -> str:
    """A probe's error in one line of facts (how to fix it is for the caller to say)."""
    text = str(exc) if isinstance(exc, EngineUnavailable) else f"{type(exc).__name__}: {exc}"
    return text.replace(start_hint(url), "").strip() or type(exc).__name__


async def probe(node: Node, *, timeout_sec: float = PROBE_TIMEOUT_SEC) -> NodeHealth:
    """Ask the node's engine for its version and capacity; never raises."""
    now = time.monotonic()
    url = node.engine.base_url
    if node.asking is None or node.asking.done():
        node.asking = asyncio.ensure_future(node.engine.call(_info, node.engine))
        node.asking.add_done_callback(outcome_seen)
    try:
        info = await asyncio.wait_for(asyncio.shield(node.asking), timeout_sec)
    except TimeoutError:
        health = NodeHealth(node.name, url, False, error=f"no answer within {timeout_sec:g} s",
                            checked_at=now)
    except (EngineUnavailable, WireError, OSError, ValueError, sdk.DockerException) as exc:
        health = NodeHealth(node.name, url, False, error=_fault(exc, url), checked_at=now)
    else:
        health = NodeHealth(
            node.name, url, True, version=str(info.get("ServerVersion", "")),
            cpus=float(info.get("NCPU") or 0),
            memory_mb=int(info.get("MemTotal") or 0) // (1024 * 1024),
            containers=int(info.get("_srb_running") or 0), checked_at=now)
    node.health = health
    if not health.up:
        node.last_error = health.error
    return health


class Backend:
    """The nodes runs are placed on (see the module docstring)."""

    def __init__(self, kind: str, nodes: Sequence[Node], *, registry: str | None = None
                 ) -> None:
        self.kind = kind
        self.nodes: dict[str, Node] = {n.name: n for n in nodes}
        self.registry = registry
        self._changed = asyncio.Condition()
        self._placed: dict[str, Node] = {}

    @property
    def local(self) -> bool:
        return self.kind == "local"

    @classmethod
    def single(cls, engine: DockerEngine) -> Backend:
        """The local backend over the engine srb uses today."""
        return cls("local", [Node(EngineSpec(LOCAL_NAME, None), engine)])

    def node(self, name: str | None) -> Node | None:
        if name is None:
            return next(iter(self.nodes.values())) if self.local else None
        return self.nodes.get(name)

    def node_of_engine(self, engine: DockerEngine) -> Node | None:
        return next((n for n in self.nodes.values() if n.engine is engine), None)

    async def probe_all(self) -> list[NodeHealth]:
        """Probe every node at once."""
        return list(await asyncio.gather(*(probe(n) for n in self.nodes.values())))

    async def _fresh(self) -> None:
        stale = [n for n in self.nodes.values() if n.health is None
                 or time.monotonic() - n.health.checked_at > HEALTH_FRESH_SEC]
        if stale:
            await asyncio.gather(*(probe(n) for n in stale))

    def capacity(self) -> tuple[float, int]:
        """CPUs and memory (MB) of the nodes that answered their last probe."""
        up = [n for n in self.nodes.values() if n.up]
        return sum(n.cpus for n in up), sum(n.memory_mb for n in up)

    def _choose(self, need: Need) -> Node | None:
        up = [n for n in self.nodes.values() if n.up]
        fitting = [n for n in up if n.fits(need)]
        if fitting:
            return max(fitting, key=lambda n: (n.free()[0], n.free()[1], -len(n.reserved)))
        idle = [n for n in up if not n.reserved]
        if idle and not any(n.cpus >= need.cpus and n.memory_mb >= need.memory_mb
                            for n in up):
            return max(idle, key=lambda n: (n.cpus, n.memory_mb))  # too big for any: alone
        return None

    async def place(self, run_id: str, need: Need, *, poll_sec: float = 2.0) -> Node:
        """A node for ``run_id`` with room for ``need`` (waits for room while some node is
        up); EngineUnavailable naming each node's fault when none answers."""
        if self.local:
            node = next(iter(self.nodes.values()))
            self._placed[run_id] = node
            return node
        while True:
            await self._fresh()
            async with self._changed:
                chosen = self._choose(need)
                if chosen is not None:
                    chosen.reserved[run_id] = need
                    self._placed[run_id] = chosen
                    return chosen
                if not any(n.up for n in self.nodes.values()):
                    faults = "; ".join(f"{n.name} ({n.engine.base_url}): {n.last_error}"
                                       for n in self.nodes.values())
                    raise EngineUnavailable(f"no engine of the pool answers: {faults}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), poll_sec)

    async def hold(self, run_id: str, node: Node, need: Need) -> None:
        """Count a run already on ``node`` (a re-attach) against its capacity."""
        async with self._changed:
            if not self.local:
                node.reserved[run_id] = need
            self._placed[run_id] = node

    async def release(self, run_id: str) -> None:
        """The run's drive ended: its share of its node is free again."""
        async with self._changed:
            node = self._placed.pop(run_id, None)
            if node is not None:
                node.reserved.pop(run_id, None)
            self._changed.notify_all()

    def close(self) -> None:
        """Close every node's engine but the local one (its owner closes it); a probe
        still waiting on an engine is let go."""
        for node in self.nodes.values():
            if node.asking is not None and not node.asking.done():
                node.asking.cancel()
        if self.local:
            return
        for node in self.nodes.values():
            with contextlib.suppress(Exception):
                node.engine.close()


def _swarm_nodes(manager: DockerEngine, port: int) -> list[EngineSpec]:
    client = manager._make_client() if manager._client is None else manager._client
    manager._client = client
    specs = []
    for data in client.api.nodes():
        status = data.get("Status") or {}
        spec = data.get("Spec") or {}
        if status.get("State") != "ready" or spec.get("Availability") != "active":
            continue
        desc = data.get("Description") or {}
        res = desc.get("Resources") or {}
        addr = str(status.get("Addr") or "")
        name = str(desc.get("Hostname") or data.get("ID", ""))[:40].lower()
        specs.append(EngineSpec(
            name=name, url=f"tcp://{addr}:{port}",
            cpus=float(res.get("NanoCPUs") or 0) / 1e9 or None,
            memory_mb=int(res.get("MemoryBytes") or 0) // (1024 * 1024) or None))
    return sorted(specs, key=lambda s: s.name)


async def make_backend(config: BackendConfig, local: DockerEngine, concurrent_runs: int
                       ) -> Backend:
    """The backend ``config`` names; ``local`` is the engine of the local backend."""
    if config.local:
        return Backend.single(local)
    specs: Sequence[EngineSpec] = config.engines
    if config.kind == "swarm":
        assert config.manager is not None
        manager = DockerEngine(RunnerPool(1), base_url=config.manager, name="manager")
        try:
            specs = await manager.call(_swarm_nodes, manager, config.engine_port)
        except (OSError, sdk.DockerException) as exc:
            raise EngineUnavailable(f"swarm manager {config.manager} does not answer: "
                                    f"{exc}") from exc
        finally:
            manager.close()
        if not specs:
            raise EngineUnavailable(f"swarm manager {config.manager} lists no ready node")
    nodes = [Node(s, DockerEngine(RunnerPool(concurrent_runs), base_url=s.url, name=s.name,
                                  tls=(s.tls.ca, s.tls.cert, s.tls.key) if s.tls else None))
             for s in specs]
    return Backend(config.kind, nodes, registry=config.registry)


__all__ = ["Backend", "Need", "Node", "NodeHealth", "make_backend", "probe"]
