"""Funnel and leaderboard over many runs."""

from __future__ import annotations

from srb_tui.scoring import ScoredRun, ScoringPolicy, funnel, leaderboard, score_run
from srb_tui.scoring.aggregate import funnel_by

POLICY = ScoringPolicy()
MODS = [{"id": "m", "weight": 1.0, "status": "ok", "rate": 1.0, "passed": 1, "scored": 1}]
SIX = {f"a{i}": "survived" for i in range(6)}


def record(
    run_id: str,
    agent: str,
    model: str,
    audit: str,
    complete: bool | None,
    advs: dict[str, str] | None = None,
    task: str = "t1",
) -> ScoredRun:
    env = score_run(audit, complete, MODS, advs, POLICY)
    return ScoredRun.from_score(env.to_json(), run_id=run_id, task=task, agent=agent, model=model)


RUNS = [
    record("r1", "claude-code", "opus", "pass", True, SIX),  # accepted 100
    record("r2", "claude-code", "opus", "pass", True, {**SIX, "a0": "broken"}),  # 90, stopped III
    record("r3", "claude-code", "opus", "fail", True),  # blindness 0
    record("r4", "claude-code", "opus", "error", None),  # invalid
    record("r5", "codex", "gpt", "pass", False, task="t2"),  # stopped II
    record("r6", "codex", "gpt", "fail", False, task="t2"),  # stopped I
    record("r7", "codex", "gpt", "pass", True, {**SIX, "a5": "error"}, task="t2"),  # invalid
]


def test_funnel_counts() -> None:
    result = funnel(RUNS)
    assert (result.runs, result.invalid, result.valid) == (7, 2, 5)
    assert result.migrated == 3
    assert result.all_tests_pass == 3
    assert result.blindness == 1
    assert result.reached_verification == 2
    assert result.accepted == 1
    exclusive = (
        result.stopped_audit,
        result.blindness,
        result.stopped_behavioural,
        result.stopped_verification,
        result.accepted,
    )
    assert exclusive == (1, 1, 1, 1, 1)
    assert sum(exclusive) == result.valid


def test_funnel_by_task() -> None:
    groups = funnel_by(RUNS, key=lambda r: r.task)
    assert list(groups) == ["t1", "t2"]
    assert groups["t1"].accepted == 1 and groups["t2"].accepted == 0
    assert groups["t2"].invalid == 1


def test_leaderboard_means_over_valid_runs() -> None:
    rows = leaderboard(RUNS)
    assert [(r.agent, r.model) for r in rows] == [("claude-code", "opus"), ("codex", "gpt")]
    top = rows[0]
    assert (top.runs, top.valid_runs, top.accepted, top.blindness) == (4, 3, 1, 1)
    assert top.mean_score == round((100 + 90 + 0) / 3, 4)
    assert rows[1].mean_score == 0.0 and rows[1].valid_runs == 2
    only_invalid = leaderboard([record("x", "a", "m", "error", None)])
    assert only_invalid[0].mean_score is None
