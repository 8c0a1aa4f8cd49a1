"""Stage I: the audit. `samples` reviews of State A vs the submission, voted per gate.

The reviewer loop runs on the host (`run_review` with the stage's driver: a model, or a
scripted program); every tool call, and the re-check of every fail's evidence, is executed
in the audit container by the grader's tools loop, where both trees are read-only and there
is no network. Each accepted review is graded (an unproven fail counts as a pass, marked
downgraded), the samples vote per gate, and votes, outcomes and transcripts are recorded.
A run always defends against a tree that addresses its judge (:mod:`.audit_defence`):
tool results are fenced, judge-addressed text is recorded as findings (module
``judge-addressed`` of the audit's checks), and a voted pass that deterministic evidence
contradicts is overruled.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from srb_tui.drivers import DriverConfigError, ModelDriver, ReviewSample, make_driver
from srb_tui.drivers.loop import deadline_in
from srb_tui.gateway import driver_endpoint
from srb_tui.grader.audit.review import AuditGate, prompt_values, render_prompt
from srb_tui.grader.envelope import atomic_write_json
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress

from .audit_defence import FINDINGS_MODULE, Defences
from .audit_review import (
    REVIEWER_SYSTEM,
    audit_gates,
    outcome_rows,
    review_and_judge,
    vote_rows,
)
from .audit_scan import ScanReport, run_scan
from .channels import ContainerToolChannel
from .common import (
    StageFault,
    StageOutcome,
    option_number,
    option_str,
    option_strings,
    tests_dir,
)
from .stage import StageContext
from .stage_container import StageContainer
from .stage_layout import ORIGINAL_DIR, SUBMISSION_DIR
from .transcripts import review_path, write_jsonl

__all__ = ["AUDIT", "REVIEWER_SYSTEM", "outcome_rows", "stage_prompt", "vote_rows"]

DEFAULT_PROMPT = (
    "Review the migration for task {{task}}.\n{{roots}}\nCommands you may run: {{commands}}\n"
    "Scan findings: {{findings}}\n\nGates:\n{{gates}}\n"
)


def _gates(task: Task) -> list[AuditGate]:
    assert task.evaluation is not None
    return audit_gates(task.evaluation.gates)


def stage_driver(
    spec: StageSpec,
    task: Task,
    environ: Mapping[str, str],
    endpoint: Any = None,
    program: list[str] | None = None,
) -> ModelDriver:
    """The reviewer the stage configures (`program` replaces a scripted driver's argv)."""
    name = "scripted" if program else option_str(spec, "driver", "scripted")
    program = program or option_strings(spec, "program")
    options = spec.options.get("driver_options")
    api_key_env = spec.options.get("api_key_env")
    try:
        return make_driver(
            name,
            option_str(spec, "model", name),
            dict(options) if isinstance(options, Mapping) else None,
            api_key_env=api_key_env if isinstance(api_key_env, str) else None,
            program=program or None,
            environ=environ,
            cwd=str(tests_dir(task)),
            endpoint=endpoint,
        )
    except DriverConfigError as err:
        raise StageFault(f"audit: reviewer driver: {err}") from err


def stage_prompt(
    spec: StageSpec,
    task: Task,
    gates: list[AuditGate],
    allowed: list[str],
    findings: str,
    original: str = ORIGINAL_DIR,
    submission: str = SUBMISSION_DIR,
) -> str:
    """The task's audit prompt (or the default) with its placeholders filled."""
    rel = option_str(spec, "prompt", "")
    template = DEFAULT_PROMPT
    if rel:
        try:
            template = (tests_dir(task) / rel).read_text(encoding="utf-8")
        except OSError as err:
            raise StageFault(f"audit: cannot read the prompt tests/{rel}: {err}") from err
    values = prompt_values(
        task=task.id,
        original=original,
        submission=submission,
        gates=gates,
        commands=allowed,
        findings=findings,
    )
    return render_prompt(template, values)


def with_note(findings: str, defences: Defences) -> str:
    """The scan's findings followed by the defences' note on judge-addressed text."""
    note = defences.prompt_note()
    return f"{findings}\n{note}".strip() if note else findings


class AuditStage:
    """Stage I: run the audit and record its votes and outcomes; the outcome (envelope not
    yet stored)."""

    name = "audit"

    async def run(self, ctx: StageContext) -> StageOutcome:
        task = ctx.task
        run_id = ctx.run_id
        publish = ctx.publish
        run_dir = ctx.folder()
        assert task.evaluation is not None
        spec = task.evaluation.audit
        gates = _gates(task)
        allowed = option_strings(spec, "allowed_commands")
        samples = int(option_number(spec, "samples", 3))
        max_turns = int(option_number(spec, "max_turns", 80))
        name = option_str(spec, "driver", "scripted")
        endpoint = await driver_endpoint(ctx.gateway, run_id, "reviewer", name)
        environ = os.environ if ctx.environ is None else ctx.environ
        driver = stage_driver(spec, task, environ, endpoint)
        stage_prompt(spec, task, gates, allowed, "")  # a prompt that cannot be read fails first
        started_wall, started = time.time(), time.monotonic()
        defences = Defences.prepare(ctx.submission)
        image = await ctx.images.get("audit")
        async with StageContainer(
            ctx.engine, run_id, "audit", image.tag, publish=publish, store=ctx.store
        ) as box:
            await box.put_trees(ctx.original, ctx.submission)
            scan = ScanReport("(no scan ran for this task)")
            if task.scan is not None:
                publish(Progress(run_id, "audit: scan"))
                budget = sum(m.timeout_sec for m in task.scan.modules) + 120
                scan = await run_scan(box, task, budget)
            prompt = stage_prompt(spec, task, gates, allowed, with_note(scan.findings, defences))
            channel = ContainerToolChannel(
                box,
                allowed_commands=allowed,
                run_timeout_sec=option_number(spec, "run_timeout_sec", 60.0),
            )
            try:
                judged = await review_and_judge(
                    task_id=task.id,
                    gates=task.evaluation.gates,
                    driver=driver,
                    channel=channel,
                    prompt=prompt,
                    submission=ctx.submission,
                    defences=defences,
                    samples=samples,
                    max_turns=max_turns,
                    deadline=deadline_in(spec.timeout_sec),
                    allowed=allowed,
                    scan_checks=scan.checks,
                    progress=lambda text: publish(Progress(run_id, text)),
                )
            finally:
                await channel.aclose()
                await driver.aclose()
        reviews: list[ReviewSample] = judged.reviews
        grades = judged.grades
        envelope = judged.envelope
        envelope.checks.extend(scan.checks)
        envelope.units.extend(scan.units)
        if task.scan is not None:
            envelope.metadata["scan"] = scan.summary
        envelope.started = started_wall
        envelope.duration_sec = round(time.monotonic() - started, 3)
        envelope.metadata.update(
            {
                "driver": driver.label,
                "tool_calls": channel.calls,
                "samples": [
                    {
                        "index": r.index,
                        "status": r.status,
                        "ending": r.ending,
                        "reason": r.reason,
                        "turns": r.turns,
                        "tool_calls": r.tool_calls,
                        "rejections": r.rejections,
                        "wall_sec": round(r.wall_sec, 3),
                        "grade_error": r.grade_error,
                        "usage": {
                            "driver": driver.label,
                            "calls": r.turns,
                            "input_tokens": r.usage.input_tokens,
                            "output_tokens": r.usage.output_tokens,
                        },
                    }
                    for r in reviews
                ],
            }
        )
        atomic_write_json(run_dir / "audit-transcripts.json", [r.to_dict() for r in reviews])
        for review in reviews:
            write_jsonl(review_path(run_dir, review.index), review.to_dict().get("transcript", []))
        await ctx.store.grading.record_gate_votes(run_id, vote_rows(grades, gates))
        await ctx.store.grading.record_gate_outcomes(
            run_id, outcome_rows(grades, gates, judged.overrules)
        )
        await ctx.store.grading.record_checks(
            run_id, "audit", defences.finding_checks(), module_id=FINDINGS_MODULE
        )
        doc = envelope.to_dict()
        gate = str(envelope.metadata.get("gate", "error"))
        harness_error = None
        if envelope.status == "error":
            reasons = "; ".join(f"sample {g.index}: {g.reason}" for g in grades if not g.usable)
            harness_error = f"audit: no usable review ({reasons})"
        elif gate == "error":
            harness_error = "audit: a required gate received no usable vote"
        return StageOutcome(
            stage="audit",
            status=envelope.status,
            envelope=doc,
            harness_error=harness_error,
            audit_gate=gate if envelope.status == "ok" else "error",
        )


AUDIT = AuditStage()
