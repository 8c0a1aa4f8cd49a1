"""Issue 32, item 6: Stage III judges behaviour only.

A scripted adversary against demo01's faithful ``reference`` port hands in a candidate that
reads the entry point instead of running it: ``head -n 1 "$CSVTAB" | grep -q python``
(State A's first line is a python shebang, the port's is node). Before, it passed on State A,
failed on the port three times and was upheld: the correct port fell from 100 to 80. Now
the candidate's identity cannot read the tree's working copy (``grader/tree_copy.py``), and
a candidate that started no program of the tree on either side is invalid, "did not run the
program" (``grader/candidate.py``): the round survives and the port stays at 100. The other
five rounds (srb's fuzzers, which run the program) still run, and survive, as before.

The slow tier adds a candidate that starts the program once and then reads the entry point:
only the closed working copy stops that one (its read fails on State A too, so it is
invalid, "does not pass on State A").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from srb_tui.schema import load_task
from tests.ladder.harness import SUBMISSIONS, Ladder, copy_task

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="session")]

PROGRAM = Path(__file__).resolve().parent / "programs" / "peek_adversary.py"


FULL = os.environ.get("SRB_FULL_FAULTS") == "1"
CASES = [
    # (the adversary's candidate, what its adjudication says)
    pytest.param("peek", "did not run the program", id="peek"),
    # it starts the program once, so only the closed working copy stops its read
    pytest.param("run-then-peek", "does not pass on State A", id="run-then-peek",
                 marks=pytest.mark.skipif(not FULL, reason="slow tier: SRB_FULL_FAULTS=1")),
]


@pytest.mark.parametrize(("variant", "reason"), CASES)
async def test_a_candidate_that_reads_the_entry_point_is_not_a_break(
    ladder: Ladder, tmp_path: Path, variant: str, reason: str
) -> None:
    task_dir = copy_task(ladder.task.dir, tmp_path / ladder.task.dir.name)
    probe = task_dir / "tests" / "verification" / "probe.toml"
    text = probe.read_text()
    old = 'id = "f01-bytes-default-table"\nmodel = "fuzz"\ndriver = "fuzz"'
    assert old in text
    text = text.replace(old, 'id = "s01-peek"\nmodel = "scripted"\ndriver = "scripted"')
    text = text.replace(
        "seed = 1\n", f'seed = 1\nprogram = ["python3", "{PROGRAM}", "{variant}"]\n', 1)
    probe.write_text(text)
    load = load_task(task_dir)
    assert load.task is not None and load.ok, load.problems
    got = await ladder.grade(SUBMISSIONS / "reference", task=load.task,
                             adversary_budget_sec=60.0)
    env = got.envelope
    assert env.valid is True and env.harness_error is None, env.to_json()
    assert env.score == 100.0, env.to_json()
    rounds = {r.adversary_id: r for r in await ladder.store.grading.adversary_rounds(got.run_id)}
    peek = rounds["s01-peek"]
    assert peek.driver == "scripted" and peek.status == "survived", peek
    cx = await ladder.store.grading.counterexamples(got.run_id, "s01-peek")
    assert cx and all(c.verdict == "invalid" for c in cx), [(c.verdict, c.reason) for c in cx]
    assert all(reason in (c.reason or "") for c in cx), [c.reason for c in cx]
    assert all('head -n 1 "$CSVTAB"' in c.code for c in cx)
    others = [r for name, r in rounds.items() if name != "s01-peek"]
    assert len(others) == 5 and all(r.status == "survived" for r in others), others
