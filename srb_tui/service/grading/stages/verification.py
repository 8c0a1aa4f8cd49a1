"""Stage III: the adversaries of probe.toml, each a round that hunts for one counterexample.

All rounds share one verification container (both toolchains, both trees read-only, the
probe folder under /tests) and run concurrently up to a limit. A ``fuzz`` adversary is the
grader's model-free fuzzer, run inside the container to its budget; ``scripted``,
``anthropic`` and ``openai`` adversaries run `run_adversary_round` on the host with a
channel whose reading tools and ``try_test`` execute in the container. Every candidate, from
either kind, is judged by the same grader adjudication (reruns, fault codes, scope), and
every judged candidate is recorded as a counterexample with its code, both sides' output,
exit codes and durations. Outcome per adversary: broken | survived | error.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from srb_tui.gateway import driver_endpoint
from srb_tui.grader.boundary.lockdown import tree_digest
from srb_tui.grader.envelope import utc_iso
from srb_tui.runner import RunnerError
from srb_tui.schema import Adversary, StageSpec
from srb_tui.service.events import Progress
from srb_tui.service.verification_events import AdversaryRoundEnded

from .client_lane import ClientLanes, is_client_driver, lane_limit
from .common import StageFault, StageOutcome, option_str
from .probe_prompt import ADVERSARY_EXPECTATIONS as ADVERSARY_EXPECTATIONS
from .probe_prompt import ADVERSARY_SYSTEM as ADVERSARY_SYSTEM
from .stage import DEFAULT_PARALLEL as DEFAULT_PARALLEL
from .stage import StageContext
from .stage_container import StageContainer
from .stage_layout import candidate_layout
from .verification_client import client_round
from .verification_record import JUDGED as JUDGED
from .verification_record import panel_outcome, record_round
from .verification_rounds import EARLY_SHARE as EARLY_SHARE
from .verification_rounds import RoundResult as RoundResult
from .verification_rounds import adjudicate_breaks, fuzz_round, model_round
from .verification_rounds import flag_early_survival as flag_early_survival
from .verification_setup import ProbeSetup, probe_setup

_model_round = model_round  # the name the candidate-scratch contract test calls


class VerificationStage:
    """Stage III: run every adversary of probe.toml; record rounds and counterexamples."""

    name = "verification"

    async def run(self, ctx: StageContext) -> StageOutcome:
        task = ctx.task
        assert task.evaluation is not None and task.evaluation.verification is not None
        spec = task.evaluation.verification
        setup = probe_setup(task, spec)
        image = await ctx.images.get("verification")
        lanes = max(1, min(len(setup.probe.adversaries), ctx.max_parallel))
        setup = dataclasses.replace(
            setup,
            candidates=dataclasses.replace(
                setup.candidates,
                original_digest=await asyncio.to_thread(tree_digest, ctx.original),
                lanes=lanes,  # candidate runs take turns on the run lease
            ),
        )
        async with StageContainer(
            ctx.engine, ctx.run_id, "verification", image.tag, publish=ctx.publish,
            store=ctx.store, layout=candidate_layout(len(setup.probe.adversaries)), task=task,
        ) as box:  # fmt: skip
            await box.put_trees(ctx.original, ctx.submission)
            await box.put_context(task, [option_str(spec, "context", spec.name), setup.folder])
            panel = _Panel(ctx, spec, box, setup)
            try:
                results = list(await asyncio.gather(
                    *(panel.round(i, a) for i, a in enumerate(setup.probe.adversaries))))
            finally:
                await panel.client_lanes.aclose()
        return panel_outcome(task.id, results, panel.breaks, setup, ctx.budget_override)


class _Panel:
    """The adversaries of one Stage III sharing its container, each a round that takes its
    turn under the stage's limits and is stored the moment it ends (the console shows a
    lane while the others still run)."""

    def __init__(
        self, ctx: StageContext, spec: StageSpec, box: StageContainer, setup: ProbeSetup
    ) -> None:
        self.ctx, self.spec, self.box, self.setup = ctx, spec, box, setup
        self.limit = asyncio.Semaphore(max(1, ctx.max_parallel))
        clients = sum(1 for a in setup.probe.adversaries if is_client_driver(a.driver))
        self.client_limit = asyncio.Semaphore(lane_limit(
            float(box.grading["cpus"]), int(box.grading["memory_mb"]), clients))  # fmt: skip
        self.client_lanes = ClientLanes(ctx.engine, ctx.gateway, ctx.run_id,
                                        dict(box.spec.labels))  # fmt: skip
        self.breaks: dict[str, list[dict[str, Any]]] = {}

    async def round(self, index: int, adversary: Adversary) -> RoundResult:
        ctx = self.ctx
        budget = adversary.budget_sec if ctx.budget_override is None else ctx.budget_override
        async with self.limit:
            await ctx.store.grading.record_adversary_round(
                ctx.run_id, adversary.id, status="running", model=adversary.model,
                driver=adversary.driver, focus=adversary.focus or None, started_at=utc_iso(),
            )  # fmt: skip
            ctx.publish(Progress(ctx.run_id,
                                 f"verification: {adversary.id} started ({budget:g} s)"))
            try:
                result = await self.play(index, adversary, budget)
            except (StageFault, RunnerError, ValueError, OSError) as err:
                result = RoundResult(adversary, "error", f"harness: {err}", utc_iso(), 0.0)
            await adjudicate_breaks(result, self.spec, self.setup, ctx.folder(), ctx.environ,
                                    ctx.gateway, ctx.run_id)  # fmt: skip
            flag_early_survival(result, budget)
            self.breaks[adversary.id] = await record_round(ctx.store, ctx.run_id, result)
            ctx.publish(AdversaryRoundEnded(ctx.run_id, adversary.id, result.outcome,
                                            result.duration_sec, len(result.candidates)))
            ctx.publish(Progress(ctx.run_id, f"verification: {adversary.id} {result.outcome}"))
            return result

    async def play(self, index: int, adversary: Adversary, budget: float) -> RoundResult:
        ctx, box, setup = self.ctx, self.box, self.setup
        if adversary.driver == "fuzz":
            return await fuzz_round(box, setup, adversary, index, budget)
        if is_client_driver(adversary.driver):
            async with self.client_limit:
                return await client_round(ctx, box, setup, adversary, budget,
                                          lanes=self.client_lanes, index=index)  # fmt: skip
        endpoint = await driver_endpoint(ctx.gateway, ctx.run_id, "adversary", adversary.driver)
        return await model_round(
            box, setup, adversary, ctx.task, self.spec, budget,
            ctx.folder(), ctx.environ, endpoint, index,
        )  # fmt: skip


VERIFICATION = VerificationStage()
