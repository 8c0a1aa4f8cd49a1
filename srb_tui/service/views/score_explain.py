"""Why a run scored what it scored, in words and numbers, for the Run screen's Score tab.

The score is ``1[Stage I pass] × (behavioural_points·1[Stage II complete] +
points_per_survived_model × survivors)`` (:mod:`srb_tui.scoring.score`). The tab used to say
"Score 40/100 valid · blocked by: verification" for an honest imperfect port: that reads as a
failure, and says neither how the 40 came about nor which adversaries took the rest. This
module writes the formula with the run's own numbers and names the rounds behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srb_tui.schema.scoring_policy import ScoringPolicy
from srb_tui.store import AdversaryRoundRecord, RunRecord


@dataclass(frozen=True)
class ScoreExplanation:
    """The lines of the explanation: ``formula`` (the arithmetic), ``reading`` (what
    decided it, in words) and the adversaries that broke the submission and survived."""

    formula: str
    reading: str
    broken_by: tuple[str, ...] = ()
    survived: tuple[str, ...] = ()
    errored: tuple[str, ...] = ()


def _n(value: float) -> str:
    return f"{value:g}"


def explain_score(run: RunRecord, rounds: Sequence[AdversaryRoundRecord],
                  policy: ScoringPolicy | None = None) -> ScoreExplanation | None:
    """The explanation of ``run``'s score under ``policy`` (the task's; the published
    100 = 40 + 6 × 10 when not given), or None while there is no score to explain."""
    if run.score is None:
        return None
    p = policy or ScoringPolicy()
    b, per, models = p.behavioural_points, p.points_per_survived_model, p.verification_models
    if run.blocked_by == "audit" and run.score == 0:
        return ScoreExplanation(
            formula=f"0 = Stage I fail (× 0) × ({_n(b)} + {_n(per)} × survivors)",
            reading="Stage I failed: the audit found the migration not done, so nothing "
                    "else counts (Stage II is shown, not credited; Stage III did not run)")
    if run.blocked_by == "behavioural" and run.score == 0:
        return ScoreExplanation(
            formula=f"0 = Stage I pass × (Stage II incomplete 0 + {_n(per)} × survivors)",
            reading="Stage II is all or nothing: a fixed check failed, so Stage III did "
                    "not run")
    by_id = {r.adversary_id: r.status for r in rounds}
    broken = tuple(sorted(a for a, s in by_id.items() if s == "broken"))
    survived = tuple(sorted(a for a, s in by_id.items() if s == "survived"))
    errored = tuple(sorted(a for a, s in by_id.items() if s not in ("broken", "survived")))
    if not by_id:
        return ScoreExplanation(
            formula=f"{_n(run.score)} = Stage I pass × (Stage II complete {_n(b)})",
            reading="Stage III did not run: only the fixed suite's points were on offer")
    formula = (f"{_n(run.score)} = Stage I pass × (Stage II complete {_n(b)} + {_n(per)} × "
               f"{len(survived)} of {models} adversaries survived)")
    if errored:
        reading = (f"{len(errored)} adversary round(s) could not measure: the run is invalid; "
                   "the points measured are kept")
    elif broken:
        reading = (f"partial credit: {len(broken)} of {models} adversaries found a "
                   f"reproducing counterexample, each takes its {_n(per)} points")
    else:
        reading = "every adversary survived: full credit"
    return ScoreExplanation(formula, reading, broken, survived, errored)
