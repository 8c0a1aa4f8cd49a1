"""Hostile submissions on the ladder against a real engine (issue 9).

Each is the demo's honest `wrong` port (Stage I pass, Stage II incomplete: score 0, valid,
blocked at Stage II) plus one attack from the issue, then all of them at once. The Stage II
attacks are graded through Stage II only (``stages=["behavioural"]``, the re-grade knob):
that is where they run and where they are refused, so each single case asserts on its
Stage II result (status ok, no harness error, not complete, the honest rates) and on the
``srb-attack`` lines its failing cases kept, every one of them refused. The all-at-once
tree holds every attack's code and the long line, so it goes through the whole ladder and
must end exactly where `wrong` ends: its score shows that none of them moves the verdict,
and its Stage I pass that no attack's code trips the reviewer. Every single-attack tree lies
between `wrong` (which passes Stage I in tests/ladder) and this one, and the demo reviewer's
gates either look for something (a tree holding less of the same code shows less) or count
JavaScript lines (more than in `wrong`), so a single tree passes where both ends do. The long-line
case attacks Stage I, so it is graded through Stage I only. The Stage III attacks ride on
`subtle` (complete Stage II, broken in Stage III) through the whole ladder and must end
where the honest `subtle` ends: valid, at least one upheld break, the same score band.

The honest `wrong` and `subtle` are the session's shared gradings (tests/ladder/harness.py),
the same runs tests/ladder/test_ladder.py asserts on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from srb_tui.service.events import StageFinished
from srb_tui.store import CounterexampleRecord, StageResultRecord
from tests.ladder.harness import ADVERSARY_BUDGET_SEC, SUBMISSIONS, Graded, Ladder

from .hostile import ATTACKS, make_flaky, make_hostile

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="session")]


async def attack_lines(ladder: Ladder, got: Graded) -> list[str]:
    """Every ``srb-attack`` line the run's stored check details carry."""
    lines: list[str] = []
    for check in await ladder.store.grading.checks(got.run_id, "behavioural"):
        for line in (check.detail or "").splitlines():
            if line.startswith("srb-attack "):
                lines.append(line)
    return lines


HARMLESS = (
    "srb-attack oracle: exec /usr/bin/",  # a shim in Stage II; Stage III's public python3
    "srb-attack oracle: read /srb/stage/",  # the slot's own view, holding the submission
    "srb-attack inject: plant /tmp/",  # its own files in its own sized tmpfs: read by no one
    "srb-attack forge: write /tmp/",  # the old result path; the host reads /srb/grader now
    "srb-attack linger: mark",
    "srb-attack linger: setsid child",  # started, and killed when the module ends
    "srb-attack tamper: list /srb/stage",  # slot numbers; every slot folder is 0750
    # $SRB_WORK is shared with the slot's group since issue 32 (what a module starts writes
    # there as the slot); the module imports nothing from it, as the unchanged rates show
    "srb-attack inject: plant /srb/work/",
)


def harmless(line: str) -> bool:
    """A succeeded step that only touched the submission's own scratch."""
    return line.startswith(HARMLESS) or ": plant /srb/run/" in line


def rates(got: Graded) -> dict[str, float]:
    return {m["id"]: m["rate"] for m in got.envelope.behavioural["modules"]}


def assert_like_wrong(got: Graded, honest: Graded, *, same_rates: bool = True) -> None:
    env = got.envelope
    assert env.valid is True, env.to_json()
    assert env.score == 0.0 and env.blocked_by == "behavioural", env.to_json()
    assert env.audit_gate == "pass" and env.behavioural["complete"] is False
    assert env.harness_error is None
    if same_rates:
        assert rates(got) == rates(honest)
    else:
        assert all(rates(got)[k] <= rates(honest)[k] for k in rates(honest))


