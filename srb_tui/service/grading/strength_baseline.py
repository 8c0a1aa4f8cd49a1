"""A strength campaign's baseline (issue 36): what its mutants are measured against, graded
once per campaign in the image its mutants' Stage II uses.

- **State A against itself**: the checks State A fails in this image (a recorded
  expectation that no longer matches State A rebuilt — the published tasks' trackers show
  such) kill no mutant; how long the suite takes sets every mutant's time limit (a mutant
  that hangs the program is stopped there and counted killed, as mutation tools count a
  time-out as detected).
- **State A that cannot do anything**: two suite runs of State A with every mutable source
  file emptied (the program exits at once) and made to crash (exit 1 with a line on
  stderr, where the language runs from source; a compiled one's emptied files do not
  build). The checks they pass — a task's checks of error exits, typically — are what a
  mutant that stops the program from starting passes too; such a mutant is invalid.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.service.grading.ladder_identity import record_identity
from srb_tui.service.grading.stages.behavioural import checks_by_module
from srb_tui.service.grading.stages.common import Publish, StageFault, StageImages
from srb_tui.strength.mutate import source_files

TIME_FACTOR = 3.0  # a mutant's suite may take this many times State A's …
TIME_MARGIN_SEC = 30.0  # … plus this (container start, a loaded machine)

_CRASH = {
    "python": 'import sys\nsys.stderr.write("srb strength baseline: cannot start\\n")\n'
              "sys.exit(1)\n",
    "javascript": 'process.stderr.write("srb strength baseline: cannot start\\n");\n'
                  "process.exit(1);\n",
}
_CRASH["typescript"] = _CRASH["javascript"]


def scored_checks(modules: Sequence[Mapping[str, Any]], envelope: Mapping[str, Any],
                  verdicts: tuple[str, ...]) -> list[str]:
    """``module::check`` of the scored modules' checks with one of ``verdicts``."""
    weights = {str(m["id"]) for m in modules if float(m.get("weight") or 0.0) > 0}
    return [f"{module}::{check.get('id')}"
            for module, checks in checks_by_module(dict(envelope)).items()
            if module in weights
            for check in checks if check.get("verdict") in verdicts]


@dataclass(frozen=True)
class Baseline:
    """What a campaign's mutants are measured against (see the module doc)."""

    state_a_sec: float
    state_a_failing: frozenset[str]
    dead_passes: frozenset[str]

    @property
    def limit_sec(self) -> float:
        """A mutant's suite run is stopped after this long."""
        return TIME_FACTOR * self.state_a_sec + TIME_MARGIN_SEC

    def to_json(self) -> dict[str, Any]:
        return {"state_a_sec": round(self.state_a_sec, 3),
                "state_a_failing": sorted(self.state_a_failing),
                "dead_passes": sorted(self.dead_passes)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Baseline | None:
        """The stored baseline, None when it is of an older shape (graded again)."""
        sec = doc.get("state_a_sec")
        if not isinstance(sec, int | float):
            return None
        return cls(float(sec), frozenset(map(str, doc.get("state_a_failing") or ())),
                   frozenset(map(str, doc.get("dead_passes") or ())))


def dead_tree(tree: Path, *, crash: bool) -> int:
    """Make every source file the mutation engine would mutate do nothing: emptied, or
    (``crash``) made to exit 1 with a line on stderr where the language runs from source.
    A shebang line is kept. How many files were changed."""
    files = source_files(tree)
    for rel, language in files:
        path = tree / rel
        first = path.read_bytes().split(b"\n", 1)[0]
        shebang = first + b"\n" if first.startswith(b"#!") else b""
        body = _CRASH.get(language, "") if crash else ""
        path.write_bytes(shebang + body.encode())
    return len(files)


async def grade_baseline(engine: DockerEngine, task: Task, state_a: Path,
                         images: StageImages, *, publish: Publish, tree: Path | None = None,
                         stage: str | None = None, run_prefix: str | None = None
                         ) -> Baseline:
    """The mutated tree's own suite run (time, failing checks) and the checks of its two
    dead versions; ``tree`` is State A by default (the reference with ``--of reference``,
    in ``stage``'s image). StageFault when the tree's own suite cannot run."""
    base = tree or state_a
    began = time.monotonic()
    own = await record_identity(engine, task, state_a, publish=publish, images=images,
                                label="baseline", submission=tree, stage=stage,
                                run_prefix=run_prefix)
    state_a_sec = time.monotonic() - began
    if own.status != "ok":
        notes = "; ".join(str(n) for n in own.envelope.get("notes", [])[:2]) or own.status
        raise StageFault(f"State A's own suite run failed ({notes}): a strength campaign "
                         "measures nothing without it")
    failing = scored_checks(own.modules, own.envelope, ("fail", "error"))
    passed: set[str] = set()
    for crash in (False, True):
        with tempfile.TemporaryDirectory(prefix="srb-mutant-baseline-") as scratch:
            dead = Path(scratch) / "tree"
            shutil.copytree(base, dead, symlinks=True)
            dead_tree(dead, crash=crash)
            result = await record_identity(engine, task, state_a, publish=publish,
                                           submission=dead, images=images, label="baseline",
                                           stage=stage, run_prefix=run_prefix)
        passed.update(scored_checks(result.modules, result.envelope, ("pass",)))
    return Baseline(state_a_sec, frozenset(failing), frozenset(passed))
