"""The result files a published reader expects in srb's run directory (issue 11 point 7),
checked key by key against the published writers' field lists (written out below from
Einsia/SWE-Refactor-Bench), and read back by srb's own importer of published trials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srb_tui.reports.import_job import read_job
from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.scoring.published import error_document, verdict_document
from srb_tui.scoring.result_files import write_result_files

# infra/swerefactor/harbor.py, flatten(): the keys written for every verdict.
REWARD_FIXED = {
    "reward", "score", "max_score", "valid",
    "stage1_ran", "stage1_passed", "stage1_failures",
    "stage2_ran", "stage2_scored", "stage2_points", "stage2_rate", "stage2_modules",
    "stage3_ran", "stage3_scored", "stage3_points", "stage3_models", "stage3_survived",
    "stage3_broken",
    "blocked_by_audit_gate", "blocked_by_behavioural_incomplete",
    "stage2_uncounted_ran", "stage2_uncounted_points", "stage2_uncounted_rate",
    "stage2_uncounted_modules", "stage2_uncounted_complete",
    "stage3_uncounted_ran", "stage3_uncounted_points", "stage3_uncounted_models",
    "stage3_uncounted_survived",
    "harnesses_distinct",
}  # fmt: skip
# harbor.py, flatten(): per module, module_<id>_<field>; per adversary that survived or
# broke (an errored round is absent), adversary_<id>_survived.
MODULE_FIELDS = ("rate", "weight", "passed", "failed", "errored", "skipped", "ran")
# infra/swerefactor/scoring.py, Verdict.to_dict() and ModuleScore.to_dict().
SCORE_KEYS = {
    "schema", "task", "reward", "score", "max_score", "valid", "audit_gate", "behavioural",
    "verification", "stages_run", "unscored_stages", "blocked_by", "harnesses",
    "harness_error", "audit_failures", "notes", "uncredited", "metadata", "unscored",
    "uncounted",
}  # fmt: skip
MODULE_KEYS = {
    "id", "title", "weight", "rate", "complete", "status", "scored_weight", "checks", "note",
    "notes", "observations",
}  # fmt: skip
# infra/swerefactor/telemetry.py, for_run() / _sample() / _round().
TELEMETRY_KEYS = {"schema", "task", "model", "run", "stage1", "stage3"}
SAMPLE_KEYS = {"index", "driver", "model", "elapsed_sec", "calls", "input_tokens",
               "output_tokens", "credits"}  # fmt: skip
ROUND_KEYS = {"adversary", "driver", "model", "outcome", "elapsed_sec", "calls",
              "input_tokens", "output_tokens", "credits"}  # fmt: skip

MODULES = [
    {"id": "cli-Output", "weight": 1.0, "status": "ok", "rate": 1.0, "passed": 9, "scored": 9},
    {"id": "errors", "weight": 1.0, "status": "ok", "rate": 1.0, "passed": 3, "scored": 3},
]
ADVERSARIES = {"a01-lexer": "survived", "a02-api": "broken", "a03-x": "error"}
STAGES: dict[str, Any] = {
    "audit": {
        "harness": {"fingerprint": "aaaa1111"},
        "checks": [{"id": "no-python", "verdict": "pass"}],
        "metadata": {
            "driver": "scripted:m",
            "samples": [{"index": 1, "turns": 4, "wall_sec": 2.5,
                         "usage": {"input_tokens": 10, "output_tokens": 5}}],
        },
    },
    "behavioural": {"harness": {"fingerprint": "aaaa1111"}},
    "verification": {
        "harness": {"fingerprint": "bbbb2222"},
        "units": [
            {"id": a, "status": s, "model": "m", "driver": "scripted", "duration_sec": 3.0,
             "turns": 2, "input_tokens": 7, "output_tokens": 3}
            for a, s in ADVERSARIES.items()
        ],
    },
}


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _graded(tmp_path: Path) -> Path:
    envelope = score_run("pass", True, MODULES, ADVERSARIES, ScoringPolicy())
    harnesses = [{"stage": s, **d["harness"]} for s, d in STAGES.items()]
    doc = verdict_document(envelope, task="lang03-x", stages=STAGES, harnesses=harnesses)
    run_dir = tmp_path / "job" / "trial-1"
    run_dir.mkdir(parents=True)
    written = write_result_files(run_dir, doc)
    assert [p.name for p in written] == ["score.json", "summary.txt", "telemetry.json",
                                         "reward.json"]  # fmt: skip
    return run_dir


def test_reward_json_carries_the_published_keys(tmp_path: Path) -> None:
    reward = _read(_graded(tmp_path) / "reward.json")
    per_module = {f"module_{m}_{f}" for m in ("cli_output", "errors") for f in MODULE_FIELDS}
    per_adversary = {"adversary_a01_lexer_survived", "adversary_a02_api_survived"}
    assert set(reward) == REWARD_FIXED | per_module | per_adversary
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in reward.values())
    assert (reward["score"], reward["max_score"], reward["valid"]) == (50.0, 100.0, 0)
    assert reward["stage1_passed"] == 1 and reward["stage2_points"] == 40.0
    assert reward["stage3_survived"] == 1 and reward["stage3_broken"] == 1
    assert reward["adversary_a01_lexer_survived"] == 1
    assert reward["adversary_a02_api_survived"] == 0
    assert reward["module_cli_output_passed"] == 9 and reward["harnesses_distinct"] == 2


def test_score_summary_and_telemetry_have_the_published_shape(tmp_path: Path) -> None:
    run_dir = _graded(tmp_path)
    score = _read(run_dir / "score.json")
    assert set(score) >= SCORE_KEYS and score["schema"] == "swerefactor.score/1"
    assert score["audit_gate"] == "pass" and score["stages_run"] == [
        "audit", "behavioural", "verification"]  # fmt: skip
    for module in score["behavioural"]["modules"]:
        assert set(module) >= MODULE_KEYS
        assert set(module["checks"]) == {"passed", "failed", "errored", "skipped"}
    assert {"points", "models_total", "models_survived", "breaks"} <= set(score["verification"])
    assert score["uncredited"] == score["unscored"] == {} and score["uncounted"] == {}
    telemetry = _read(run_dir / "telemetry.json")
    assert set(telemetry) == TELEMETRY_KEYS and telemetry["schema"] == "swerefactor.telemetry/1"
    assert [set(s) for s in telemetry["stage1"]] == [SAMPLE_KEYS]
    assert all(set(r) == ROUND_KEYS for r in telemetry["stage3"]) and len(telemetry["stage3"]) == 3
    text = (run_dir / "summary.txt").read_text()
    assert text.startswith("lang03-x: 50 / 100  (NOT VALID") and "a02-api: broken" in text
    trials, problems = read_job(tmp_path / "job")
    assert problems == [] and len(trials) == 1, "the published-trial importer reads it"
    assert trials[0].score == 50.0 and trials[0].valid is False


def test_a_gate_fail_keeps_stage_two_as_unscored(tmp_path: Path) -> None:
    envelope = score_run("fail", True, MODULES, None, ScoringPolicy())
    doc = verdict_document(envelope, task="t", stages={"audit": {"checks": [
        {"id": "no-python", "verdict": "fail", "summary": "python left"}]}})  # fmt: skip
    write_result_files(tmp_path, doc)
    reward = _read(tmp_path / "reward.json")
    assert reward["blocked_by_audit_gate"] == 1 and reward["stage1_failures"] == 1
    assert (reward["stage2_scored"], reward["stage2_ran"]) == (0, 1)
    assert reward["stage2_uncounted_points"] == 40.0 and reward["stage2_uncounted_complete"] == 1
    score = _read(tmp_path / "score.json")
    assert score["uncounted"]["behavioural"]["modules"] == 2
    assert score["unscored"] == score["uncredited"]


def test_a_harness_error_still_writes_reward_json_with_valid_zero(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text('{"reward": 1.0}')
    write_result_files(tmp_path, error_document("t", "grading failed: boom"))
    reward = _read(tmp_path / "reward.json")
    assert (reward["valid"], reward["reward"], reward["score"]) == (0, 0.0, 0.0)
    assert reward["stage1_ran"] == 0 and set(reward) == REWARD_FIXED
    assert _read(tmp_path / "score.json")["harness_error"] == "grading failed: boom"
