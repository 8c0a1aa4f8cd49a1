"""The Nodes view's data: every engine of the backend asked at once, and this store's runs
counted by the node they were placed on (:mod:`srb_tui.service.views.nodes` holds the rows).

:func:`load_nodes` probes the engines on srb's engine pools (never on the event loop), each
under the probe's timeout, so a node that does not answer costs a few seconds at most and
never blocks the console; a probe still waiting on a silent engine is not repeated (see
:func:`srb_tui.runner.backends.probe`). It never raises: a backend that cannot be made (a
mistake in ``config.toml``, a Swarm manager that does not answer) is the view's ``problem``.
In pool mode srb's own engine is asked too: it is where the base image comes from.
"""

from __future__ import annotations

import time

from srb_tui.runner import RunnerError
from srb_tui.runner.backend_config import BackendConfigError
from srb_tui.runner.backends import Backend, Node, NodeHealth
from srb_tui.runner.engine import start_hint
from srb_tui.service.app import EngineUnreachable, Services
from srb_tui.service.views.nodes import NodeRow, NodesView, OwnEngine, RunsOnNodes, runs_on_nodes
from srb_tui.store import StoreError


def bare_error(error: str, url: str) -> str:
    """An engine's error without the advice the runner appends to it (a caller that says
    what to do, fitting how the engine is reached, says it once)."""
    return error.removeprefix("EngineUnavailable: ").replace(start_hint(url), "").strip()


def engine_advice(url: str) -> str:
    """How to get the engine at ``url`` answering: start the local daemon, or check the
    address and the daemon of another machine."""
    return start_hint(url)


def node_advice(url: str) -> str:
    """What to do about an engine of the pool that does not answer, by how it is reached."""
    if url.startswith("ssh://"):
        return ("check that `ssh` to that host works without a prompt (key, known_hosts) "
                "and that docker runs there for that user")
    if url.startswith("unix://"):
        return ("start dockerd on this machine (`bash scripts/ensure-docker.sh`) or fix the "
                "socket path in [engines] of state/config.toml")
    return ("check the address in [engines] of state/config.toml, that the node's dockerd "
            "listens there (`dockerd -H tcp://0.0.0.0:2375`), that this machine reaches it "
            "(firewall, route) and, with TLS, the certificate files")


def _row(node: Node, health: NodeHealth, runs: RunsOnNodes) -> NodeRow:
    placed, live, live_ids = runs.of(node.name)
    return NodeRow(
        name=node.name, url=health.url, state="up" if health.up else "down",
        version=health.version, cpus=node.cpus, memory_mb=node.memory_mb,
        srb_running=health.containers, held=len(node.reserved), error=health.error,
        last_error=node.last_error, placed=placed, live=live, live_runs=live_ids)


async def _own_engine(core: Services) -> OwnEngine:
    engine = core.engine
    info = await engine.ping()
    if info.ok:
        return OwnEngine(engine.base_url, True, f"server {info.version}")
    return OwnEngine(engine.base_url, False,
                     bare_error(info.error or "does not answer", engine.base_url))


async def _runs(core: Services) -> RunsOnNodes:
    """This store's runs by node; none when there is no store yet (looking at the engines
    never creates one)."""
    if not core.settings.db_path.exists():
        return RunsOnNodes({}, {})
    return await runs_on_nodes(await core.store())


async def load_nodes(core: Services) -> NodesView:
    """Probe every engine of ``core``'s backend and count this store's runs on each."""
    kind = ""
    try:
        kind = core.backend_config().kind
        backend: Backend = await core.backend()
    except (BackendConfigError, EngineUnreachable, RunnerError, OSError) as exc:
        return NodesView(kind, problem=str(exc), checked_at=time.time())
    healths = {h.name: h for h in await backend.probe_all()}
    problem = None
    try:
        runs = await _runs(core)
    except StoreError as exc:
        runs, problem = RunsOnNodes({}, {}), f"runs per node not read: {exc}"
    rows = tuple(_row(node, healths[name], runs) for name, node in backend.nodes.items())
    own = None if backend.local else await _own_engine(core)
    return NodesView(backend.kind, rows, own=own, problem=problem,
                     registry=backend.registry, checked_at=time.time())


__all__ = ["bare_error", "engine_advice", "load_nodes", "node_advice"]
