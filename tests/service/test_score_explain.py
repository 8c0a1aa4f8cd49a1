"""The Score tab's explanation (issue 35 item 5): the formula with the run's own numbers
and the adversaries behind it, instead of "blocked by: verification"."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from srb_tui.schema.scoring_policy import ScoringPolicy
from srb_tui.service.views.score_explain import explain_score
from srb_tui.store import AdversaryRoundRecord, Store


def _round(run_id: str, adversary: str, status: str) -> AdversaryRoundRecord:
    return AdversaryRoundRecord(run_id=run_id, adversary_id=adversary, model="fuzz",
                                driver="fuzz", focus=None, status=status, started_at=None,
                                duration_sec=1.0, candidates=1, notes=())


async def test_partial_credit_names_the_adversaries_and_the_arithmetic(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="replay:subtle")
    run = dataclasses.replace(run, score=60.0, max_score=100.0, valid=True,
                              blocked_by="verification")
    rounds = [_round(run.id, f"f0{i}", "broken" if i <= 4 else "survived") for i in range(1, 7)]
    got = explain_score(run, rounds)
    assert got is not None
    assert got.formula == ("60 = Stage I pass × (Stage II complete 40 + 10 × 2 of 6 "
                           "adversaries survived)")
    assert got.reading.startswith("partial credit: 4 of 6 adversaries")
    assert got.broken_by == ("f01", "f02", "f03", "f04") and got.survived == ("f05", "f06")
    # the task's own policy, not the published one
    own = ScoringPolicy(max_score=100.0, behavioural_points=70.0, verification_points=30.0,
                        verification_models=3, points_per_survived_model=10.0)
    three = explain_score(dataclasses.replace(run, score=90.0), rounds[3:], own)
    assert three is not None and three.formula.startswith("90 = Stage I pass × (Stage II "
                                                          "complete 70 + 10 × 2 of 3 ")


async def test_the_gates_say_which_stage_ended_it(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="tasks/t", agent="untouched")
    audit = explain_score(dataclasses.replace(run, score=0.0, blocked_by="audit"), [])
    assert audit is not None and audit.formula.startswith("0 = Stage I fail")
    stage2 = explain_score(dataclasses.replace(run, score=0.0, blocked_by="behavioural"), [])
    assert stage2 is not None and "all or nothing" in stage2.reading
    full = explain_score(dataclasses.replace(run, score=100.0, valid=True),
                         [_round(run.id, f"a{i}", "survived") for i in range(6)])
    assert full is not None and full.reading == "every adversary survived: full credit"
    errored = explain_score(dataclasses.replace(run, score=90.0, valid=False),
                            [_round(run.id, "a", "error"),
                             *(_round(run.id, f"b{i}", "survived") for i in range(5))])
    assert errored is not None and errored.errored == ("a",) and "invalid" in errored.reading
    assert explain_score(run, []) is None  # nothing to explain before a score
