"""score_run over every gating combination, invalid cases, and the files it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srb_tui.scoring import ModuleScore, ScoreEnvelope, ScoringPolicy, score_run
from srb_tui.scoring.published import verdict_document
from srb_tui.scoring.result_files import write_result_files

POLICY = ScoringPolicy()
MODULES = [
    {"id": "build", "weight": 1.0, "status": "ok", "rate": 1.0, "passed": 3, "scored": 3},
    {"id": "cli", "weight": 3.0, "status": "ok", "rate": 0.5, "passed": 1, "scored": 2},
]
ALL_SURVIVE = {f"a{i}": "survived" for i in range(1, 7)}


def adversaries(*outcomes: str) -> dict[str, str]:
    return {f"a{i}": outcome for i, outcome in enumerate(outcomes, start=1)}


# (audit, complete, adversaries, verification_enabled) -> (score, valid, blocked_by, credited)
TABLE = [
    ("pass", True, ALL_SURVIVE, True, 100.0, True, None, True),
    (
        "pass",
        True,
        adversaries(*["survived"] * 5, "broken"),
        True,
        90.0,
        True,
        "verification",
        True,
    ),
    ("pass", True, adversaries(*["broken"] * 6), True, 40.0, True, "verification", True),
    (
        "pass",
        True,
        adversaries("survived", "survived", "broken", "error", "survived", "survived"),
        True,
        80.0,
        False,
        "verification",
        True,
    ),
    ("pass", True, adversaries(*["survived"] * 4), True, 80.0, False, "verification", True),
    ("pass", True, {}, True, 40.0, False, "verification", True),
    ("pass", True, None, False, 40.0, True, None, True),
    ("pass", False, None, True, 0.0, True, "behavioural", False),
    ("pass", None, None, True, None, False, "behavioural", False),
    ("fail", True, None, True, 0.0, True, "audit", False),
    ("fail", False, None, True, 0.0, True, "audit", False),
    ("fail", None, None, True, 0.0, True, "audit", False),
    ("error", True, None, True, None, False, "audit", False),
    ("error", None, None, True, None, False, "audit", False),
]


@pytest.mark.parametrize(
    ("audit", "complete", "advs", "enabled", "score", "valid", "blocked", "credited"), TABLE
)
def test_gating_table(
    audit: str,
    complete: bool | None,
    advs: dict[str, str] | None,
    enabled: bool,
    score: float | None,
    valid: bool,
    blocked: str | None,
    credited: bool,
) -> None:
    env = score_run(audit, complete, MODULES, advs, POLICY, verification_enabled=enabled)
    assert env.score == score
    assert env.valid is valid
    assert env.blocked_by == blocked
    assert env.behavioural["credited"] is credited
    assert (env.harness_error is None) is valid
    assert env.reward == (None if score is None else score / 100)
    reachable = {None, 0.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0}
    assert env.score in reachable


def test_stage_iii_never_runs_unless_i_and_ii_pass() -> None:
    for audit, complete in (("fail", True), ("pass", False), ("error", True), ("pass", None)):
        env = score_run(audit, complete, MODULES, ALL_SURVIVE, POLICY)
        assert env.verification["ran"] is False and env.verification["points"] == 0.0
        assert env.verification["models_survived"] == 0


def test_blindness_is_shown_uncredited() -> None:
    env = score_run("fail", True, MODULES, None, POLICY)
    assert env.behavioural["complete"] is True and env.behavioural["points"] == 0.0
    assert env.behavioural["rate"] == pytest.approx((1.0 + 3 * 0.5) / 4)
    assert [m["id"] for m in env.behavioural["modules"]] == ["build", "cli"]
    assert "blindness: every fixed check passes but the audit failed" in env.notes


def test_infrastructure_faults_are_never_a_zero() -> None:
    audit_down = score_run(
        "error", None, [], None, POLICY, harness_errors={"audit": "reviewer endpoint unreachable"}
    )
    assert audit_down.score is None and audit_down.harness_error == "reviewer endpoint unreachable"
    suite_down = score_run("pass", None, [], None, POLICY)
    assert suite_down.score is None and suite_down.harness_error == "Stage II could not measure"
    one_round = score_run("pass", True, MODULES, adversaries(*["survived"] * 5, "error"), POLICY)
    assert one_round.score == 90.0 and not one_round.valid
    assert one_round.harness_error == "1 adversary round(s) errored; measured points are kept"


def test_breaks_and_adversary_detail() -> None:
    outcomes = adversaries("broken", *["survived"] * 5)
    env = score_run("pass", True, MODULES, outcomes, POLICY)
    assert env.verification["breaks"] == [{"adversary": "a1"}]
    assert env.verification["models_survived"] == 5 and env.verification["points"] == 50.0
    detailed = score_run(
        "pass",
        True,
        MODULES,
        outcomes,
        POLICY,
        breaks=[{"adversary": "a1", "candidate": "c3", "reason": "upheld"}],
    )
    assert detailed.verification["breaks"][0]["candidate"] == "c3"


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="audit outcome must be one of"):
        score_run("maybe", True, [], None, POLICY)
    with pytest.raises(ValueError, match="adversary 'x': outcome 'won'"):
        score_run("pass", True, [], {"x": "won"}, POLICY)


def test_module_score_from_stage_unit() -> None:
    unit = {
        "id": "m",
        "weight": 2,
        "status": "timeout",
        "rate": 0.0,
        "passed": 5,
        "scored": 9,
        "message": "timed out",
    }
    assert ModuleScore.from_unit(unit) == ModuleScore("m", 2.0, "timeout", 0.0, 5, 9)


def _write(folder: Path, env: ScoreEnvelope) -> list[Path]:
    """The run's files as the ladder writes them (result_files over the verdict document)."""
    return write_result_files(folder, verdict_document(env, task="t", stages={}))


