"""Stage II of a strength campaign: each mutant of State A graded as a submission (issue 36).

A mutant is not a migration, so Stage I is skipped and the record says so. It runs where
State A's own identity run runs — the verification image, which carries State A's
toolchain (Stage II's image carries only the new one) — with State A as the original, so
the suite asks of the mutant exactly what it asked of State A. The stage images are built
once for the campaign (one :class:`StageImages`) and State A is extracted once; each mutant
costs one copy of the tree and one stage container, as an identity run does.

The outcome of one mutant, from the module rows of its suite run:

- ``invalid``: the suite could not run (a stage error, a module that errored as a whole,
  a build that failed), or the mutant passes no scored check beyond those a State A that
  cannot do anything passes (the campaign's *baseline*, graded once,
  :mod:`strength_baseline`): a mutant that stops the program from starting fails the way
  a broken State A fails on everything, measures nothing and is counted apart;
- ``killed``: some scored check State A itself passes failed or errored (the first few
  are named), or the suite ran over the campaign's time limit (a hang);
- ``survived``: every scored check State A passes passed — Stage III's panel gets it next.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.service.grading.ladder_identity import record_identity
from srb_tui.service.grading.stages.common import Publish, StageImages
from srb_tui.service.grading.strength_baseline import Baseline, scored_checks
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
             envelope: Mapping[str, Any], baseline: Baseline | None = None) -> MutantStageII:
    """The Stage II outcome of one mutant from its suite run (see the module doc). With a
    ``baseline``, a check State A fails itself kills nothing, and a mutant that passes
    only what a State A that cannot start passes is invalid."""
    scored_rows = [m for m in modules if float(m.get("weight") or 0.0) > 0]
    passed = sum(int(m.get("passed") or 0) for m in scored_rows)
    scored = sum(int(m.get("scored") or 0) for m in scored_rows)
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
    broken = sum(int(m.get("failed") or 0) + int(m.get("errors") or 0) for m in scored_rows)
    failing = scored_checks(modules, envelope, ("fail", "error"))
    own = 0
    if baseline is not None:
        kept = [name for name in failing if name not in baseline.state_a_failing]
        own, broken, failing = len(failing) - len(kept), len(kept), kept
    if not broken:
        return MutantStageII(mutant, SURVIVED, f"all {passed} scored checks passed"
                             + (f" (and {own} State A fails itself)" if own else ""),
                             passed=passed, scored=scored)
    if not passed:
        return MutantStageII(mutant, INVALID, f"all {broken} scored checks failed: the "
                             "mutant breaks everything", passed=passed, scored=scored)
    if baseline is not None and set(scored_checks(modules, envelope, ("pass",))) <= \
            baseline.dead_passes:
        return MutantStageII(mutant, INVALID, f"it passes only what a State A that cannot "
                             f"start passes ({passed} of {scored} scored checks): the "
                             "mutant does not start", passed=passed, scored=scored)
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
    baseline: Baseline | None = None,
    time_limit_sec: float | None = None,
    tree: Path | None = None,
    stage: str | None = None,
    run_prefix: str | None = None,
) -> MutantStageII:
    """Stage II of one mutant: a copy of State A (or ``tree``, the reference) with the
    mutant applied, graded against State A in the identity run's image (or ``stage``'s).
    The copy is removed afterwards. A suite run longer than ``time_limit_sec`` (default:
    the baseline's, from the tree's own suite time) is stopped and the mutant counted
    killed: it made the program hang or crawl, which the suite's own time limits would
    catch, only slower."""
    limit = time_limit_sec if time_limit_sec is not None else (
        baseline.limit_sec if baseline is not None else None)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"srb-mutant-{mutant.id}-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree or state_a, copy, symlinks=True)
        apply_mutant(copy, mutant)
        try:
            result = await asyncio.wait_for(
                record_identity(engine, task, state_a, publish=publish, submission=copy,
                                images=images, label="mutant", stage=stage,
                                run_prefix=run_prefix), limit)
        except TimeoutError:
            said = f"State A's suite took {baseline.state_a_sec:.0f} s" if baseline else ""
            return MutantStageII(mutant.id, KILLED, f"timed out: the suite ran over "
                                 f"{limit:.0f} s" + (f" ({said})" if said else ""),
                                 duration_sec=time.monotonic() - began)
    out = classify(mutant.id, result.status, result.modules, result.envelope, baseline)
    out.duration_sec = time.monotonic() - began
    return out
