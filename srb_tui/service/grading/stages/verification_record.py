"""Stage III's records: each round stored as it ends (with its counterexamples), and the
stage's envelope and outcome from all rounds."""

from __future__ import annotations

from typing import Any

from srb_tui.grader.candidates.records import NONDETERMINISTIC
from srb_tui.grader.envelope import StageEnvelope
from srb_tui.store import Store

from .common import StageOutcome
from .counterexamples import counterexample_fields
from .verification_rounds import RoundResult
from .verification_setup import ProbeSetup

JUDGED = ("upheld", NONDETERMINISTIC, "invalid", "rejected")
"""The verdicts a counterexample is stored with (an ``error`` is a note of the round)."""



async def record_round(store: Store, run_id: str, result: RoundResult) -> list[dict[str, Any]]:
    """Store the round and its counterexamples; the breaks it contributes."""
    breaks = []
    notes = list(result.notes)
    for candidate in result.candidates:
        fields = counterexample_fields(candidate)
        if fields["verdict"] not in JUDGED:
            notes.append(f"a candidate could not be judged: {fields['reason']}")
            continue
        record = await store.grading.record_counterexample(run_id, result.adversary.id, **fields)
        if fields["extra"]["counts_as_break"]:
            breaks.append(
                {
                    "adversary": result.adversary.id,
                    "counterexample": record.id,
                    "reason": record.reason,
                }
            )
    if result.reason:
        notes.insert(0, result.reason)
    moved = _verdicts(result, NONDETERMINISTIC)
    if moved:  # issue 32: the round's record says so, not only its counterexamples
        result.extra["nondeterministic"] = moved
    await store.grading.record_adversary_round(
        run_id,
        result.adversary.id,
        status=result.outcome,
        model=result.adversary.model,
        driver=result.adversary.driver,
        focus=result.adversary.focus or None,
        started_at=result.started_at,
        duration_sec=result.duration_sec,
        candidates=len(result.candidates),
        notes=notes,
        extra=result.extra,
    )
    return breaks




def panel_outcome(
    task_id: str,
    results: list[RoundResult],
    breaks_by_adversary: dict[str, list[dict[str, Any]]],
    setup: ProbeSetup,
    budget_override: float | None,
) -> StageOutcome:
    """The stage's envelope and outcome from every round (in probe.toml's order)."""
    envelope = StageEnvelope(stage="verification", task=task_id)
    breaks: list[dict[str, Any]] = []
    for result in results:
        breaks.extend(breaks_by_adversary.get(result.adversary.id, []))
        envelope.units.append(_unit(result))
        envelope.checks.append(
            {
                "id": result.adversary.id,
                "verdict": {"survived": "pass", "broken": "fail"}.get(result.outcome, "error"),
                "summary": result.reason,
            }
        )
    outcomes = {r.adversary.id: r.outcome for r in results}
    errored = [r for r in results if r.outcome == "error"]
    envelope.metadata = {
        "adversaries": outcomes,
        "models_survived": sum(1 for o in outcomes.values() if o == "survived"),
        "models_broken": sum(1 for o in outcomes.values() if o == "broken"),
        "models_errored": len(errored),
        "candidate_command": list(setup.candidates.command),
        "reruns": setup.candidates.reruns,
        "budget_override_sec": budget_override,
    }
    for result in errored:
        envelope.notes.append(f"{result.adversary.id}: {result.reason}")
    envelope.finish("error" if errored else "ok")
    harness_error = None
    if errored:
        harness_error = "verification: " + "; ".join(
            f"{r.adversary.id}: {r.reason}" for r in errored
        )
    return StageOutcome(
        stage="verification",
        status=envelope.status,
        envelope=envelope.to_dict(),
        harness_error=harness_error,
        adversaries=outcomes,
        breaks=breaks,
    )


def _verdicts(result: RoundResult, outcome: str) -> int:
    return sum(1 for c in result.candidates if (c.get("verdict") or {}).get("outcome") == outcome)


def _unit(result: RoundResult) -> dict[str, Any]:
    return {
        "id": result.adversary.id,
        "driver": result.adversary.driver,
        "model": result.adversary.model,
        "focus": result.adversary.focus,
        "status": result.outcome,
        "reason": result.reason,
        "duration_sec": result.duration_sec,
        "candidates": len(result.candidates),
        "upheld": _verdicts(result, "upheld"),
        # issue 32: a submission that gave different results for one candidate while
        # State A did not (a break where the task counts it)
        "nondeterministic": _verdicts(result, NONDETERMINISTIC),
        **result.extra,
    }
