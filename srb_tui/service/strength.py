"""Strength campaigns (issue 36): plan the mutants, grade what has no outcome yet, and read
the figures back — the one place the CLI, the console and the report go through.

A campaign's id follows from what it measures (task, tree, N, seed), so running the same
command again resumes it: the plan is already stored whole, and only mutants without a
Stage II outcome are graded (each outcome is stored as it ends, so a SIGKILL loses at most
the mutants in flight); then the task's adversary panel grades each Stage II survivor
(:mod:`srb_tui.service.strength_grade`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.runner import DockerEngine
from srb_tui.runner.backends import Backend
from srb_tui.schema import Task
from srb_tui.service.strength_grade import OnMutant, StrengthGrader
from srb_tui.service.views.strength import outcomes
from srb_tui.store import Store
from srb_tui.store.strength_records import StrengthCampaign
from srb_tui.strength.mutate import Mutant, mutant_diff, sample_mutants
from srb_tui.strength.scores import StrengthFigures, figures

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
        panel=panel_of(task), budget_sec=budget_sec,
        mutants=[{**m.to_json(), "diff": mutant_diff(tree, m)} for m in chosen])


async def campaign_figures(store: Store, campaign_id: str) -> StrengthFigures:
    campaign = await store.strength.campaign(campaign_id)
    if campaign is None:
        raise KeyError(campaign_id)
    return figures(outcomes(await store.strength.mutants(campaign_id)), campaign.panel)


class StrengthFailed(Exception):
    """A strength campaign could not measure (State A, the engine, a stage fault, the
    mutation extra missing, no reference); the message names the task."""


def reference_of(task: Task) -> Path:
    """The task's reference submission (``submissions/reference``); StrengthFailed when it
    ships none (published tasks do not)."""
    folder = task.dir / "submissions" / "reference"
    if not folder.is_dir():
        raise StrengthFailed(f"{task.id}: --of reference needs a reference submission at "
                             f"{folder}; the task ships none (mutate State A instead)")
    return folder


async def run_campaign(
    services: Services,
    task: Task,
    *,
    asked: int,
    seed: int,
    of_tree: str = "state-a",
    stage_iii: bool = True,
    budget_sec: float | None = None,
    jobs: int = 1,
    publish: Callable[[object], None] = lambda event: None,
    on_mutant: OnMutant | None = None,
) -> tuple[StrengthCampaign, int, int, int]:
    """Plan (or resume) the campaign of ``asked`` mutants of State A (``of_tree``
    ``reference``: of the task's reference submission, graded in Stage II's image as a
    submission is) with ``seed``, grade by
    Stage II what has no outcome and (``stage_iii``) by the panel every survivor without a
    verdict, each adversary with ``budget_sec`` when given: (campaign, mutants planned now,
    Stage II graded now, Stage III graded now). Raises StrengthFailed, or
    EngineUnreachable from :mod:`srb_tui.service.app`."""
    from srb_tui.runner import RunnerError
    from srb_tui.service.app import StateAError
    from srb_tui.service.grading.image_plan import ImageMapError, load_image_map
    from srb_tui.service.grading.stages.common import StageFault
    from srb_tui.strength.mutate import MutantStale, MutationUnavailable

    settings = services.settings
    try:
        state_a = (await services.prepare_state_a(task)).tree
        mutated = state_a if of_tree == "state-a" else reference_of(task)
        store = await services.store()
        campaign, added = await plan(store, task, mutated, asked=asked, seed=seed,
                                     of_tree=of_tree, budget_sec=budget_sec)
        await services.connect()
        backend = await services.backend()
        engine, node = await _engine_for(services, backend, campaign.id, task)
        await store.strength.set_node(campaign.id, node)
        grader = StrengthGrader(
            store, engine, task, state_a, campaign.id, settings.runs_dir,
            base_image=settings.base_image, image_map=load_image_map(settings.state_dir),
            publish=publish, budget_sec=budget_sec, jobs=jobs,
            tree=None if of_tree == "state-a" else mutated,
            stage=None if of_tree == "state-a" else "behavioural",
            backend=backend.kind, node=node)
        try:
            second = await grader.stage_ii(on_mutant)
            third = await grader.stage_iii(on_mutant) if stage_iii else 0
        finally:
            await grader.close()
            await backend.release(campaign.id)
        await grader.finish()
    except MutantStale as exc:
        raise StrengthFailed(f"{task.id}: a mutant no longer fits State A: {exc}") from exc
    except (StateAError, MutationUnavailable, StageFault, RunnerError, ImageMapError) as exc:
        raise StrengthFailed(f"{task.id}: {exc}") from exc
    return campaign, added, second, third


async def _engine_for(services: Services, backend: Backend, campaign_id: str, task: Task
                      ) -> tuple[DockerEngine, str | None]:
    """The engine a sitting grades on: the local one, or a node of the configured pool
    (Swarm included) with room for the task's declared CPUs and memory, srb's base image
    brought to it first — as a run is placed. The whole sitting stays on that node (its
    stage images are built there once)."""
    if backend.local:
        return services.engine, None
    from srb_tui.runner.image_copy import ensure_image
    from srb_tui.service.run.run_placement import task_need

    node = await backend.place(campaign_id, task_need(task))
    if node.engine is not services.engine:
        await ensure_image(node.engine, services.engine, services.settings.base_image,
                           registry=backend.registry)
    return node.engine, node.name