async def assert_stage_two_like_wrong(
    ladder: Ladder, got: Graded, honest: Graded, *, same_rates: bool = True
) -> None:
    """A tree graded through Stage II only: that stage ran cleanly (status ok, no harness
    error: the attack neither crashed nor stopped the grader) and found what it finds in
    the honest `wrong`; nothing else ran."""
    finished = [e for e in got.events if isinstance(e, StageFinished)]
    assert [(e.stage, e.status) for e in finished] == [("behavioural", "ok")], finished
    assert "harness_error" not in finished[0].summary, finished[0].summary
    stored = await ladder.store.grading.stage_results(got.run_id)
    assert [(s.stage, s.status) for s in stored] == [("behavioural", "ok")]
    env = got.envelope
    assert env.behavioural["complete"] is False, env.to_json()
    assert env.verification["ran"] is False
    if same_rates:
        assert rates(got) == rates(honest)
    else:
        assert all(rates(got)[k] <= rates(honest)[k] for k in rates(honest))


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_each_attack_ends_where_wrong_ends(
    ladder: Ladder, tmp_path: Path, attack: str
) -> None:
    honest = await ladder.submission("wrong")
    tree = make_hostile(SUBMISSIONS / "wrong", tmp_path / attack, [attack])
    got = await ladder.grade(tree, stages=["behavioural"])
    await assert_stage_two_like_wrong(ladder, got, honest, same_rates=attack != "fill")
    lines = await attack_lines(ladder, got)
    assert lines, "the attack left no trace in the stage results"
    assert any(f"srb-attack {attack}:" in line for line in lines)
    # Only writes into the submission's own scratch may succeed (planted files there).
    harmful = [line for line in lines if ("SUCCEEDED" in line and not harmless(line))
               or "USED" in line]
    assert not harmful, harmful
    if attack == "forge":
        assert any("SIGKILL grader pid" in line and "refused EPERM" in line for line in lines)
        assert any("/srb/grader/behavioural.json: refused EACCES" in line for line in lines)
    if attack in ("oracle", "replay"):
        assert any("refused" in line for line in lines)
    if attack == "linger":
        assert any("/mem: refused EACCES" in line for line in lines)
        detail = await ladder.store.run_detail(got.run_id)
        stored = {s.stage: s for s in detail.stage_results}["behavioural"].result
        leftovers = [u.get("submission_leftovers") for u in stored["units"]]
        assert any(note and "killed" in note for note in leftovers), leftovers
    if attack == "fill":
        assert any("refused ENOSPC" in line or "refused EFBIG" in line for line in lines)


async def test_long_line_does_not_stall_the_reviewer(ladder: Ladder, tmp_path: Path) -> None:
    tree = make_hostile(SUBMISSIONS / "wrong", tmp_path / "long", [], long_line=True)
    got = await ladder.grade(tree, stages=["audit"])  # the stage the long line is aimed at
    assert got.envelope.audit_gate == "pass", got.envelope.to_json()
    finished = [(e.stage, e.status) for e in got.events if isinstance(e, StageFinished)]
    assert finished == [("audit", "ok")]
    assert_reviewer_kept_pace(await ladder.store.grading.stage_results(got.run_id))


def assert_reviewer_kept_pace(stored: list[StageResultRecord]) -> None:
    """Stage I read the 1.9 MB one-line file and still finished well inside its timeout."""
    audit = {s.stage: s for s in stored}["audit"]
    assert audit.status == "ok"
    assert audit.duration_sec is not None and audit.duration_sec < 240, audit.duration_sec


async def test_all_attacks_at_once(ladder: Ladder, tmp_path: Path) -> None:
    honest = await ladder.submission("wrong")
    tree = make_hostile(SUBMISSIONS / "wrong", tmp_path / "all", sorted(ATTACKS), long_line=True)
    got = await ladder.grade(tree)  # the whole ladder
    assert_like_wrong(got, honest, same_rates=False)
    assert_reviewer_kept_pace(await ladder.store.grading.stage_results(got.run_id))
    lines = await attack_lines(ladder, got)
    # A check keeps the first 1,500 bytes of stderr, so the attacks that run first show.
    seen = {line.split(":")[0] for line in lines}
    assert len(seen & {f"srb-attack {a}" for a in ATTACKS}) >= 3, seen
    assert not [line for line in lines if ("SUCCEEDED" in line and not harmless(line))
                or "USED" in line]


