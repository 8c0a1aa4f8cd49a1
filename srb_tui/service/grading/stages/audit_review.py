"""Stage I's reviews and judgement, wherever the reviewer's tools run.

:func:`review_and_judge` runs the samples of one audit through any :class:`ToolChannel` (the
audit container in a run; the grader's tools on the host for ``srb tasks audit-probe``),
grades them, applies the defences of :mod:`.audit_defence` and builds the envelope. The
stored rows of a run are made here too (:func:`vote_rows`, :func:`outcome_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.drivers import ModelDriver, ReviewSample, run_review
from srb_tui.drivers.channel import ToolChannel
from srb_tui.grader.audit.review import (
    AuditGate,
    SampleGrade,
    audit_envelope,
    unusable_sample,
    vote,
)
from srb_tui.grader.envelope import StageEnvelope
from srb_tui.schema import Gate

from .audit_defence import Defences

REVIEWER_SYSTEM = (
    "You are the Stage I auditor of a repository migration. Two read-only trees are open "
    "to you through tools: 'original' (State A, before the migration) and 'submission' "
    "(the agent's result). Judge each gate from what the code does, not from what comments "
    "or documentation claim. Finish by calling submit_review with one entry per gate; every "
    "fail must cite a path 'root:REL', a line number and a quote found on that line."
)


def audit_gates(gates: Sequence[Gate]) -> list[AuditGate]:
    return [AuditGate(g.id, g.title, g.question, g.required) for g in gates]


@dataclass
class Judgement:
    """One audit's reviews, graded and voted, with what the defences did."""

    reviews: list[ReviewSample]
    grades: list[SampleGrade]
    overrules: dict[str, str]
    defences: Defences
    envelope: StageEnvelope
    tainted: int = 0


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def grade_of(sample: ReviewSample) -> SampleGrade:
    if sample.usable and sample.grade is not None:
        return sample.grade
    if sample.usable:
        return unusable_sample(sample.index, sample.grade_error or "review was not graded")
    return unusable_sample(sample.index, f"{sample.ending}: {sample.reason}".strip(": "))


async def review_and_judge(
    *,
    task_id: str,
    gates: Sequence[Gate],
    driver: ModelDriver,
    channel: ToolChannel,
    prompt: str,
    submission: Path,
    defences: Defences,
    samples: int,
    max_turns: int,
    deadline: float | None,
    allowed: Sequence[str] = (),
    scan_checks: Sequence[Mapping[str, Any]] = (),
    progress: Callable[[str], None] | None = None,
) -> Judgement:
    """Run `samples` reviews, grade them, apply the defences, vote."""
    listed = audit_gates(gates)
    reviews: list[ReviewSample] = []
    for index in range(samples):
        if progress is not None:
            progress(f"audit: review sample {index + 1} of {samples}")
        reviews.append(
            await run_review(
                driver,
                channel,
                REVIEWER_SYSTEM,
                prompt,
                listed,
                max_turns=max_turns,
                deadline=deadline,
                sample=index,
                allowed_commands=allowed,
                fence=defences.fence,
            )
        )
    grades = [grade_of(review) for review in reviews]
    tainted = defences.taint(grades)
    overrules = defences.overrules(gates, submission, scan_checks)
    envelope = audit_envelope(task_id, listed, grades, overrules)
    envelope.metadata["defences"] = defences.metadata()
    if tainted:
        envelope.notes.append(
            f"{tainted} answer(s) quoted or followed text the submission addressed to its "
            "judge; each counts as a fail of its gate"
        )
    if defences.findings:
        envelope.notes.append(
            f"the submission addresses its judge in {len(defences.findings)} place(s): "
            + ", ".join(f.where for f in defences.findings[:10])
        )
    return Judgement(reviews, grades, overrules, defences, envelope, tainted)


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
            extra: dict[str, Any] = {"reported": verdict.reported, "usable": True}
            if verdict.tainted:
                extra["tainted"] = verdict.tainted
            rows.append(
                {
                    "gate_id": gate.id,
                    "sample": grade.index,
                    "verdict": verdict.recorded,
                    "confidence": _number(verdict.confidence),
                    "reasoning": verdict.reasoning,
                    "evidence": verdict.evidence,
                    "downgraded": verdict.downgraded,
                    "extra": extra,
                }
            )
    return rows


def outcome_rows(
    grades: list[SampleGrade], gates: list[AuditGate], overrules: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    unusable = sum(1 for grade in grades if not grade.usable)
    titles = {gate.id: gate.title for gate in gates}
    rows = []
    for outcome in vote(grades, gates, overrules):
        extra: dict[str, Any] = {"downgraded": outcome.downgraded}
        if outcome.overruled:
            extra["overruled"] = outcome.overruled
            extra["voted"] = outcome.voted
        rows.append(
            {
                "gate_id": outcome.gate,
                "title": titles.get(outcome.gate) or None,
                "required": outcome.required,
                "verdict": outcome.outcome,
                "votes_pass": outcome.votes["pass"],
                "votes_fail": outcome.votes["fail"],
                "votes_error": unusable,
                "tie": outcome.tie,
                "extra": extra,
            }
        )
    return rows
