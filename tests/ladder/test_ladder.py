"""The three-stage ladder against a real Docker engine on the demo task's six submissions.

| submission | Stage I | Stage II | Stage III | score |
| untouched | fail | complete (blindness, uncredited) | not run | 0 |
| wrapper | fail | incomplete (old toolchain absent) | not run | 0 |
| half | fail | — | not run | 0 |
| wrong | pass | incomplete | not run | 0 |
| subtle | pass | complete | >= 1 adversary breaks it with a reproducing candidate | 40-90 |
| reference | pass | complete | all survive | 100 |
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srb_tui.schema import load_task
from srb_tui.service.events import StageFinished, StatusChanged

from .harness import SUBMISSIONS, Ladder, copy_task

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="session")]

STAGES_WHEN_GATED = ["audit", "behavioural", "scored"]
STAGES_ALL = ["audit", "behavioural", "verification", "scored"]


async def statuses(ladder: Ladder, run_id: str) -> list[str]:
    return [t.to_status for t in await ladder.store.runs.transitions(run_id)][4:]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the table


async def test_untouched_fails_audit_and_shows_blindness(ladder: Ladder) -> None:
    got = await ladder.submission("untouched")
    env = got.envelope
    assert env.audit_gate == "fail"
    assert env.score == 0.0 and env.valid and env.blocked_by == "audit"
    assert env.behavioural["complete"] is True and env.behavioural["credited"] is False
    assert env.behavioural["points"] == 0.0
    assert any("blindness" in note for note in env.notes)
    assert env.verification["ran"] is False
    assert await statuses(ladder, got.run_id) == STAGES_WHEN_GATED
    assert await ladder.store.grading.adversary_rounds(got.run_id) == []
    assert not (got.run_dir / "verification.json").exists()


async def test_wrapper_fails_audit_and_stage_two(ladder: Ladder) -> None:
    got = await ladder.submission("wrapper")
    env = got.envelope
    assert env.audit_gate == "fail" and env.score == 0.0 and env.valid
    assert env.behavioural["complete"] is False
    assert all(m["rate"] == 0.0 for m in env.behavioural["modules"])
    checks = await ladder.store.grading.checks(got.run_id, "behavioural", "formats")
    ledger = [c for c in checks if c.check_id == "interpreter-ledger"]
    assert ledger and ledger[0].verdict == "fail"  # the python3 shim recorded the attempt
    assert await statuses(ladder, got.run_id) == STAGES_WHEN_GATED


async def test_half_fails_audit(ladder: Ladder) -> None:
    got = await ladder.submission("half")
    assert got.envelope.audit_gate == "fail"
    assert got.envelope.score == 0.0 and got.envelope.valid
    assert got.envelope.verification["ran"] is False
    assert await ladder.store.grading.adversary_rounds(got.run_id) == []


async def test_wrong_passes_audit_but_stage_two_is_incomplete(ladder: Ladder) -> None:
    got = await ladder.submission("wrong")
    env = got.envelope
    assert env.audit_gate == "pass"
    assert env.behavioural["complete"] is False
    assert env.score == 0.0 and env.valid and env.blocked_by == "behavioural"
    rates = {m["id"]: m["rate"] for m in env.behavioural["modules"]}
    assert rates["unicode"] < 1.0 and rates["inputs"] < 1.0
    assert env.verification["ran"] is False
    assert any("Stage II is not complete" in note for note in env.notes)
    assert await statuses(ladder, got.run_id) == STAGES_WHEN_GATED


async def test_subtle_is_broken_by_a_reproducing_candidate(ladder: Ladder) -> None:
    got = await ladder.submission("subtle")
    env = got.envelope
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True
    assert env.valid and 40.0 <= env.score <= 90.0
    assert env.verification["ran"] is True
    assert env.verification["breaks"], env.verification
    assert env.blocked_by == "verification"
    assert await statuses(ladder, got.run_id) == STAGES_ALL
    rounds = await ladder.store.grading.adversary_rounds(got.run_id)
    assert len(rounds) == 6
    broken = [r for r in rounds if r.status == "broken"]
    assert broken and all(r.candidates >= 1 for r in broken)
    # issue 32: no round is a harness fault, and the score is what the rounds say
    assert all(r.status in ("broken", "survived") for r in rounds), [
        (r.status, r.notes) for r in rounds]
    assert env.score == 40.0 + 10.0 * (6 - len(broken)), (env.score, len(broken))
    upheld = [
        c for c in await ladder.store.grading.counterexamples(got.run_id) if c.verdict == "upheld"
    ]
    assert upheld
    for cx in upheld:
        assert cx.code.startswith("#!/bin/bash") and '"$SRB_TARGET/bin/csvtab"' in cx.code
        assert cx.exit_a == 0 and cx.exit_b not in (None, 0)
        assert cx.duration_a is not None and cx.duration_b is not None
        assert "passes on State A and fails on the submission" in (cx.reason or "")
        runs = cx.extra["runs"]
        assert sum(1 for r in runs if r["role"] == "original") == 3  # reruns = 3
        assert all(r["exit_code"] == 0 for r in runs if r["role"] == "original")
        assert all(r["exit_code"] != 0 for r in runs if r["role"] == "submission")
        assert cx.output_a is not None and "observed" in cx.output_a
        assert cx.output_a["observed"]["stdout"] != cx.output_b["observed"]["stdout"]


async def test_reference_survives_everything(ladder: Ladder) -> None:
    got = await ladder.submission("reference")
    env = got.envelope
    assert env.score == 100.0 and env.valid and env.blocked_by is None, env.to_json()
    assert env.verification["models_survived"] == 6
    rounds = await ladder.store.grading.adversary_rounds(got.run_id)
    assert [r.status for r in rounds] == ["survived"] * 6
    for r in rounds:
        assert r.driver == "fuzz" and r.extra["iterations"] > 0
        assert r.extra["budget_sec"] == 15.0
    assert await ladder.store.grading.counterexamples(got.run_id) == []
    stage_two = next(r for r in await ladder.store.grading.stage_results(got.run_id)
                     if r.stage == "behavioural")
    started = {u["metadata"]["started_through"] for u in stage_two.result["units"]}
    assert started == {"srb_submission.run"}  # in-process, no interpreter per case


# --------------------------------------------------------------------------- files and store


async def test_score_and_reward_files(ladder: Ladder) -> None:
    for name in ("subtle", "untouched"):
        got = await ladder.submission(name)
        score = read_json(got.run_dir / "score.json")
        assert score["schema"] == "swerefactor.score/1"
        assert score["task"] == "demo01-csvtab-python-to-node"
        assert {"reward", "score", "max_score", "valid", "audit_gate", "behavioural",
                "verification", "blocked_by", "harness_error", "notes", "stages_run",
                "harnesses", "uncounted", "unscored", "uncredited"} <= set(score)
        assert score["score"] == got.envelope.score
        assert score["reward"] == pytest.approx(got.envelope.score / 100.0)
        assert score["srb"]["audit_gate"] == got.envelope.audit_gate
        reward = read_json(got.run_dir / "reward.json")
        assert reward["score"] == got.envelope.score and reward["valid"] == 1
        assert reward["stage1_passed"] == int(got.envelope.audit_gate == "pass")
        assert all(isinstance(v, int | float) for v in reward.values())
        for extra in ("summary.txt", "telemetry.json"):
            assert (got.run_dir / extra).is_file()
        for stage in ("audit", "behavioural"):
            doc = read_json(got.run_dir / f"{stage}.json")
            assert doc["schema"] == "swerefactor.stage-result/1" and doc["stage"] == stage
            assert doc["status"] == "ok" and len(doc["harness"]["fingerprint"]) == 12
        assert (got.run_dir / "verification.json").exists() == (name == "subtle")
    run = await ladder.store.runs.require_run((await ladder.submission("subtle")).run_id)
    assert run.grader_fingerprint and len(run.grader_fingerprint) == 12
    assert run.valid is True and run.score == (await ladder.submission("subtle")).envelope.score


async def test_store_holds_votes_modules_rounds_and_images(ladder: Ladder) -> None:
    untouched = await ladder.submission("untouched")
    detail = await ladder.store.run_detail(untouched.run_id)
    votes = [v for v in detail.gate_votes if v.gate_id == "no-python-sources"]
    assert [v.sample for v in votes] == [0, 1, 2]
    for v in votes:
        assert v.verdict == "fail" and not v.downgraded
        assert v.evidence and v.evidence[0]["grounded"] is True
        assert str(v.evidence[0]["path"]).startswith("submission:")
    outcomes = {o.gate_id: o for o in detail.gate_outcomes}
    assert outcomes["no-python-sources"].verdict == "fail"
    assert outcomes["no-python-sources"].votes_fail == 3
    assert {i.role for i in detail.images} == {"audit", "behavioural"}
    assert all(i.image_id and i.image_id.startswith("sha256:") for i in detail.images)
    assert {s.stage for s in detail.stage_results} == {"audit", "behavioural"}
    subtle = await ladder.store.run_detail((await ladder.submission("subtle")).run_id)
    assert [(m.module_id, m.status, m.rate) for m in subtle.module_results] == [
        ("formats", "ok", 1.0), ("unicode", "ok", 1.0), ("inputs", "ok", 1.0),
        ("options", "ok", 1.0),
    ]  # fmt: skip
    assert sum(1 for c in subtle.checks if c.stage == "behavioural") >= 186
    assert {i.role for i in subtle.images} == {"audit", "behavioural", "verification"}
    assert all(c.removed_at for c in subtle.containers)  # every stage container is gone
    assert {c.role for c in subtle.containers} == {"audit", "behavioural", "verification"}


async def test_events_follow_the_store(ladder: Ladder) -> None:
    got = await ladder.submission("wrong")
    changed = [e.status for e in got.events if isinstance(e, StatusChanged)]
    assert changed == ["audit", "behavioural", "scored"]
    finished = [(e.stage, e.status) for e in got.events if isinstance(e, StageFinished)]
    assert finished == [("audit", "ok"), ("behavioural", "ok")]


# --------------------------------------------------------------------------- harness faults


async def test_unbuildable_stage_image_makes_the_run_invalid(
    ladder: Ladder, tmp_path: Path
) -> None:
    task_dir = copy_task(ladder.task.dir, tmp_path / ladder.task.dir.name)
    dockerfile = task_dir / "tests" / "audit" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo broken on purpose && exit 3\n")
    load = load_task(task_dir)
    assert load.task is not None
    got = await ladder.grade(SUBMISSIONS / "untouched", task=load.task)
    env = got.envelope
    assert env.valid is False and env.score is None
    assert env.blocked_by == "audit"
    assert env.harness_error and env.harness_error.startswith("audit")
    assert "image could not be built" in env.harness_error
    run = await ladder.store.runs.require_run(got.run_id)
    assert run.valid is False and run.score is None and run.status == "scored"
    assert run.harness_error == env.harness_error
    audit = [s for s in await ladder.store.grading.stage_results(got.run_id) if s.stage == "audit"]
    assert audit[0].status == "error"
    assert (got.run_dir / "score.json").exists()
    reward = read_json(got.run_dir / "reward.json")  # always written; valid 0 says why
    assert (reward["valid"], reward["score"], reward["stage1_ran"]) == (0, 0.0, 0)


async def test_scripted_adversary_goes_through_the_same_adjudication(
    ladder: Ladder, tmp_path: Path
) -> None:
    task_dir = copy_task(ladder.task.dir, tmp_path / ladder.task.dir.name)
    probe = task_dir / "tests" / "verification" / "probe.toml"
    program = Path(__file__).resolve().parent / "programs" / "adversary.py"
    text = probe.read_text()
    old = 'id = "f01-bytes-default-table"\nmodel = "fuzz"\ndriver = "fuzz"'
    assert old in text
    text = text.replace(old, 'id = "s01-scripted"\nmodel = "scripted"\ndriver = "scripted"')
    text = text.replace("seed = 1\n", f'seed = 1\nprogram = ["python3", "{program}"]\n', 1)
    probe.write_text(text)
    load = load_task(task_dir)
    assert load.task is not None and load.ok, load.problems
    subtle = await ladder.submission("subtle")
    got = await ladder.grade(  # a budget that holds one try_test and the report on a busy host
        SUBMISSIONS / "subtle", task=load.task, stages=["verification"], force=True,
        adversary_budget_sec=60.0,
    )
    rounds = {r.adversary_id: r for r in await ladder.store.grading.adversary_rounds(got.run_id)}
    scripted = rounds["s01-scripted"]
    assert scripted.driver == "scripted" and scripted.status == "broken"
    assert scripted.extra["tries"] == 1 and scripted.extra["status"] == "reported"
    cx = await ladder.store.grading.counterexamples(got.run_id, "s01-scripted")
    assert len(cx) == 1 and cx[0].verdict == "upheld" and "$CSVTAB" in cx[0].code
    transcript = read_json(got.run_dir / "verification-s01-scripted.json")
    assert transcript["tries"][0]["reply"]["result"]["outcome"] == "upheld"
    # Forced without Stage I/II results: Stage III is shown, not credited; the run is
    # invalid (no Stage I result), never scored on Stage III alone.
    env = got.envelope
    assert env.valid is False and env.verification["ran"] is False
    assert env.verification["uncredited"]["adversaries"]["s01-scripted"] == "broken"
    assert any("forced" in note for note in env.notes)
    assert subtle.run_id != got.run_id