async def test_stage_three_tampering_ends_where_subtle_ends(
    ladder: Ladder, tmp_path: Path
) -> None:
    honest = await ladder.submission("subtle")
    tree = make_hostile(
        SUBMISSIONS / "subtle", tmp_path / "tamper", ["tamper", "oracle", "forge"]
    )
    got = await ladder.grade(tree)
    env, ref = got.envelope, honest.envelope
    assert ref.valid and ref.verification["breaks"]
    assert env.valid is True and env.harness_error is None, env.to_json()
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True
    assert env.verification["ran"] is True and env.verification["breaks"], env.verification
    assert 40.0 <= env.score <= 90.0 and env.blocked_by == "verification"
    rounds = await ladder.store.grading.adversary_rounds(got.run_id)
    assert len(rounds) == 6 and all(r.status in ("broken", "survived") for r in rounds)
    upheld = [
        c for c in await ladder.store.grading.counterexamples(got.run_id) if c.verdict == "upheld"
    ]
    assert upheld
    tried = [
        line
        for c in upheld
        for line in str(((c.output_b or {}).get("observed") or {}).get("stderr", "")).splitlines()
        if line.startswith("srb-attack ")
    ]
    assert any(line.startswith("srb-attack tamper") for line in tried), tried
    assert not [line for line in tried if "USED" in line], tried


# --------------------------------------------------------------------------- issue 21

BOUNDARY_ATTACKS = ["vm-writev", "ptrace", "patch-mem", "peek-fd", "peek-env", "peek-cmdline"]
"""Attacks on the candidate that runs the program (non-exiting ones first)."""
FULL = os.environ.get("SRB_FULL_FAULTS") == "1"


def candidate_lines(upheld: list[CounterexampleRecord]) -> list[str]:
    """The ``srb-attack`` lines the program left in the record of the candidate runs on the
    submission (srb's fuzz candidates print the program's stderr when it fails them)."""
    return [
        line
        for c in upheld
        for run in ((c.extra or {}).get("runs") or [])
        if run.get("role") == "submission"
        for line in str(run.get("stderr_tail", "")).splitlines()
        if line.startswith("srb-attack ")
    ]


async def assert_boundary_holds(ladder: Ladder, tmp_path: Path, attacks: list[str]) -> None:
    honest = await ladder.submission("subtle")
    tree = make_hostile(SUBMISSIONS / "subtle", tmp_path / "-".join(attacks)[:60], attacks)
    # The attacks start two interpreters per execution, so the fuzzers get through fewer
    # inputs per second: a longer budget keeps them as far as the honest tree's get.
    got = await ladder.grade(tree, adversary_budget_sec=2 * ADVERSARY_BUDGET_SEC)
    env, ref = got.envelope, honest.envelope
    assert ref.valid and ref.verification["breaks"]
    assert env.valid is True and env.harness_error is None, env.to_json()
    # The honest score, give or take one adversary that ran out of budget (with the
    # boundary off the patch makes every candidate pass on the submission: 100).
    assert ref.score <= env.score <= ref.score + 10, (env.score, ref.score, env.verification)
    assert env.blocked_by == ref.blocked_by == "verification"
    upheld = [
        c for c in await ladder.store.grading.counterexamples(got.run_id) if c.verdict == "upheld"
    ]
    assert upheld
    tried = candidate_lines(upheld)
    for attack in attacks:
        assert any(line.startswith(f"srb-attack {attack}:") for line in tried), (attack, tried)
    assert not [line for line in tried if "SUCCEEDED" in line or "USED" in line], tried
    assert "srb-attack peek-env: SRB_ names in my environment: none" in tried or (
        "peek-env" not in attacks
    ), tried
    programs = [
        run.get("boundary") or {}
        for c in upheld
        for run in ((c.extra or {}).get("runs") or [])
    ]
    assert programs and all(p.get("programs", 0) >= 1 for p in programs), programs


