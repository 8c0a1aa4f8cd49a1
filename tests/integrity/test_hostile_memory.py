"""A program that remembers the inputs it has seen cannot forge reproducibility (issue 32).

The hostile tree (:mod:`.hostile_memory`) is the honest `subtle` port that, on meeting an
input a second time, renders like the faithful port. If a note outlived a run (another
attempt, role, slot, the fuzzer's next execution), counterexamples would stop reproducing
and the honest 40 would climb. Every run of the program gets a fresh world
(:func:`srb_tui.grader.boundary.sandbox.wipe_slot`, a fresh SRB_WORK per run), so the tree must end
exactly where the honest `subtle` ends: valid, every round that found a difference broken
by an upheld counterexample (none "not reproducible"), the same score when every round of
both gradings found a difference; and the record shows the notes it left and no repeat it
found. (A 15 s fuzzer starved on a loaded machine may find nothing in a round, in the honest
grading too: such a round survives with no difference, and the scores are then compared
through the rounds, 40 plus 10 per round survived.)

Default tier: the POSIX message queue channel (/dev/mqueue: writable by every uid, shared
by slots, roles and the fuzzer; the strongest). The other channels (SRB_WORK; /tmp,
/var/tmp, /dev/shm, TMPDIR and HOME) with ``SRB_FULL_FAULTS=1``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from srb_tui.store import CounterexampleRecord
from tests.ladder.harness import SUBMISSIONS, Ladder

from .hostile_memory import make_remembering

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="session")]
FULL = os.environ.get("SRB_FULL_FAULTS") == "1"
COUNTS = ("iterations", "executions", "differences", "budget_sec")
SLOW = pytest.mark.skipif(not FULL, reason="slow tier: SRB_FULL_FAULTS=1")


def remember_lines(cxs: list[CounterexampleRecord]) -> list[str]:
    """Every ``srb-attack remember`` line the round's record holds: the fuzzer's own runs of
    the submission and every candidate run's output."""
    lines: list[str] = []
    for cx in cxs:
        texts = [str(((cx.output_b or {}).get("observed") or {}).get("stderr", ""))]
        texts += [str(run.get("stderr_tail") or "") + str(run.get("stdout_tail") or "")
                  for run in (cx.extra or {}).get("runs", [])]
        lines += [line.strip() for text in texts for line in text.splitlines()
                  if "srb-attack remember" in line]
    return lines


@pytest.mark.parametrize(
    "channel", ["mqueue", pytest.param("work", marks=SLOW), pytest.param("tmp", marks=SLOW)]
)
async def test_a_remembering_program_ends_where_subtle_ends(
    ladder: Ladder, tmp_path: Path, channel: str
) -> None:
    honest = await ladder.submission("subtle")
    tree = make_remembering(SUBMISSIONS / "subtle", tmp_path / channel, [channel])
    got = await ladder.grade(tree)
    env, ref = got.envelope, honest.envelope
    assert ref.valid and ref.verification["breaks"], ref.to_json()
    assert env.valid is True and env.harness_error is None, env.to_json()
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True
    rounds = await ladder.store.grading.adversary_rounds(got.run_id)
    ref_rounds = await ladder.store.grading.adversary_rounds(honest.run_id)
    shown = [(r.adversary_id, r.status, r.notes, {k: r.extra.get(k) for k in COUNTS})
             for r in [*rounds, *ref_rounds]]
    assert all(r.status in ("broken", "survived") for r in rounds), shown
    # A round survives only for want of a difference (a starved 15 s fuzzer on a loaded
    # machine may find none, in the honest run too), never because one did not reproduce:
    # so the score is the honest one wherever the fuzzers found the same thing.
    assert all(r.extra.get("differences") == 0 for r in rounds if r.status == "survived"), shown
    assert env.score is not None and ref.score is not None, shown
    assert env.score == 40.0 + 10.0 * sum(r.status == "survived" for r in rounds), shown
    if all(r.extra.get("differences") for r in [*rounds, *ref_rounds]):
        assert env.score == ref.score, shown
    assert 40.0 <= env.score <= 90.0 and 40.0 <= ref.score <= 90.0, shown
    cxs = await ladder.store.grading.counterexamples(got.run_id)
    upheld = [c for c in cxs if c.verdict == "upheld"]
    assert upheld and all("not reproducible" not in (c.reason or "") for c in cxs), [
        (c.verdict, c.reason) for c in cxs]
    lines = remember_lines(cxs)
    assert any("noted " in line and f" in {channel} " in line for line in lines), lines
    assert not [line for line in lines if "USED" in line], lines
