"""Grading a collected run, and the two other ways a run reaches ``scored``.

:func:`grade` builds the ladder's context for one run (State A prepared when the caller has
not, the operator's image map, the adversary budget the driver remembered) and runs the
stages; :func:`finish_stored_score` closes a run whose score was recorded before srb stopped;
:func:`zero_for_collection` scores 0 a submission that broke a collection cap. The run
service (:mod:`.orchestrator`) sequences them (and re-grading) over a
:class:`~srb_tui.service.run.context.RunContext`; they write the store before announcing.
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
from srb_tui.sources import prepare_state_a
from srb_tui.store import RunRecord

if TYPE_CHECKING:
    from srb_tui.gateway import Gateway
    from srb_tui.service.run.context import RunContext


@dataclass(frozen=True)
class Graded:
    """A graded run as stored, and the score envelope the ladder wrote for it."""

    run: RunRecord
    envelope: ScoreEnvelope


def image_map(ctx: RunContext) -> dict[str, str]:
    """The operator's image map; an unusable one is a LadderError-free harness fault
    reported by the first build that needs it, so grading goes on without it here."""
    try:
        return load_image_map(ctx.settings.state_dir)
    except ImageMapError:
        return {}


async def finish_stored_score(ctx: RunContext, run_id: str) -> RunRecord:
    return await ctx.moves.finish(
        run_id, "scored", "graded (the score was recorded before srb stopped)")


async def zero_for_collection(ctx: RunContext, run_id: str, reason: str) -> RunRecord:
    """The submission broke a collection cap: that is evidence about the submission."""
    await ctx.store.runs.add_run_note(run_id, f"submission not graded: {reason}")
    await ctx.moves.to(run_id, "audit", "collection aborted")
    return await ctx.moves.finish(
        run_id, "scored", f"collection aborted: {reason}", detail=reason,
        score=0.0, max_score=100.0, valid=True, blocked_by="collection",
    )


async def grade(
    ctx: RunContext,
    run_id: str,
    task: Task,
    state_a: Path | None,
    *,
    gateway: Gateway | None,
    stages: Sequence[str] | None = None,
    force: bool = False,
) -> Graded:
    """Grade the collected run ``run_id`` (all stages, or ``stages``) and finish it."""
    from srb_tui.service.grading.ladder import LadderContext, grade_run

    if state_a is None:
        prepared = await asyncio.to_thread(
            prepare_state_a, task.dir, task.state_a, ctx.settings.state_a_cache,
        )
        state_a = prepared.tree
    run_dir = ctx.run_dir(run_id)
    ladder = LadderContext(
        store=ctx.store,
        engine=ctx.engine,
        task=task,
        run_id=run_id,
        submission_dir=ctx.submission_dir(run_id),
        original_dir=state_a,
        run_dir=run_dir,
        base_image=ctx.settings.base_image,
        publish=ctx.moves.publish,
        adversary_budget_sec=ctx.moves.budget(run_id),
        gateway=gateway,
        image_map=image_map(ctx),
    )
    envelope = await grade_run(ladder, stages=stages, force=force)
    return Graded(await ctx.moves.finish(run_id, None), envelope)

