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
until it answers again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srb_tui.runner import EngineUnavailable, RunnerError
from srb_tui.runner.backends import Need, Node
from srb_tui.service.run.run_node import NODE_KEY, run_node
from srb_tui.store import FINAL_STATUSES, RunRecord

if TYPE_CHECKING:
    from srb_tui.schema import Task
    from srb_tui.service.run.orchestrator import RunService

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


async def node_for(svc: RunService, run: RunRecord) -> Node | str:
    """The node ``run`` was placed on, else a new placement (recorded); a message when it
    cannot have one."""
    backend = svc.backend
    assert backend is not None
    try:
        load = svc.load_task(run.task_path)
        need = task_need(load.task)
    except Exception:  # the drive says what is wrong with the task
        need = task_need(None)
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
    await svc.store.merge_extra(run.id, {NODE_KEY: node.name})
    svc.moves.say(run.id, f"placed on node {node.name} ({node.engine.base_url})")
    return node


async def drive_placed(svc: RunService, run_id: str, *, grade: bool,
                       adversary_budget_sec: float | None) -> RunRecord:
    """Drive ``run_id`` on its node (placing it first when it has none)."""
    backend = svc.backend
    assert backend is not None
    run = await svc.store.require_run(run_id)
    if run.status in FINAL_STATUSES:
        return run
    placed = await node_for(svc, run)
    if isinstance(placed, str):
        return await svc.fail_infra(run_id, placed)
    try:
        try:
            on_node = await svc.on_node(placed)
        except RunnerError as exc:
            return await svc.fail_infra(
                run_id, f"node {placed.name}: {exc}; the run is invalid (re-run it), "
                "not a zero")
        return await on_node.drive(run_id, grade=grade,
                                   adversary_budget_sec=adversary_budget_sec)
    finally:
        await backend.release(run_id)


__all__ = ["NODE_KEY", "drive_placed", "node_for", "run_node", "task_need"]
