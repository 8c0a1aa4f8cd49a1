"""Stage II of a strength campaign: each mutant of State A graded as a submission (issue 36).

A mutant is not a migration, so Stage I is skipped and the record says so. It runs where
State A's own identity run runs — the verification image, which carries State A's
toolchain (Stage II's image carries only the new one) — with State A as the original, so
the suite asks of the mutant exactly what it asked of State A. The stage images are built
once for the campaign (one :class:`StageImages`) and State A is extracted once; each mutant
costs one copy of the tree and one stage container, as an identity run does.

The outcome of one mutant, from the module rows of its suite run:

- ``invalid``: the suite could not run (a stage error, a module that errored as a whole,
  a build that failed), or every scored check failed or errored — a mutant that breaks
  everything measures nothing and is counted apart;
- ``killed``: some scored check failed or errored (the first few are named);
- ``survived``: every scored check passed — Stage III's panel gets it next.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.service.grading.ladder_identity import record_identity
from srb_tui.service.grading.stages.behavioural import checks_by_module
from srb_tui.service.grading.stages.common import Publish, StageImages
from srb_tui.strength.mutate import Mutant, apply_mutant
from srb_tui.strength.scores import INVALID, KILLED, SURVIVED

NAMED_FAILURES = 5  # failing checks kept per killed mutant
STAGE_I_SKIPPED = "Stage I skipped: a mutant of State A is not a migration"


@dataclass
class MutantStageII:
    """Stage II of one mutant: killed, survived or invalid, why, and the failing checks."""

    mutant: str
    outcome: str
    reason: str
    failing: list[str] = field(default_factory=list)
    passed: int = 0
    scored: int = 0
    duration_sec: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mutant": self.mutant, "outcome": self.outcome, "reason": self.reason,
                "failing": self.failing, "passed": self.passed, "scored": self.scored,
                "duration_sec": self.duration_sec, "stage_i": STAGE_I_SKIPPED}


def classify(mutant: str, status: str, modules: Sequence[Mapping[str, Any]],
             envelope: Mapping[str, Any]) -> MutantStageII:
    """The Stage II outcome of one mutant from its suite run (see the module doc)."""
    scored_rows = [m for m in modules if float(m.get("weight") or 0.0) > 0]
    passed = sum(int(m.get("passed") or 0) for m in scored_rows)
    scored = sum(int(m.get("scored") or 0) for m in scored_rows)
    broken = sum(int(m.get("failed") or 0) + int(m.get("errors") or 0) for m in scored_rows)
    if status != "ok" or not scored_rows:
        notes = "; ".join(str(n) for n in envelope.get("notes", [])[:2]) or status
        return MutantStageII(mutant, INVALID, f"the suite could not run: {notes}",
                             passed=passed, scored=scored)
    whole = [str(m["id"]) for m in scored_rows if m.get("status") == "error"
             and not int(m.get("passed") or 0)]
    if whole:
        return MutantStageII(mutant, INVALID, f"module(s) {', '.join(whole)} errored as a "
                             "whole (a mutant that does not build or start)",
                             passed=passed, scored=scored)
    if broken and not passed:
        return MutantStageII(mutant, INVALID, f"all {broken} scored checks failed: the mutant "
                             "breaks everything", passed=passed, scored=scored)
    if not broken:
        return MutantStageII(mutant, SURVIVED, f"all {passed} scored checks passed",
                             passed=passed, scored=scored)
    weights = {str(m["id"]) for m in scored_rows}
    failing = [f"{module}::{check.get('id')}"
               for module, checks in checks_by_module(dict(envelope)).items()
               if module in weights
               for check in checks if check.get("verdict") in ("fail", "error")]
    return MutantStageII(mutant, KILLED, f"{broken} of {scored} scored checks failed",
                         failing=failing[:NAMED_FAILURES], passed=passed, scored=scored)


async def grade_mutant_stage_ii(
    engine: DockerEngine,
    task: Task,
    state_a: Path,
    mutant: Mutant,
    images: StageImages,
    *,
    publish: Publish,
) -> MutantStageII:
    """Stage II of one mutant: a copy of State A with the mutant applied, graded against
    State A in the identity run's image. The copy is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"srb-mutant-{mutant.id}-") as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(state_a, tree, symlinks=True)
        apply_mutant(tree, mutant)
        result = await record_identity(engine, task, state_a, publish=publish,
                                       submission=tree, images=images, label="mutant")
    durations = [float(m["duration_sec"]) for m in result.modules
                 if isinstance(m.get("duration_sec"), int | float)]
    out = classify(mutant.id, result.status, result.modules, result.envelope)
    out.duration_sec = sum(durations) if durations else None
    return out
