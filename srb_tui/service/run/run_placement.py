"""Driving a run on its node of a pool (the ``engines`` and ``swarm`` backends).

A run is placed once, when its drive first needs a node: a node with room for its task's
declared CPUs and memory (:meth:`srb_tui.runner.backends.Backend.place`). The node's name
is written into the run's extra (``node``) before anything runs there, so every later
drive — a re-attach after srb restarts, a resume, a cancel, ``srb gc`` — goes back to the
same engine. The drive itself is the run service's, bound to the node's engine
(:meth:`RunService.on_node`): State A upload, image builds and the workspace cache, rounds,
logs, collection and the stages all run on that node.

A node that stops answering fails its runs as ``infra_error`` (invalid, resumable, never a
zero), through the run service's own handling of a lost engine; its next placement skips it
until it answers again. The drive on a node (place, bind, drive, release) is sequenced by
:meth:`RunService.drive`; this module answers where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srb_tui.runner import EngineUnavailable
from srb_tui.runner.backends import Backend, Need, Node
from srb_tui.service.run.context import RunContext
from srb_tui.service.run.run_node import NODE_KEY, run_node
from srb_tui.store import RunRecord

if TYPE_CHECKING:
    from srb_tui.schema import Task

DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 1024


def task_need(task: Task | None) -> Need:
    """The CPUs and memory a task declares (``[environment] cpus, memory_mb``)."""
    env = task.manifest.environment if task is not None else {}
    cpus, memory = env.get("cpus", DEFAULT_CPUS), env.get("memory_mb", DEFAULT_MEMORY_MB)
    return Need(cpus=float(cpus) if isinstance(cpus, int | float) and cpus > 0
                else DEFAULT_CPUS,
                memory_mb=int(memory) if isinstance(memory, int | float) and memory > 0
                else DEFAULT_MEMORY_MB)


async def node_for(ctx: RunContext, backend: Backend, run: RunRecord, need: Need
                   ) -> Node | str:
    """The node ``run`` was placed on (its share of it held again), else a new placement
    with room for ``need`` (recorded in the run before anything runs there); a message
    when it cannot have one."""
    name = run_node(run)
    if name is not None:
        node = backend.node(name)
        if node is None:
            return (f"its node {name!r} is not in the configured pool any more; the run is "
                    "invalid (re-run it), not a zero")
        await backend.hold(run.id, node, need)
        return node
    try:
        node = await backend.place(run.id, need)
    except EngineUnavailable as exc:
        return f"{exc}; the run is invalid (re-run it), not a zero"
    await ctx.store.runs.merge_extra(run.id, {NODE_KEY: node.name})
    ctx.moves.say(run.id, f"placed on node {node.name} ({node.engine.base_url})")
    return node


__all__ = ["NODE_KEY", "node_for", "run_node", "task_need"]
