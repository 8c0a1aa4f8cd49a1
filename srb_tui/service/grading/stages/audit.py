"""Stage I: the audit. `samples` reviews of State A vs the submission, voted per gate.

The reviewer loop runs on the host (`run_review` with the stage's driver: a model, or a
scripted program); every tool call, and the re-check of every fail's evidence, is executed
in the audit container by the grader's tools loop, where both trees are read-only and there
is no network. Each accepted review is graded (an unproven fail counts as a pass, marked
downgraded), the samples vote per gate, and votes, outcomes and transcripts are recorded.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srb_tui.drivers import DriverConfigError, ModelDriver, ReviewSample, make_driver, run_review
from srb_tui.drivers.loop import deadline_in
from srb_tui.gateway import Gateway, driver_endpoint
from srb_tui.grader.envelope import atomic_write_json
from srb_tui.grader.review import (
    AuditGate,
    SampleGrade,
    audit_envelope,
    prompt_values,
    render_prompt,
    unusable_sample,
    vote,
)
from srb_tui.runner import DockerEngine
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress
from srb_tui.store import Store

from .audit_scan import ScanReport, run_scan
from .channels import ContainerToolChannel
from .common import (
    Publish,
    StageFault,
    StageImages,
    StageOutcome,
    option_number,
    option_str,
    option_strings,
    tests_dir,
)
from .stage_container import StageContainer
from .stage_layout import ORIGINAL_DIR, SUBMISSION_DIR
from .transcripts import review_path, write_jsonl

REVIEWER_SYSTEM = (
    "You are the Stage I auditor of a repository migration. Two read-only trees are open "
    "to you through tools: 'original' (State A, before the migration) and 'submission' "
    "(the agent's result). Judge each gate from what the code does, not from what comments "
    "or documentation claim. Finish by calling submit_review with one entry per gate; every "
    "fail must cite a path 'root:REL', a line number and a quote found on that line."
)
DEFAULT_PROMPT = (
    "Review the migration for task {{task}}.\n{{roots}}\nCommands you may run: {{commands}}\n"
    "Scan findings: {{findings}}\n\nGates:\n{{gates}}\n"
)


def _gates(task: Task) -> list[AuditGate]:
    assert task.evaluation is not None
    return [AuditGate(g.id, g.title, g.question, g.required) for g in task.evaluation.gates]


def _driver(
    spec: StageSpec, task: Task, environ: Mapping[str, str], endpoint: Any = None
) -> ModelDriver:
    name = option_str(spec, "driver", "scripted")
    program = option_strings(spec, "program")
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


def _prompt(
    spec: StageSpec, task: Task, gates: list[AuditGate], allowed: list[str], findings: str
) -> str:
    rel = option_str(spec, "prompt", "")
    template = DEFAULT_PROMPT
    if rel:
        try:
            template = (tests_dir(task) / rel).read_text(encoding="utf-8")
        except OSError as err:
            raise StageFault(f"audit: cannot read the prompt tests/{rel}: {err}") from err
    values = prompt_values(
        task=task.id,
        original=ORIGINAL_DIR,
        submission=SUBMISSION_DIR,
        gates=gates,
        commands=allowed,
        findings=findings,
    )
    return render_prompt(template, values)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _grade_of(sample: ReviewSample) -> SampleGrade:
    if sample.usable and sample.grade is not None:
        return sample.grade
    if sample.usable:
        return unusable_sample(sample.index, sample.grade_error or "review was not graded")
    return unusable_sample(sample.index, f"{sample.ending}: {sample.reason}".strip(": "))


def vote_rows(grades: list[SampleGrade], gates: list[AuditGate]) -> list[dict[str, Any]]:
    """One stored vote per (gate, sample): the recorded verdict with its checked evidence,
    or ``error`` for a sample that produced no usable review."""
    rows: list[dict[str, Any]] = []
    for grade in grades:
        for gate in gates:
            verdict = grade.gates.get(gate.id) if grade.usable else None
            if verdict is None:
                rows.append(
                    {
                        "gate_id": gate.id,
                        "sample": grade.index,
                        "verdict": "error",
                        "reasoning": grade.reason or "no usable review",
                        "extra": {"usable": False},
                    }
                )
                continue
            rows.append(
                {
                    "gate_id": gate.id,
                    "sample": grade.index,
                    "verdict": verdict.recorded,
                    "confidence": _number(verdict.confidence),
                    "reasoning": verdict.reasoning,
                    "evidence": verdict.evidence,
                    "downgraded": verdict.downgraded,
                    "extra": {"reported": verdict.reported, "usable": True},
                }
            )
    return rows


def outcome_rows(grades: list[SampleGrade], gates: list[AuditGate]) -> list[dict[str, Any]]:
    unusable = sum(1 for grade in grades if not grade.usable)
    titles = {gate.id: gate.title for gate in gates}
    return [
        {
            "gate_id": outcome.gate,
            "title": titles.get(outcome.gate) or None,
            "required": outcome.required,
            "verdict": outcome.outcome,
            "votes_pass": outcome.votes["pass"],
            "votes_fail": outcome.votes["fail"],
            "votes_error": unusable,
            "tie": outcome.tie,
            "extra": {"downgraded": outcome.downgraded},
        }
        for outcome in vote(grades, gates)
    ]


async def run_audit(
    *,
    engine: DockerEngine,
    store: Store,
    run_id: str,
    task: Task,
    original: Path,
    submission: Path,
    run_dir: Path,
    images: StageImages,
    publish: Publish,
    environ: Mapping[str, str] | None = None,
    gateway: Gateway | None = None,
) -> StageOutcome:
    """Run Stage I and record its votes and outcomes; the outcome (envelope not yet stored)."""
    assert task.evaluation is not None
    spec = task.evaluation.audit
    gates = _gates(task)
    allowed = option_strings(spec, "allowed_commands")
    samples = int(option_number(spec, "samples", 3))
    max_turns = int(option_number(spec, "max_turns", 80))
    name = option_str(spec, "driver", "scripted")
    endpoint = await driver_endpoint(gateway, run_id, "reviewer", name)
    driver = _driver(spec, task, os.environ if environ is None else environ, endpoint)
    _prompt(spec, task, gates, allowed, "")  # a prompt that cannot be read fails first
    started_wall, started = time.time(), time.monotonic()
    image = await images.get("audit")
    reviews: list[ReviewSample] = []
    async with StageContainer(
        engine, run_id, "audit", image.tag, publish=publish, store=store
    ) as box:
        await box.put_trees(original, submission)
        scan = ScanReport("(no scan ran for this task)")
        if task.scan is not None:
            publish(Progress(run_id, "audit: scan"))
            budget = sum(m.timeout_sec for m in task.scan.modules) + 120
            scan = await run_scan(box, task, budget)
        prompt = _prompt(spec, task, gates, allowed, scan.findings)
        channel = ContainerToolChannel(
            box,
            allowed_commands=allowed,
            run_timeout_sec=option_number(spec, "run_timeout_sec", 60.0),
        )
        deadline = deadline_in(spec.timeout_sec)
        try:
            for index in range(samples):
                publish(Progress(run_id, f"audit: review sample {index + 1} of {samples}"))
                review = await run_review(
                    driver,
                    channel,
                    REVIEWER_SYSTEM,
                    prompt,
                    gates,
                    max_turns=max_turns,
                    deadline=deadline,
                    sample=index,
                    allowed_commands=allowed,
                )
                reviews.append(review)
        finally:
            await channel.aclose()
            await driver.aclose()
    grades = [_grade_of(review) for review in reviews]
    envelope = audit_envelope(task.id, gates, grades)
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
    await store.record_gate_votes(run_id, vote_rows(grades, gates))
    await store.record_gate_outcomes(run_id, outcome_rows(grades, gates))
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
