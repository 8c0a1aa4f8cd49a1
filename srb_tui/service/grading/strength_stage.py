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
  cannot do anything passes (every source file emptied, or made to exit 1 at once: the
  campaign's *baseline*, graded once): a mutant that stops the program from starting
  fails the way a broken State A fails on everything, measures nothing and is counted
  apart;
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
from srb_tui.strength.mutate import Mutant, apply_mutant, source_files
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


def scored_checks(modules: Sequence[Mapping[str, Any]], envelope: Mapping[str, Any],
                  verdicts: tuple[str, ...]) -> list[str]:
    """``module::check`` of the scored modules' checks with one of ``verdicts``."""
    weights = {str(m["id"]) for m in modules if float(m.get("weight") or 0.0) > 0}
    return [f"{module}::{check.get('id')}"
            for module, checks in checks_by_module(dict(envelope)).items()
            if module in weights
            for check in checks if check.get("verdict") in verdicts]


def classify(mutant: str, status: str, modules: Sequence[Mapping[str, Any]],
             envelope: Mapping[str, Any],
             baseline: frozenset[str] | None = None) -> MutantStageII:
    """The Stage II outcome of one mutant from its suite run (see the module doc);
    ``baseline`` the checks a State A that cannot start passes."""
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
    if baseline is not None and set(scored_checks(modules, envelope, ("pass",))) <= baseline:
        return MutantStageII(mutant, INVALID, f"it passes only what a State A that cannot "
                             f"start passes ({passed} of {scored} scored checks): the "
                             "mutant does not start", passed=passed, scored=scored)
    failing = scored_checks(modules, envelope, ("fail", "error"))
    return MutantStageII(mutant, KILLED, f"{broken} of {scored} scored checks failed",
                         failing=failing[:NAMED_FAILURES], passed=passed, scored=scored)


_CRASH = {
    "python": 'import sys\nsys.stderr.write("srb strength baseline: cannot start\\n")\n'
              "sys.exit(1)\n",
    "javascript": 'process.stderr.write("srb strength baseline: cannot start\\n");\n'
                  "process.exit(1);\n",
}
_CRASH["typescript"] = _CRASH["javascript"]


def dead_tree(tree: Path, *, crash: bool) -> int:
    """Make every source file the mutation engine would mutate do nothing: emptied, or
    (``crash``) made to exit 1 with a line on stderr where the language runs from source
    (a compiled language's emptied files do not build). A shebang line is kept. How many
    files were changed."""
    files = source_files(tree)
    for rel, language in files:
        path = tree / rel
        first = path.read_bytes().split(b"\n", 1)[0]
        shebang = first + b"\n" if first.startswith(b"#!") else b""
        body = _CRASH.get(language, "") if crash else ""
        path.write_bytes(shebang + body.encode())
    return len(files)


async def grade_baseline(engine: DockerEngine, task: Task, state_a: Path,
                         images: StageImages, *, publish: Publish) -> list[str]:
    """The scored checks a State A that cannot do anything passes: the union over two
    suite runs like a mutant's, every source file emptied (the program exits at once) and
    made to crash (it exits 1 with a line on stderr). A task's checks of error exits pass
    there, and so would a mutant's that stops the program from starting."""
    passed: set[str] = set()
    for crash in (False, True):
        with tempfile.TemporaryDirectory(prefix="srb-mutant-baseline-") as scratch:
            tree = Path(scratch) / "tree"
            shutil.copytree(state_a, tree, symlinks=True)
            dead_tree(tree, crash=crash)
            result = await record_identity(engine, task, state_a, publish=publish,
                                           submission=tree, images=images, label="baseline")
        passed.update(scored_checks(result.modules, result.envelope, ("pass",)))
    return sorted(passed)


async def grade_mutant_stage_ii(
    engine: DockerEngine,
    task: Task,
    state_a: Path,
    mutant: Mutant,
    images: StageImages,
    *,
    publish: Publish,
    baseline: frozenset[str] | None = None,
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
    out = classify(mutant.id, result.status, result.modules, result.envelope, baseline)
    out.duration_sec = sum(durations) if durations else None
    return out
