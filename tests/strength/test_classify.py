"""A mutant's Stage II outcome from its suite run's module rows (issue 36): killed,
survived or invalid, counted by hand on made-up rows."""

from __future__ import annotations

from typing import Any

from srb_tui.service.grading.strength_baseline import Baseline
from srb_tui.service.grading.strength_stage import STAGE_I_SKIPPED, classify


def _row(module: str, weight: float, passed: int, failed: int = 0, errors: int = 0,
         status: str = "ok") -> dict[str, Any]:
    return {"id": module, "weight": weight, "passed": passed, "failed": failed,
            "errors": errors, "scored": passed + failed + errors, "status": status}


def _doc(*failing: tuple[str, str]) -> dict[str, Any]:
    return {"units": [{"id": "cli"}, {"id": "build"}],
            "checks": [{"module": m, "id": c, "verdict": "fail"} for m, c in failing]
            + [{"module": "cli", "id": "ok-1", "verdict": "pass"}]}


def test_a_scored_failure_kills_and_names_the_check() -> None:
    got = classify("m001", "ok", [_row("cli", 1, 9, failed=1), _row("build", 0, 0, 3)],
                   _doc(("cli", "case-7"), ("build", "b-1")))
    assert (got.outcome, got.failing, got.passed, got.scored) == (
        "killed", ["cli::case-7"], 9, 10)
    assert got.to_json()["stage_i"] == STAGE_I_SKIPPED


def test_every_scored_check_passing_survives_whatever_weight_zero_modules_do() -> None:
    got = classify("m002", "ok", [_row("cli", 1, 10), _row("build", 0, 0, 4)], _doc())
    assert got.outcome == "survived" and got.reason == "all 10 scored checks passed"


def test_a_mutant_that_breaks_everything_or_cannot_run_is_invalid() -> None:
    every = classify("m003", "ok", [_row("cli", 1, 0, failed=10)], _doc())
    assert every.outcome == "invalid" and "breaks everything" in every.reason
    whole = classify("m004", "ok", [_row("cli", 1, 5, failed=1), _row("io", 1, 0, errors=1,
                                                                     status="error")], _doc())
    assert whole.outcome == "invalid" and "io errored as a whole" in whole.reason
    stage = classify("m005", "error", [], {"notes": ["the image has no python3"]})
    assert stage.outcome == "invalid" and "the image has no python3" in stage.reason


def test_the_baseline_forgives_what_state_a_fails_and_finds_a_mutant_that_cannot_start(
) -> None:
    base = Baseline(10.0, frozenset({"cli::stale"}), frozenset({"cli::ok-1"}))
    assert base.limit_sec == 60.0
    assert Baseline.from_json(base.to_json()) == base and Baseline.from_json({}) is None
    # a check State A fails itself (a stale expectation) kills no mutant
    doc = _doc(("cli", "stale"))
    got = classify("m006", "ok", [_row("cli", 1, 9, failed=1)], doc, base)
    assert got.outcome == "survived" and "1 State A fails itself" in got.reason
    assert classify("m006", "ok", [_row("cli", 1, 9, failed=1)], doc).outcome == "killed"
    # passing only what a dead State A passes (an error exit) is not a kill: invalid
    dead = classify("m007", "ok", [_row("cli", 1, 1, failed=2)],
                    _doc(("cli", "case-1"), ("cli", "case-2")), base)
    assert dead.outcome == "invalid" and "cannot start" in dead.reason
    # one more pass than the dead trees: a kill, with the stale check left out of it
    alive = {"units": [], "checks": [
        {"module": "cli", "id": "ok-1", "verdict": "pass"},
        {"module": "cli", "id": "ok-2", "verdict": "pass"},
        {"module": "cli", "id": "stale", "verdict": "fail"},
        {"module": "cli", "id": "case-3", "verdict": "fail"}]}
    kill = classify("m008", "ok", [_row("cli", 1, 2, failed=2)], alive, base)
    assert (kill.outcome, kill.failing, kill.reason) == (
        "killed", ["cli::case-3"], "1 of 4 scored checks failed")