async def test_stage_three_boundary_holds_against_every_attack_at_once(
    ladder: Ladder, tmp_path: Path
) -> None:
    """The candidate's file, descriptors, memory and environment are out of the program's
    reach: each attack is refused in the record of the candidate runs and the score is the
    honest `subtle`'s (with SRB_STAGE3_BOUNDARY=off the patch makes every candidate pass on
    the submission: 100)."""
    await assert_boundary_holds(ladder, tmp_path, BOUNDARY_ATTACKS)


@pytest.mark.skipif(not FULL, reason="one tree per attack: SRB_FULL_FAULTS=1")
@pytest.mark.parametrize("attack", BOUNDARY_ATTACKS)
async def test_stage_three_boundary_holds_against_each_attack(
    ladder: Ladder, tmp_path: Path, attack: str
) -> None:
    await assert_boundary_holds(ladder, tmp_path, [attack])


# --------------------------------------------------------------------------- issue 32


def _passes(run: dict[str, object]) -> bool:
    return run.get("exit_code") == 0 and not run.get("timed_out") and not run.get("start_error")


async def test_nondeterministic_submission_is_a_difference(ladder: Ladder, tmp_path: Path) -> None:
    """Issue 32 item 4: `subtle` whose flaw shows on a random three runs in four (no note
    kept anywhere). A counterexample that catches it sees State A pass every rerun and the
    submission fail on some and pass on others: recorded as "nondeterministic" and, on
    srb's own tasks, counted as the break it is. Without that every such counterexample was
    "not reproducible" and the round survived (the honest 40 became 70)."""
    honest = await ladder.submission("subtle")
    tree = make_flaky(SUBMISSIONS / "subtle", tmp_path / "flaky")
    # The flaw shows on three runs in four, so the fuzzers see fewer differences per
    # second than on `subtle`: a longer budget keeps them as far as the honest tree's get.
    got = await ladder.grade(tree, adversary_budget_sec=2 * ADVERSARY_BUDGET_SEC)
    env, ref = got.envelope, honest.envelope
    assert ref.valid and ref.verification["breaks"]
    assert env.valid is True and env.harness_error is None, env.to_json()
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True
    # Where the honest `subtle` ends, or lower (before issue 32: 70 against 40).
    assert env.score <= ref.score and env.score < 100, (env.score, ref.score, env.verification)
    assert env.blocked_by == "verification"
    rounds = await ladder.store.grading.adversary_rounds(got.run_id)
    assert len(rounds) == 6 and all(r.status in ("broken", "survived") for r in rounds)
    found = await ladder.store.grading.counterexamples(got.run_id)
    flaky = [c for c in found if c.verdict == "nondeterministic"]
    assert flaky, [(c.verdict, c.reason) for c in found]
    for record in flaky:
        runs = (record.extra or {}).get("runs") or []
        mine = [_passes(r) for r in runs if r.get("role") == "submission"]
        theirs = [_passes(r) for r in runs if r.get("role") == "original"]
        assert all(theirs) and len(theirs) == 3, runs
        assert True in mine and False in mine, runs
        assert "nondeterministic on the submission" in (record.reason or "")
    broken = {r.adversary_id for r in rounds if r.status == "broken"}
    counted = {b["adversary"] for b in env.verification["breaks"]}
    assert broken == counted
    assert {c.adversary_id for c in flaky} & broken
    for r in rounds:  # each round's own record counts its nondeterministic candidates
        mine = sum(1 for c in flaky if c.adversary_id == r.adversary_id)
        assert (r.extra or {}).get("nondeterministic", 0) == mine, (r.adversary_id, r.extra)
