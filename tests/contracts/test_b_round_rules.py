"""Stage III round rules as published (issue 11 point 5f): a model outage that outlives the
driver's retries is resumed with backoff inside the round's budget; a round whose tool calls
mostly failed, or whose candidate runs never started, is an error, not a survival.

The model is a fixed-turn test driver (no network); the channel is an in-process stand-in
that answers tool calls the way srb's container channel shapes its replies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srb_tui.drivers.base import DriverError, RetryPolicy, ToolCall
from srb_tui.drivers.loop import deadline_in, run_adversary_round
from srb_tui.service.grading.stages.round_rules import never_started, not_attacked

from ..drivers.fixed_turns import TurnsDriver, turn


class StandInChannel:
    """A STAND-IN for the container's tool channel: `fetch_source` fails when asked to."""

    def __init__(self, failing: bool) -> None:
        self.failing = failing

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if self.failing:
            return {"ok": False, "error": "refused by the toolbox"}
        return {"ok": True, "result": {"lines": ["1: print(42)"]}}

    async def aclose(self) -> None:
        return None


def read(n: int) -> ToolCall:
    return ToolCall(f"c{n}", "fetch_source", {"path": "original:tool.py"})


GIVE_UP = ToolCall("r", "report", {"found": False, "summary": "nothing found"})


async def test_an_outage_is_resumed_with_backoff_inside_the_budget() -> None:
    outage = DriverError("503 from the upstream", retryable=True)
    driver = TurnsDriver([outage, outage, turn(read(1)), turn(GIVE_UP)])
    driver.retry = RetryPolicy(max_attempts=1)
    record = await run_adversary_round(
        driver, StandInChannel(False), "system", "go", adversary_id="a1",
        deadline=deadline_in(60), resume_backoff_sec=0.01,
    )  # fmt: skip
    assert record.status == "gave_up" and record.resumes == 2
    assert [e["kind"] for e in record.transcript].count("resume") == 2
    assert record.to_dict()["resumes"] == 2

    fatal = TurnsDriver([DriverError("401 bad key", retryable=False)])
    done = await run_adversary_round(
        fatal, StandInChannel(False), "system", "go", adversary_id="a2", resume_backoff_sec=0.01
    )
    assert done.status == "error" and done.resumes == 0, "a non-retryable error is not resumed"


async def test_a_round_refused_by_its_toolbox_is_not_a_survival() -> None:
    driver = TurnsDriver([turn(read(1), read(2), read(3)), turn(GIVE_UP)])
    record = await run_adversary_round(
        driver, StandInChannel(True), "system", "go", adversary_id="a1"
    )
    assert record.status == "gave_up"
    assert (record.tool_calls, record.tool_errors) == (4, 3)
    reason = not_attacked(record.tool_calls, record.tool_errors, record.tries)
    assert reason.startswith("3 of its 4 tool calls failed (75%)")
    healthy = TurnsDriver([turn(read(1), read(2)), turn(GIVE_UP)])
    fine = await run_adversary_round(healthy, StandInChannel(False), "s", "go", adversary_id="b")
    assert not_attacked(fine.tool_calls, fine.tool_errors, fine.tries) == ""


def test_a_round_whose_candidates_never_started_is_an_error() -> None:
    dead = {"exit_code": 127, "timed_out": False, "stdout_tail": "",
            "stderr_tail": "bash: run-candidate.sh: No such file or directory"}  # fmt: skip
    failing = {"exit_code": 1, "timed_out": False, "stdout_tail": "", "stderr_tail": "expected 42"}
    assert never_started(dead) and not never_started(failing)
    tries = [{"reply": {"ok": True, "result": {"outcome": "invalid", "runs": [dead, dead]}}}]
    assert "none of its 2 candidate run(s) started" in not_attacked(1, 0, tries)
    mixed = [*tries, {"reply": {"ok": True, "result": {"runs": [failing]}}}]
    assert not_attacked(2, 0, mixed) == ""
    assert not_attacked(0, 0, []) == "", "writing no candidate is not a harness fault"
