"""``srb run`` SIGKILLed at a lifecycle boundary, then ``srb resume``: the run ends where an
uninterrupted run ends, with every log line exactly once, one score, and no half-written
JSON file in the run folder.

The kill is deterministic: the test-only fault point ``SRB_FAULT_KILL_AT`` (see
``srb_tui/faultpoint.py``) makes srb SIGKILL itself right after the named boundary is
durably written. The default suite runs one agent-phase case and one scoring case; the
whole sweep over every boundary runs with ``SRB_FULL_FAULTS=1``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.faults.harness import (
    FULL,
    LOUD_AGENT,
    LOUD_LINES,
    Outcome,
    broken_json_files,
    kill_at,
    line_damage,
    only_run,
    remove_run_containers,
    run_argv,
    run_row,
    score_events,
    srb,
    stdout_lines,
)

pytestmark = pytest.mark.docker

AGENT_POINTS = ["status:preparing", "status:agent", "agent:started", "status:collecting",
                "collect:done"]
GRADING_POINTS = ["status:audit", "status:behavioural", "status:verification",
                  "scoring:files", "scoring:stored"]
GRADING_AGENT = "replay:reference"  # passes the gate, so Stage III runs and is scored


def _resume(state: Path, *, grade: bool) -> dict[str, Any]:
    done = srb(state, "resume", "--json", *([] if grade else ["--no-grade"]))
    assert done.returncode == 0, done.stderr[-3000:]
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _judge(state: Path, run_id: str, point: str, expected: list[str],
           want: dict[str, Any]) -> Outcome:
    row = run_row(state, run_id)
    lost, dup = line_damage(stdout_lines(state, run_id), expected)
    bad = broken_json_files(state / "runs" / run_id)
    wrong = [f"{k}={row[k]!r} (want {v!r})" for k, v in want.items() if row[k] != v]
    if want.get("status") == "scored" and score_events(state, run_id) != 1:
        wrong.append(f"{score_events(state, run_id)} score events")
    result = "wrong" if wrong or bad or lost or dup else (
        "resumed" if row["valid"] in (1, None) else "invalid")
    return Outcome("sigkill", point, result, lost, dup, "; ".join(wrong + bad)).record()


def _agent_case(tmp_path: Path, point: str) -> None:
    state = tmp_path / "state"
    kill_at(state, point, LOUD_AGENT, grade=False)
    run_id = only_run(state)
    try:
        _resume(state, grade=False)
        outcome = _judge(state, run_id, point, LOUD_LINES,
                         {"status": "collecting", "stop_reason": "completed"})
        assert outcome.result == "resumed", outcome
        assert (state / "runs" / run_id / "submission" / "csvtab").is_dir()
        # the agent container was removed after collection, and the store says so
        removed = [r for r in run_row_containers(state, run_id) if r[0] == "agent"]
        assert removed and all(r[1] for r in removed), removed
    finally:
        remove_run_containers(run_id)


def run_row_containers(state: Path, run_id: str) -> list[tuple[Any, ...]]:
    from tests.faults.harness import q

    return q(state / "srb.sqlite3", "SELECT role, removed_at FROM containers WHERE run_id = ?",
             (run_id,))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What an uninterrupted run of the grading agent ends with (score, valid, lines)."""
    state = tmp_path_factory.mktemp("baseline") / "state"
    done = srb(state, *run_argv(GRADING_AGENT))
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = only_run(state)
    row = run_row(state, run_id)
    return {"score": row["score"], "valid": row["valid"], "lines": stdout_lines(state, run_id)}


def _grading_case(tmp_path: Path, point: str, baseline: dict[str, Any]) -> None:
    state = tmp_path / "state"
    kill_at(state, point, GRADING_AGENT)
    run_id = only_run(state)
    try:
        _resume(state, grade=True)
        outcome = _judge(state, run_id, point, baseline["lines"],
                         {"status": "scored", "score": baseline["score"],
                          "valid": baseline["valid"]})
        assert outcome.result in ("resumed", "invalid") and outcome.result != "wrong", outcome
        for name in ("score.json", "reward.json"):
            doc = json.loads((state / "runs" / run_id / name).read_text())
            assert doc  # present and whole
        assert json.loads((state / "runs" / run_id / "score.json").read_text()
                          )["score"] == baseline["score"]
    finally:
        remove_run_containers(run_id)


@pytest.mark.parametrize("point", AGENT_POINTS if FULL else ["agent:started"])
def test_sigkill_in_the_agent_phase_then_resume(tmp_path: Path, point: str) -> None:
    _agent_case(tmp_path, point)


def test_sigkill_after_the_score_is_stored_resume_scores_once(tmp_path: Path) -> None:
    """The representative scoring case: killed after the score reached the store but
    before the run became ``scored``; resume finishes it without grading a second time."""
    state = tmp_path / "state"
    kill_at(state, "scoring:stored", GRADING_AGENT)
    run_id = only_run(state)
    try:
        before = json.loads((state / "runs" / run_id / "score.json").read_text())
        _resume(state, grade=True)
        row = run_row(state, run_id)
        outcome = _judge(state, run_id, "scoring:stored", stdout_lines(state, run_id),
                         {"status": "scored", "score": before["score"]})
        assert outcome.result != "wrong", outcome
        assert row["score"] == before["score"] and score_events(state, run_id) == 1
        stages = run_stage_count(state, run_id)
        assert stages == {"audit": 1, "behavioural": 1, "verification": 1}, stages
    finally:
        remove_run_containers(run_id)


def run_stage_count(state: Path, run_id: str) -> dict[str, int]:
    from tests.faults.harness import q

    rows = q(state / "srb.sqlite3", "SELECT payload FROM events WHERE run_id = ? AND "
             "kind = 'stage_finished'", (run_id,))
    counts: dict[str, int] = {}
    for (payload,) in rows:
        stage = json.loads(payload)["stage"]
        counts[stage] = counts.get(stage, 0) + 1
    return counts


@pytest.mark.skipif(not FULL, reason="the full boundary sweep runs with SRB_FULL_FAULTS=1")
@pytest.mark.parametrize("point", GRADING_POINTS)
def test_sigkill_at_every_grading_boundary(tmp_path: Path, point: str,
                                           baseline: dict[str, Any]) -> None:
    _grading_case(tmp_path, point, baseline)
