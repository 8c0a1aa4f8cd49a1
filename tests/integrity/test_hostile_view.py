"""A program that behaves differently where the fuzzer runs it ends where `subtle` ends
(issue 32, items 3 and 7).

The hostile tree (:mod:`.hostile_view`) adds one byte to its output when its script or its
working folder lies under a fuzzer's folder. The fuzzer's CLI domain runs every execution
from the slot's own copy at ``/srb/run/N/target``, the path adjudication runs it at (see the
README, "One world"), so the tree cannot tell the two apart by where it runs: it must end
as the honest `subtle` does — valid, every round that found a difference broken by an
upheld counterexample — and its record must show it looked (``ran at /srb/run/...``) and
never took the other path. With the fuzzer at its old view path every fuzz difference was
the added byte, the shrunk inputs did not reproduce in adjudication and upheld
counterexamples fell from 6 to 1–2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.store import CounterexampleRecord
from tests.ladder.harness import SUBMISSIONS, Ladder

from .hostile_view import make_view_aware

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="session")]
COUNTS = ("iterations", "executions", "differences", "budget_sec")


def view_lines(cxs: list[CounterexampleRecord]) -> list[str]:
    """Every ``srb-attack view`` line the round's record holds (the fuzzer's runs of the
    submission and every candidate run)."""
    texts: list[str] = []
    for cx in cxs:
        texts.append(str(((cx.output_b or {}).get("observed") or {}).get("stderr", "")))
        texts += [str(run.get("stderr_tail") or "") + str(run.get("stdout_tail") or "")
                  for run in (cx.extra or {}).get("runs", [])]
    return [line.strip() for text in texts for line in text.splitlines()
            if "srb-attack view" in line]


async def test_a_program_that_looks_for_the_fuzzer_ends_where_subtle_ends(
    ladder: Ladder, tmp_path: Path
) -> None:
    honest = await ladder.submission("subtle")
    tree = make_view_aware(SUBMISSIONS / "subtle", tmp_path / "view-aware")
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
    # A round survives only for want of a difference (a starved fuzzer on a loaded machine
    # may find none, in the honest grading too), never for want of a reproducing one.
    assert all(r.extra.get("differences") == 0 for r in rounds if r.status == "survived"), shown
    assert env.score == 40.0 + 10.0 * sum(r.status == "survived" for r in rounds), shown
    if all(r.extra.get("differences") for r in [*rounds, *ref_rounds]):
        assert env.score == ref.score, shown
    cxs = await ladder.store.grading.counterexamples(got.run_id)
    upheld = [c for c in cxs if c.verdict == "upheld"]
    assert {c.adversary_id for c in upheld} == {
        r.adversary_id for r in rounds if r.status == "broken"}, [
        (c.adversary_id, c.verdict, c.reason) for c in cxs]
    lines = view_lines(cxs)
    assert any("ran at /srb/run/" in line for line in lines), lines
    assert not [line for line in lines if "USED" in line], lines
