"""Grading a strength campaign's mutants (issue 36): Stage II of every mutant without an
outcome, then the adversary panel on every Stage II survivor without a Stage III verdict.

One :class:`StrengthGrader` per campaign sitting: one :class:`StageImages`, so the
verification image (State A's toolchain, where Stage II of a mutant and Stage III both run)
is built or found once, and State A is extracted once by the caller — nothing is rebuilt
per mutant. Every outcome is stored as it ends, so a SIGKILL loses at most the mutant in
flight; a Stage III run a SIGKILL left behind is ended as abandoned on resume and its
survivor is graded again in a fresh run (a fresh world for every run).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.runner import DockerEngine, list_managed, remove
from srb_tui.schema import Task
from srb_tui.service.grading.ladder_identity import identity_stage
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.service.grading.strength_baseline import Baseline, grade_baseline
from srb_tui.service.grading.strength_stage import STAGE_I_SKIPPED, grade_mutant_stage_ii
from srb_tui.service.grading.strength_stage_iii import Catches, grade_survivor
from srb_tui.service.provenance import record_launch
from srb_tui.store import Store
from srb_tui.store.lifecycle import is_final
from srb_tui.store.run_extra import MUTANT_AGENT_PREFIX, NODE, STRENGTH
from srb_tui.store.run_extra_more import StrengthRef
from srb_tui.store.strength_records import MutantRow
from srb_tui.strength.mutate import Mutant

OnMutant = Callable[[MutantRow, str], None]
"""Told of each mutant as a stage ends for it: the row and what happened (an outcome)."""


def mutant_agent(campaign_id: str, mutant_id: str) -> str:
    return f"{MUTANT_AGENT_PREFIX}{campaign_id}/{mutant_id}"


@dataclass
class StrengthGrader:
    """The stages of one strength campaign over one extracted State A."""

    store: Store
    engine: DockerEngine
    task: Task
    state_a: Path
    campaign_id: str
    runs_dir: Path
    base_image: str = DEFAULT_BASE_IMAGE
    image_map: Mapping[str, str] | None = None
    publish: Callable[[object], None] = lambda event: None
    budget_sec: float | None = None
    time_limit_sec: float | None = None  # a mutant's Stage II (default: the baseline's)
    jobs: int = 1  # mutants graded by Stage II at once, each in its own container
    tree: Path | None = None  # the tree mutated (default State A; the reference)
    stage: str | None = None  # the image of a mutant's Stage II (default the identity run's)
    backend: str = "local"  # the backend kind the sitting was placed by (provenance)
    node: str | None = None  # the pool node the sitting runs on (None: the local engine)
    _images: StageImages | None = field(default=None, init=False)
    _swept: bool = field(default=False, init=False)

    def images(self) -> StageImages:
        if self._images is None:
            self._images = StageImages(self.engine, self.task, self.base_image, self.publish,
                                       run_id=self.campaign_id, image_map=self.image_map)
        return self._images

    @property
    def run_prefix(self) -> str:
        """How the run ids of this campaign's Stage II containers begin."""
        return "st" + hashlib.sha1(self.campaign_id.encode()).hexdigest()[:10]

    async def sweep(self) -> int:
        """Remove the Stage II containers a killed sitting of this campaign left on the
        engine (a SIGKILL skips every cleanup); how many. Run before this sitting starts
        any, so only leftovers match."""
        if self._swept:
            return 0
        self._swept = True
        gone = 0
        for old in await list_managed(self.engine):
            if old.handle.run_id.startswith(self.run_prefix + "-"):
                await remove(self.engine, old.handle)
                gone += 1
        return gone

    async def close(self) -> None:
        if self._images is not None:
            await self._images.settle()

    async def baseline(self) -> Baseline:
        """State A's own suite run and what a State A that cannot start passes: graded once
        per campaign and stored."""
        campaign = await self.store.strength.campaign(self.campaign_id)
        if campaign is not None and campaign.baseline is not None:
            stored = Baseline.from_json(campaign.baseline)
            if stored is not None:
                return stored
        found = await grade_baseline(self.engine, self.task, self.state_a, self.images(),
                                     publish=self.publish, tree=self.tree, stage=self.stage,
                                     run_prefix=self.run_prefix)
        await self.store.strength.set_baseline(self.campaign_id, found.to_json())
        return found

    async def stage_ii(self, on_mutant: OnMutant | None = None) -> int:
        """Stage II of every mutant without an outcome; how many were graded."""
        rows = [r for r in await self.store.strength.mutants(self.campaign_id)
                if r.stage_ii is None]
        if not rows:
            return 0
        await self.store.strength.set_status(self.campaign_id, "running")
        await self.sweep()
        await self.images().get(self.stage or identity_stage(self.task))
        baseline = await self.baseline()
        limit = asyncio.Semaphore(max(1, self.jobs))

        async def one(row: MutantRow) -> None:
            async with limit:
                result = await grade_mutant_stage_ii(
                    self.engine, self.task, self.state_a, Mutant.from_json(row.doc),
                    self.images(), publish=self.publish, baseline=baseline,
                    time_limit_sec=self.time_limit_sec, tree=self.tree, stage=self.stage,
                    run_prefix=self.run_prefix)
                await self.store.strength.record_stage_ii(self.campaign_id, row.mutant_id,
                                                          result.outcome, result.to_json())
                if on_mutant is not None:
                    on_mutant(row, result.outcome)

        try:
            async with asyncio.TaskGroup() as group:  # one fault stops the rest
                for row in rows:
                    group.create_task(one(row))
        except BaseExceptionGroup as faults:  # the first fault, as a sequential sitting's
            raise faults.exceptions[0] from None
        return len(rows)

    async def stage_iii(self, on_mutant: OnMutant | None = None) -> int:
        """The panel on every survivor without a Stage III verdict (an equivalent-marked
        one is not spent on); how many were graded."""
        campaign = await self.store.strength.campaign(self.campaign_id)
        if campaign is None or not campaign.panel:
            return 0
        rows = [r for r in await self.store.strength.mutants(self.campaign_id)
                if r.stage_ii == "survived" and not r.stage_iii_done and r.equivalent is None]
        if rows:
            await self.store.strength.set_status(self.campaign_id, "running")
        for row in rows:
            await self._abandon(row)
            run_id, catches = await self._survivor(row)
            await self.store.strength.record_stage_iii(
                self.campaign_id, row.mutant_id, run_id, catches)
            if on_mutant is not None:
                caught = sorted(a for a, (outcome, _) in catches.items() if outcome == "broken")
                on_mutant(row, "caught by " + ", ".join(caught) if caught else "uncaught")
        return len(rows)

    async def _abandon(self, row: MutantRow) -> None:
        if row.stage_iii_run is None:
            return
        old = await self.store.runs.get_run(row.stage_iii_run)
        if old is not None and not is_final(old.status):
            await self.store.runs.transition(
                old.id, "infra_error", "abandoned: its strength campaign was resumed; the "
                "survivor is graded again in a fresh run")
        for left in await list_managed(self.engine, row.stage_iii_run):
            await remove(self.engine, left.handle)

    async def _survivor(self, row: MutantRow) -> tuple[str, Catches]:
        mutant = Mutant.from_json(row.doc)
        ref = StrengthRef(self.campaign_id, row.mutant_id, row.key, mutant.describe())
        extra: dict[str, object] = {STRENGTH: ref.to_json()}
        if self.node is not None:
            extra[NODE] = self.node
        run = await self.store.runs.create_run(
            task_id=self.task.id, task_path=str(self.task.dir),
            agent=mutant_agent(self.campaign_id, row.mutant_id),
            notes=[STAGE_I_SKIPPED, f"strength mutant {mutant.describe()}"], extra=extra)
        # the survivor's run is srb's own (agent ``mutant:``): its launch record names srb's
        # version, the grader, the task digest and the panel's models, so the Stage III stamp
        # that persist_stage writes has a record to land in
        await record_launch(self.store, run, self.task, client=None, client_version=None,
                            backend=self.backend)
        await self.store.strength.start_stage_iii(self.campaign_id, row.mutant_id, run.id)
        try:
            ctx = StageContext(
                engine=self.engine, store=self.store, run_id=run.id, task=self.task,
                original=self.state_a, submission=self.tree or self.state_a,
                images=self.images(), publish=self.publish, run_dir=self.runs_dir / run.id,
                budget_override=self.budget_sec)
            return run.id, await grade_survivor(ctx, mutant)
        except BaseException as exc:
            now = await self.store.runs.get_run(run.id)
            if now is not None and not is_final(now.status):
                await self.store.runs.transition(run.id, "infra_error",
                                                 f"strength Stage III failed: {exc!r}"[:500])
            raise

    async def finish(self) -> str:
        """The campaign's status after this sitting: done when every mutant has its Stage II
        outcome and every survivor not marked equivalent its Stage III verdict."""
        campaign = await self.store.strength.campaign(self.campaign_id)
        rows = await self.store.strength.mutants(self.campaign_id)
        panel = bool(campaign and campaign.panel)
        left = [r for r in rows if r.stage_ii is None or (
            panel and r.stage_ii == "survived" and not r.stage_iii_done
            and r.equivalent is None)]
        status = "stopped" if left else "done"
        await self.store.strength.set_status(self.campaign_id, status)
        return status
