"""The review loop with a model-shaped driver that replays fixed turns (`TurnsDriver`), over
the grader's real tools loop: nudges, several calls per turn, unknown tools, unreadable
arguments, turn limit, driver and channel faults, and the evidence re-check."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from srb_tui.drivers.base import DriverError, ToolCall, ToolResults, UserText
from srb_tui.drivers.channel import SubprocessToolChannel
from srb_tui.drivers.loop import run_review

from .conftest import GATES
from .fixed_turns import TurnsDriver, turn


def review(verdict: str, quote: str) -> dict[str, Any]:
    evidence = [{"path": "submission:calc/core.py", "line": 2, "quote": quote}]
    return {
        "summary": "s",
        "gates": [
            {
                "id": "no-python",
                "verdict": verdict,
                "confidence": 1,
                "reasoning": "r",
                "evidence": evidence,
            },
            {
                "id": "node-present",
                "verdict": "pass",
                "confidence": 1,
                "reasoning": "r",
                "evidence": [],
            },
        ],
    }


async def test_several_calls_in_one_turn_are_answered_in_order(
    channel: SubprocessToolChannel,
) -> None:
    driver = TurnsDriver(
        [
            turn(
                ToolCall("a", "search", {"pattern": "return", "root": "both"}),
                ToolCall("b", "rm_rf", {}),
                ToolCall("c", "fetch_source", {}, error="arguments are not valid JSON"),
                ToolCall("d", "diff", {"path": "calc/core.py"}),
            ),
            turn(ToolCall("e", "submit_review", review("fail", "return a + b"))),
        ]
    )
    sample = await run_review(driver, channel, "s", "u", GATES)
    assert sample.status == "accepted"
    answer = driver.requests[1][-1]
    assert isinstance(answer, ToolResults)
    assert [r.call_id for r in answer.results] == ["a", "b", "c", "d"]
    search, unknown, unreadable, diff = answer.results
    hits = json.loads(search.content)["matches"]
    assert {h["path"] for h in hits} == {
        "original:calc/core.py",
        "submission:calc/core.py",
        "submission:lib/core.js",
    }
    assert unknown.is_error and "tool 'rm_rf' is not offered" in unknown.content
    assert unreadable.is_error and "not valid JSON" in unreadable.content
    assert json.loads(diff.content)["status"] == "same"
    assert driver.ended == [(sample.session, {"type": "review_accepted"})]
    assert (sample.usage.input_tokens, sample.usage.output_tokens) == (20, 10)


async def test_tool_errors_from_the_grader_reach_the_model(
    channel: SubprocessToolChannel,
) -> None:
    driver = TurnsDriver(
        [
            turn(ToolCall("a", "fetch_source", {"path": "submission:../../etc/passwd"})),
            turn(ToolCall("b", "submit_review", review("pass", ""))),
        ]
    )
    sample = await run_review(driver, channel, "s", "u", GATES)
    result = driver.requests[1][-1]
    assert isinstance(result, ToolResults)
    assert result.results[0].is_error
    assert "outside its root" in result.results[0].content
    event = next(e for e in sample.transcript if e["kind"] == "tool")
    assert event["ok"] is False and "outside its root" in event["error"]


async def test_text_only_turns_are_nudged_then_given_up(channel: SubprocessToolChannel) -> None:
    driver = TurnsDriver([turn(text="I think it passes.", stop="end")] * 3)
    sample = await run_review(driver, channel, "s", "u", GATES, max_nudges=2)
    assert sample.ending == "no_submission" and sample.status == "unusable"
    assert "without calling submit_review" in sample.reason
    nudges = [m for m in driver.requests[2] if isinstance(m, UserText)]
    assert len(nudges) == 3  # the user prompt and two nudges
    assert "call submit_review" in nudges[1].text


async def test_ungrounded_fail_is_downgraded(channel: SubprocessToolChannel) -> None:
    driver = TurnsDriver([turn(ToolCall("a", "submit_review", review("fail", "not in file")))])
    sample = await run_review(driver, channel, "s", "u", GATES)
    assert sample.status == "accepted" and sample.grade is not None
    verdict = sample.grade.gates["no-python"]
    assert verdict.reported == "fail" and verdict.recorded == "pass" and verdict.downgraded
    assert "quote not found" in verdict.evidence[0]["reason"]


async def test_turn_limit(channel: SubprocessToolChannel) -> None:
    looping = [turn(ToolCall(f"c{i}", "list_dir", {"path": "original:"})) for i in range(5)]
    driver = TurnsDriver(looping)
    sample = await run_review(driver, channel, "s", "u", GATES, max_turns=3)
    assert sample.ending == "max_turns" and sample.turns == 3 and sample.tool_calls == 3


async def test_fatal_driver_error_is_a_harness_fault(channel: SubprocessToolChannel) -> None:
    driver = TurnsDriver(
        [
            turn(ToolCall("a", "list_dir", {"path": "submission:"})),
            DriverError("turns:fixed: the API refused the credentials (HTTP 401)", status=401),
        ]
    )
    sample = await run_review(driver, channel, "s", "u", GATES)
    assert sample.ending == "driver_error" and sample.harness_fault
    assert "HTTP 401" in sample.reason and sample.turns == 1


async def test_retryable_driver_errors_are_retried_by_complete(
    channel: SubprocessToolChannel,
) -> None:
    driver = TurnsDriver(
        [
            DriverError("busy", retryable=True),
            turn(ToolCall("a", "submit_review", review("pass", ""))),
        ]
    )
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    driver._sleep = no_wait
    sample = await run_review(driver, channel, "s", "u", GATES)
    assert sample.status == "accepted" and len(waits) == 1
    assert sample.transcript[0]["attempts"] == 2


async def test_channel_that_dies_is_a_harness_fault(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(5)"]
    driver = TurnsDriver([turn(ToolCall("a", "list_dir", {"path": "submission:"}))])
    async with SubprocessToolChannel(argv, timeout_sec=10) as dead:
        sample = await run_review(driver, dead, "s", "u", GATES)
    assert sample.ending == "channel_error" and sample.harness_fault
    assert "exited (exit status 5)" in sample.reason
