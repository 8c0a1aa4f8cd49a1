"""Grading a collected run, and the two other ways a run reaches ``scored``.

:func:`grade` builds the ladder's context for one run (State A prepared when the caller has
not, the operator's image map, the adversary budget the driver remembered) and runs the
stages; :func:`finish_stored_score` closes a run whose score was recorded before srb stopped;
:func:`zero_for_collection` scores 0 a submission that broke a collection cap;
:func:`regrade` grades a collected run again. The run
service (:mod:`.orchestrator`) calls these; they write the store before announcing on its bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.schema import Task
from srb_tui.scoring import ScoreEnvelope
from srb_tui.service.grading.image_plan import ImageMapError, load_image_map
from srb_tui.service.run.run_faults import LaunchError
from srb_tui.sources import prepare_state_a
from srb_tui.store import RunRecord

if TYPE_CHECKING:
    from srb_tui.service.run.orchestrator import RunService


@dataclass(frozen=True)
class Graded:
    """A graded run as stored, and the score envelope the ladder wrote for it."""

    run: RunRecord
    envelope: ScoreEnvelope


def image_map(svc: RunService) -> dict[str, str]:
    """The operator's image map; an unusable one is a LadderError-free harness fault
    reported by the first build that needs it, so grading goes on without it here."""
    try:
        return load_image_map(svc.settings.state_dir)
    except ImageMapError:
        return {}


async def finish_stored_score(svc: RunService, run_id: str) -> RunRecord:
    return await svc.moves.finish(
        run_id, "scored", "graded (the score was recorded before srb stopped)")


async def zero_for_collection(svc: RunService, run_id: str, reason: str) -> RunRecord:
    """The submission broke a collection cap: that is evidence about the submission."""
    await svc.store.add_run_note(run_id, f"submission not graded: {reason}")
    await svc.moves.to(run_id, "audit", "collection aborted")
    return await svc.moves.finish(
        run_id, "scored", f"collection aborted: {reason}", detail=reason,
        score=0.0, max_score=100.0, valid=True, blocked_by="collection",
    )


async def grade(
    svc: RunService,
    run_id: str,
    task: Task,
    state_a: Path | None,
    *,
    stages: Sequence[str] | None = None,
    force: bool = False,
) -> Graded:
    from srb_tui.service.grading.ladder import LadderContext, grade_run

    await svc.ensure_gateway()
    if state_a is None:
        prepared = await asyncio.to_thread(
            prepare_state_a, task.dir, task.state_a, svc.settings.state_a_cache,
        )
        state_a = prepared.tree
    run_dir = svc.run_dir(run_id)
    ctx = LadderContext(
        store=svc.store,
        engine=svc.engine,
        task=task,
        run_id=run_id,
        submission_dir=svc.submission_dir(run_id),
        original_dir=state_a,
        run_dir=run_dir,
        base_image=svc.settings.base_image,
        publish=svc.moves.publish,
        adversary_budget_sec=svc.moves.budget(run_id),
        gateway=svc.gateway,
        image_map=image_map(svc),
    )
    envelope = await grade_run(ctx, stages=stages, force=force)
    return Graded(await svc.moves.finish(run_id, None), envelope)


async def regrade(
    svc: RunService,
    run_id: str,
    stages: Sequence[str] | None = None,
    *,
    force: bool = False,
    adversary_budget_sec: float | None = None,
) -> Graded:
    """:meth:`.RunService.regrade`: grade a collected run again under its lease (all stages,
    or ``stages``), the one way `srb eval` and the console re-grade. Raises LaunchError when
    the task no longer loads, LadderError or StateAError when the submission or State A is
    missing."""
    run = await svc.store.require_run(run_id)
    load = svc.load_task(run.task_path)
    if load.task is None:
        raise LaunchError(f"run {run_id}: task {run.task_id} no longer loads")
    await svc.moves.hold(run_id)
    svc.moves.set_budget(run_id, adversary_budget_sec)
    try:
        return await grade(svc, run_id, load.task, None, stages=stages, force=force)
    finally:
        await svc.moves.let_go(run_id)
