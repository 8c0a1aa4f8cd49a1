"""Stage III of a strength campaign: the task's adversary panel on one Stage II survivor
(issue 36).

The survivor is graded as a submission would be at Stage III — the verification image
(built once for the campaign), State A as the original, the mutant as the submission,
every adversary with its budget — under a run of its own, so its rounds and
counterexamples are ordinary records the Run and Counterexamples screens open and ``R``
re-runs. That run's agent is ``mutant:<campaign>/<mutant>`` and its ``extra.strength``
says what it is; it goes ``pending → verification → scored`` (Stage I skipped: a mutant is
not a migration; Stage II graded by the campaign), and run lists, reports and resume leave
it out. A fresh stage container per survivor: nothing is shared between mutants but the
image.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

from srb_tui.service.grading.stage_record import persist_stage
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.service.grading.stages.verification import VERIFICATION
from srb_tui.service.grading.strength_stage import STAGE_I_SKIPPED
from srb_tui.strength.mutate import Mutant, apply_mutant

Catches = dict[str, tuple[str, int | None]]
"""adversary → (its round's outcome: broken | survived | error, the first upheld
counterexample's id when it broke the mutant)."""


async def grade_survivor(ctx: StageContext, mutant: Mutant) -> Catches:
    """Run the panel on ``mutant`` under ``ctx``'s run (a pending run) and end the run
    scored; what each adversary did. ``ctx.original`` is State A and ``ctx.submission`` the
    tree the mutant is of (State A, or the reference): the panel grades a scratch copy of
    it with the mutant applied. The stage is recorded as the ladder records its stages
    (:func:`~.stage_record.persist_stage`)."""
    store, run_id, run_dir = ctx.store, ctx.run_id, ctx.folder()
    await store.runs.transition(run_id, "verification",
                                f"Stage III of strength mutant {mutant.id}; {STAGE_I_SKIPPED}; "
                                "Stage II survived in its campaign")
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"srb-mutant-{mutant.id}-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(ctx.submission, copy, symlinks=True)
        apply_mutant(copy, mutant)
        ctx = dataclasses.replace(ctx, submission=copy)
        outcome = await VERIFICATION.run(ctx)
    await persist_stage(ctx, outcome, run_dir / "verification.json")
    first: dict[str, int] = {}
    for record in await store.grading.counterexamples(run_id):
        if record.verdict == "upheld":
            first.setdefault(record.adversary_id, record.id)
    catches: Catches = {
        name: (result, first.get(name) if result == "broken" else None)
        for name, result in outcome.adversaries.items()}
    caught = sorted(name for name, (result, _) in catches.items() if result == "broken")
    await store.runs.transition(run_id, "scored",
                                f"strength mutant {mutant.id}: caught by "
                                f"{', '.join(caught) if caught else 'no adversary'}")
    return catches