def test_score_json_shape_and_reward_written_last(tmp_path: Path) -> None:
    env = score_run("pass", True, MODULES, adversaries("broken", *["survived"] * 5), POLICY)
    assert list(env.to_json()) == [
        "reward",
        "score",
        "max_score",
        "valid",
        "audit_gate",
        "behavioural",
        "verification",
        "blocked_by",
        "harness_error",
        "notes",
    ]
    written = _write(tmp_path, env)
    assert written[-1].name == "reward.json" and written[0].name == "score.json"
    assert all(written[-1].stat().st_mtime_ns >= p.stat().st_mtime_ns for p in written)
    score = json.loads((tmp_path / "score.json").read_text())
    assert set(env.to_json()) <= set(score), "srb's envelope fields stand in score.json"
    assert {"points", "rate", "modules"} <= set(score["behavioural"])
    assert {"points", "models_total", "models_survived", "breaks"} <= set(score["verification"])
    assert score["reward"] == 0.9 and score["verification"]["models_total"] == 6
    reward = json.loads((tmp_path / "reward.json").read_text())
    assert (reward["reward"], reward["score"], reward["max_score"], reward["valid"]) == (
        0.9, 90.0, 100.0, 1)  # fmt: skip
    assert (reward["stage1_passed"], reward["stage2_points"], reward["stage2_rate"]) == (
        1, 40.0, 0.625)  # fmt: skip
    assert (reward["stage3_points"], reward["stage3_survived"], reward["stage3_broken"]) == (
        50.0, 5, 1)  # fmt: skip
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in reward.values())


def test_invalid_result_replaces_a_stale_reward_with_valid_zero(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text('{"reward": 1.0}')
    env = score_run("error", None, [], None, POLICY)
    assert env.valid is False and env.score is None and env.reward is None
    _write(tmp_path, env)
    score = json.loads((tmp_path / "score.json").read_text())
    assert score["valid"] is False and score["harness_error"] == env.harness_error
    reward = json.loads((tmp_path / "reward.json").read_text())
    assert (reward["valid"], reward["reward"], reward["score"]) == (0, 0.0, 0.0)


def test_accepted_property() -> None:
    assert score_run("pass", True, MODULES, ALL_SURVIVE, POLICY).accepted is True
    broken = score_run("pass", True, MODULES, adversaries("broken", *["survived"] * 5), POLICY)
    assert broken.accepted is False
    assert isinstance(broken, ScoreEnvelope)
