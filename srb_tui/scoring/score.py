"""One run's score: score = 1[I] × (behavioural_points·1[II complete] + per_model·survivors).

Status is not verdict: a stage that could not measure (status error) makes the result invalid
(`valid=false`, `blocked_by`, `harness_error`) instead of earning a zero; only evidence about
the submission zeroes it. Gating follows the paper: a Stage I fail scores 0 and Stage III does
not run, but Stage II is still shown (uncredited) so blindness can be counted; an incomplete
Stage II stops the run before Stage III. An errored adversary round makes the result invalid
but keeps the points measured. The run's files (``score.json``, ``reward.json`` …) are written
from this envelope by :mod:`.result_files` through :func:`.published.verdict_document`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .policy import ScoringPolicy

AUDIT_OUTCOMES = ("pass", "fail", "error")
ADVERSARY_OUTCOMES = ("broken", "survived", "error")


@dataclass(frozen=True)
class ModuleScore:
    """One Stage II module as the score shows it."""

    id: str
    weight: float
    status: str
    rate: float
    passed: int = 0
    scored: int = 0

    @classmethod
    def from_unit(cls, unit: Mapping[str, Any]) -> ModuleScore:
        """From a stage-result unit (or any mapping with the same keys)."""
        return cls(
            id=str(unit["id"]),
            weight=float(unit.get("weight", 0.0)),
            status=str(unit.get("status", "unreached")),
            rate=float(unit.get("rate", 0.0)),
            passed=int(unit.get("passed", 0)),
            scored=int(unit.get("scored", 0)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "weight": self.weight,
            "status": self.status,
            "rate": self.rate,
            "passed": self.passed,
            "scored": self.scored,
        }


@dataclass
class ScoreEnvelope:
    """What score.json holds."""

    score: float | None
    max_score: float
    valid: bool
    audit_gate: str
    behavioural: dict[str, Any]
    verification: dict[str, Any]
    blocked_by: str | None = None
    harness_error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def reward(self) -> float | None:
        """score / max_score, or None when there is no score."""
        if self.score is None:
            return None
        return round(self.score / self.max_score, 6)

    @property
    def accepted(self) -> bool:
        """Valid and stopped by nothing: every stage passed."""
        return self.valid and self.audit_gate == "pass" and self.blocked_by is None

    def to_json(self) -> dict[str, Any]:
        """score.json."""
        return {
            "reward": self.reward,
            "score": self.score,
            "max_score": self.max_score,
            "valid": self.valid,
            "audit_gate": self.audit_gate,
            "behavioural": self.behavioural,
            "verification": self.verification,
            "blocked_by": self.blocked_by,
            "harness_error": self.harness_error,
            "notes": self.notes,
        }



def _weighted_rate(modules: Sequence[ModuleScore]) -> float:
    weighted = [module for module in modules if module.weight > 0]
    total = sum(module.weight for module in weighted)
    if total <= 0:
        return 0.0
    return round(sum(module.weight * module.rate for module in weighted) / total, 6)


def score_run(
    audit_outcome: str,
    behavioural_complete: bool | None,
    behavioural_modules: Iterable[ModuleScore | Mapping[str, Any]],
    adversary_outcomes: Mapping[str, str] | None,
    policy: ScoringPolicy,
    *,
    verification_enabled: bool = True,
    breaks: Sequence[Mapping[str, Any]] | None = None,
    harness_errors: Mapping[str, str] | None = None,
    notes: Iterable[str] = (),
) -> ScoreEnvelope:
    """Score one run from its stage outcomes.

    audit_outcome: "pass" | "fail" | "error". behavioural_complete: True/False, or None when
    Stage II could not measure. adversary_outcomes: adversary id -> "broken" | "survived" |
    "error" (None or empty when Stage III did not run). harness_errors: optional messages per
    stage ("audit", "behavioural", "verification").
    """
    if audit_outcome not in AUDIT_OUTCOMES:
        raise ValueError(f"audit outcome must be one of {AUDIT_OUTCOMES}, got {audit_outcome!r}")
    outcomes = dict(adversary_outcomes or {})
    for adversary, outcome in outcomes.items():
        if outcome not in ADVERSARY_OUTCOMES:
            raise ValueError(
                f"adversary {adversary!r}: outcome {outcome!r} is not one of {ADVERSARY_OUTCOMES}"
            )
    policy.check()
    errors = dict(harness_errors or {})
    modules = [
        m if isinstance(m, ModuleScore) else ModuleScore.from_unit(m) for m in behavioural_modules
    ]
    note_list = list(notes)
    behavioural: dict[str, Any] = {
        "points": 0.0,
        "rate": _weighted_rate(modules),
        "complete": behavioural_complete,
        "credited": False,
        "status": "error" if behavioural_complete is None else "ok",
        "modules": [module.to_json() for module in modules],
    }
    verification: dict[str, Any] = {
        "points": 0.0,
        "models_total": policy.verification_models,
        "models_survived": 0,
        "breaks": [],
        "ran": False,
        "adversaries": {},
    }
    envelope = ScoreEnvelope(
        score=None,
        max_score=policy.max_score,
        valid=True,
        audit_gate=audit_outcome,
        behavioural=behavioural,
        verification=verification,
        notes=note_list,
    )

    if audit_outcome == "error":
        envelope.valid = False
        envelope.blocked_by = "audit"
        envelope.harness_error = errors.get(
            "audit", "Stage I could not measure: no usable review, or a required gate had no vote"
        )
        return envelope
    if audit_outcome == "fail":
        envelope.score = 0.0
        envelope.blocked_by = "audit"
        if behavioural_complete is True:
            note_list.append("blindness: every fixed check passes but the audit failed")
        elif behavioural_complete is None:
            note_list.append(
                "Stage II could not measure ("
                + errors.get("behavioural", "status error")
                + "); the score is 0 on the audit alone, blindness is not counted"
            )
        return envelope
    if behavioural_complete is None:
        envelope.valid = False
        envelope.blocked_by = "behavioural"
        envelope.harness_error = errors.get("behavioural", "Stage II could not measure")
        return envelope
    if not behavioural_complete:
        envelope.score = 0.0
        envelope.blocked_by = "behavioural"
        return envelope

    behavioural["points"] = policy.behavioural_points
    behavioural["credited"] = True
    if not verification_enabled:
        envelope.score = policy.behavioural_points
        note_list.append(
            f"Stage III is not enabled for this task: {policy.verification_points:g} points "
            "were not on offer"
        )
        return envelope

    verification["ran"] = True
    verification["adversaries"] = outcomes
    survived = sum(1 for outcome in outcomes.values() if outcome == "survived")
    broken = [adversary for adversary, outcome in outcomes.items() if outcome == "broken"]
    errored = sum(1 for outcome in outcomes.values() if outcome == "error")
    missing = max(0, policy.verification_models - len(outcomes))
    if len(outcomes) > policy.verification_models:
        note_list.append(
            f"{len(outcomes)} adversary outcomes for a policy of {policy.verification_models}"
        )
    points = min(survived * policy.points_per_survived_model, policy.verification_points)
    verification["points"] = points
    verification["models_survived"] = survived
    verification["breaks"] = (
        [dict(item) for item in breaks]
        if breaks is not None
        else [{"adversary": adversary} for adversary in broken]
    )
    envelope.score = policy.behavioural_points + points
    if errored or missing:
        envelope.valid = False
        envelope.blocked_by = "verification"
        parts = []
        if errored:
            parts.append(f"{errored} adversary round(s) errored")
        if missing:
            parts.append(f"{missing} adversary round(s) produced no outcome")
        envelope.harness_error = errors.get("verification", "; ".join(parts)) + (
            "; measured points are kept" if errors.get("verification") is None else ""
        )
    elif broken:
        envelope.blocked_by = "verification"
    return envelope
