"""Strength campaigns (issue 36): plan the mutants, grade what has no outcome yet, and read
the figures back — the one place the CLI, the console and the report go through.

A campaign's id follows from what it measures (task, tree, N, seed), so running the same
command again resumes it: the plan is already stored whole, and only mutants without a
Stage II outcome are graded (each outcome is stored as it ends, so a SIGKILL loses at most
the mutants in flight). Stage III on the survivors is not built yet (see the closing note
of stop 43); :func:`outcomes` reads ``caught_by`` as None for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.service.grading.ladder_identity import identity_stage
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.strength_stage import grade_mutant_stage_ii
from srb_tui.store import Store
from srb_tui.store.strength import MutantRow, StrengthCampaign
from srb_tui.strength.mutate import Mutant, sample_mutants
from srb_tui.strength.scores import MutantOutcome, StrengthFigures, figures

if TYPE_CHECKING:
    from srb_tui.service.app import Services


def campaign_id_for(task_id: str, of_tree: str, asked: int, seed: int) -> str:
    """``s-<task>-<tree>-n<N>-s<seed>``: the same measurement, the same campaign."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", task_id)
    return f"s-{safe}-{of_tree}-n{asked}-s{seed}"


def panel_of(task: Task) -> list[str]:
    """The task's Stage III adversaries in probe order ([] without Stage III)."""
    if task.evaluation is None or task.evaluation.verification is None or task.probe is None:
        return []
    return [a.id for a in task.probe.adversaries]


async def plan(store: Store, task: Task, tree: Path, *, asked: int, seed: int,
               of_tree: str = "state-a", budget_sec: float | None = None,
               mutants: Sequence[Mutant] | None = None) -> tuple[StrengthCampaign, int]:
    """Store the campaign and its sampled mutants of ``tree`` (the plan, whole); the
    campaign and how many mutants were new. ``mutants`` replaces the sample (tests)."""
    chosen = list(mutants) if mutants is not None else sample_mutants(tree, asked, seed)
    return await store.strength.plan(
        campaign_id_for(task.id, of_tree, asked, seed), task_id=task.id,
        task_path=str(task.dir), of_tree=of_tree, asked=asked, seed=seed,
        panel=panel_of(task), budget_sec=budget_sec, mutants=[m.to_json() for m in chosen])


async def grade_stage_ii(
    store: Store,
    engine: DockerEngine,
    task: Task,
    state_a: Path,
    campaign_id: str,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    image_map: Mapping[str, str] | None = None,
    publish: Callable[[object], None] = lambda event: None,
    on_mutant: Callable[[MutantRow, str], None] | None = None,
) -> int:
    """Grade by Stage II every mutant of the campaign without an outcome; how many were
    graded. The stage image is built (or found) once for all of them."""
    rows = [r for r in await store.strength.mutants(campaign_id) if r.stage_ii is None]
    if not rows:
        return 0
    await store.strength.set_status(campaign_id, "running")
    images = StageImages(engine, task, base_image, publish, run_id=campaign_id,
                         image_map=image_map)
    await images.get(identity_stage(task))
    try:
        for row in rows:
            mutant = Mutant.from_json(row.doc)
            result = await grade_mutant_stage_ii(engine, task, state_a, mutant, images,
                                                 publish=publish)
            await store.strength.record_stage_ii(campaign_id, row.mutant_id, result.outcome,
                                                 result.to_json())
            if on_mutant is not None:
                on_mutant(row, result.outcome)
    finally:
        await images.settle()
    left = [r for r in await store.strength.mutants(campaign_id) if r.stage_ii is None]
    await store.strength.set_status(campaign_id, "stopped" if left else "done")
    return len(rows)


def outcomes(rows: Sequence[MutantRow]) -> list[MutantOutcome]:
    """The scored outcomes of the graded mutants (ungraded ones are left out)."""
    out = []
    for row in rows:
        if row.stage_ii is None:
            continue
        caught = None
        if row.stage_iii_done:
            caught = frozenset(a for a, o in row.catches.items() if o == "broken")
        out.append(MutantOutcome(row.mutant_id, row.stage_ii, caught,
                                 row.equivalent is not None))
    return out


async def campaign_figures(store: Store, campaign_id: str) -> StrengthFigures:
    campaign = await store.strength.campaign(campaign_id)
    if campaign is None:
        raise KeyError(campaign_id)
    return figures(outcomes(await store.strength.mutants(campaign_id)), campaign.panel)


class StrengthFailed(Exception):
    """A strength campaign could not measure (State A, the engine, a stage fault, the
    mutation extra missing); the message names the task."""


async def run_campaign(
    services: Services,
    task: Task,
    *,
    asked: int,
    seed: int,
    publish: Callable[[object], None] = lambda event: None,
    on_mutant: Callable[[MutantRow, str], None] | None = None,
) -> tuple[StrengthCampaign, int, int]:
    """Plan (or resume) the campaign of ``asked`` mutants of State A with ``seed`` and grade
    by Stage II what has no outcome: (campaign, mutants planned now, mutants graded now).
    Raises StrengthFailed, or EngineUnreachable from :mod:`srb_tui.service.app`."""
    from srb_tui.runner import RunnerError
    from srb_tui.service.app import StateAError
    from srb_tui.service.grading.image_plan import ImageMapError, load_image_map
    from srb_tui.service.grading.stages.common import StageFault
    from srb_tui.strength.mutate import MutantStale, MutationUnavailable

    settings = services.settings
    try:
        tree = (await services.prepare_state_a(task)).tree
        store = await services.store()
        campaign, added = await plan(store, task, tree, asked=asked, seed=seed)
        await services.connect()
        graded = await grade_stage_ii(
            store, services.engine, task, tree, campaign.id, base_image=settings.base_image,
            image_map=load_image_map(settings.state_dir), publish=publish, on_mutant=on_mutant)
    except MutantStale as exc:
        raise StrengthFailed(f"{task.id}: a mutant no longer fits State A: {exc}") from exc
    except (StateAError, MutationUnavailable, StageFault, RunnerError, ImageMapError) as exc:
        raise StrengthFailed(f"{task.id}: {exc}") from exc
    return campaign, added, graded
