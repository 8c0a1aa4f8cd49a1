"""Scripted driver: small reviewer programs speaking the JSON-lines protocol, driven by the
same review loop as a model, with the grader's tools loop (run on the host) as the channel.
Also the demo task's own scripted reviewer against the demo submissions."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from srb_tui.drivers.base import DriverConfigError
from srb_tui.drivers.channel import SubprocessToolChannel
from srb_tui.drivers.loop import deadline_in, run_review
from srb_tui.drivers.scripted import ScriptedDriver

from .conftest import GATES, grader_argv

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo01-csvtab-python-to-node"
DEMO_REVIEWER = DEMO / "tests" / "audit" / "lib" / "scripted_reviewer.py"

PRELUDE = """
import json, sys
LOG = open(sys.argv[1], "a", encoding="utf-8")
def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    LOG.write(line); LOG.flush()
    return json.loads(line)
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n"); sys.stdout.flush()
"""

GOOD = {
    "summary": "still Python",
    "gates": [
        {
            "id": "no-python",
            "verdict": "fail",
            "confidence": 1.0,
            "reasoning": "calc/core.py",
            "evidence": [{"path": "submission:calc/core.py", "line": 1, "quote": "def add(a, b):"}],
        },
        {
            "id": "node-present",
            "verdict": "pass",
            "confidence": 1.0,
            "reasoning": "ok",
            "evidence": [],
        },
    ],
}
MISSING_GATE = {"summary": "half", "gates": [GOOD["gates"][1]]}


def program(tmp_path: Path, body: str) -> tuple[list[str], Path]:
    script = tmp_path / "reviewer.py"
    script.write_text(PRELUDE + textwrap.dedent(body), encoding="utf-8")
    log = tmp_path / "received.jsonl"
    return [sys.executable, str(script), str(log)], log


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


async def test_invalid_review_is_rejected_once_then_accepted(
    tmp_path: Path, channel: SubprocessToolChannel
) -> None:
    argv, log = program(
        tmp_path,
        f"""
        start = read()
        print("this is not json", flush=True)
        read()                                   # the error reply
        send({{"tool": "list_dir", "args": {{"path": "submission:", "depth": 2}}}})
        read()
        send({{"submit_review": {json.dumps(MISSING_GATE)}}})
        read()                                   # rejection
        send({{"submit_review": {json.dumps(GOOD)}}})
        read()                                   # accepted
        """,
    )
    driver = ScriptedDriver(argv)
    sample = await run_review(driver, channel, "system text", "user text", GATES, sample=2)
    await driver.aclose()

    messages = received(log)
    start, error, listing, rejection, accepted = messages
    assert start["type"] == "start" and start["role"] == "reviewer" and start["sample"] == 2
    assert start["prompt"] == "user text" and start["system"] == "system text"
    assert [g["id"] for g in start["gates"]] == ["no-python", "node-present"]
    assert start["tools"] == ["list_dir", "fetch_source", "search", "diff"]
    assert error["type"] == "error" and "not valid JSON" in str(error["error"])
    assert listing["type"] == "tool_result" and listing["ok"] is True
    paths = [e["path"] for e in listing["result"]["entries"]]
    assert "submission:lib/core.js" in paths
    assert rejection["type"] == "review_rejected"
    assert "gate 'no-python' is missing" in str(rejection["message"])
    assert accepted == {"type": "review_accepted"}

    assert sample.status == "accepted" and sample.rejections == 1
    assert sample.review == GOOD
    assert sample.turns == 3 and sample.tool_calls == 3
    assert sample.usage.total_tokens == 0
    assert sample.grade is not None and sample.grade.gates["no-python"].recorded == "fail"
    kinds = [event["kind"] for event in sample.transcript]
    assert kinds.count("submit_review") == 2
    decisions = [e["decision"] for e in sample.transcript if e["kind"] == "submit_review"]
    assert decisions == ["rejected", "accepted"]


async def test_invalid_twice_makes_the_sample_unusable(
    tmp_path: Path, channel: SubprocessToolChannel
) -> None:
    argv, log = program(
        tmp_path,
        f"""
        read()
        for _ in range(3):
            send({{"submit_review": {json.dumps(MISSING_GATE)}}})
            read()
        """,
    )
    driver = ScriptedDriver(argv)
    sample = await run_review(driver, channel, "s", "u", GATES)
    await driver.aclose()
    assert sample.status == "unusable" and sample.ending == "invalid_twice"
    assert sample.review is None and sample.grade is None
    assert "still invalid after one resubmit" in sample.reason
    assert not sample.harness_fault
    types = [m["type"] for m in received(log)]
    assert types == ["start", "review_rejected", "review_unusable"]


async def test_program_that_exits_without_review(
    tmp_path: Path, channel: SubprocessToolChannel
) -> None:
    argv, _ = program(
        tmp_path,
        """
        read()
        sys.stderr.write("reviewer crashed: no gates\\n")
        sys.exit(3)
        """,
    )
    driver = ScriptedDriver(argv)
    sample = await run_review(driver, channel, "s", "u", GATES)
    await driver.aclose()
    assert sample.ending == "no_submission" and sample.status == "unusable"
    assert "exited (status 3)" in sample.reason and "reviewer crashed" in sample.reason


async def test_silent_program_hits_the_deadline(
    tmp_path: Path, channel: SubprocessToolChannel
) -> None:
    argv, _ = program(tmp_path, "read()\nsys.stdin.read()\n")
    driver = ScriptedDriver(argv)
    sample = await run_review(driver, channel, "s", "u", GATES, deadline=deadline_in(0.5))
    await driver.aclose()
    assert sample.ending == "deadline" and sample.status == "unusable"
    assert 0.4 < sample.wall_sec < 10


def test_scripted_needs_a_program_and_known_options() -> None:
    with pytest.raises(DriverConfigError, match="needs a program"):
        ScriptedDriver([])
    with pytest.raises(DriverConfigError, match="unknown option 'timeout'"):
        ScriptedDriver(["true"], options={"timeout": 3})


DEMO_GATES = [
    "no-python-sources",
    "no-interpreter-dependency",
    "node-present",
    "node-is-primary",
    "no-embedded-reference",
]


@pytest.mark.parametrize(("submission", "failed"), [("reference", set()), ("untouched", None)])
async def test_demo_scripted_reviewer(submission: str, failed: set[str] | None) -> None:
    original = DEMO / "submissions" / "untouched"
    tree = DEMO / "submissions" / submission
    driver = ScriptedDriver([sys.executable, str(DEMO_REVIEWER)])
    async with SubprocessToolChannel(grader_argv(original, tree), timeout_sec=60) as chan:
        sample = await run_review(driver, chan, "audit", "review", DEMO_GATES)
    await driver.aclose()
    assert sample.status == "accepted", sample.reason
    assert sample.grade is not None
    recorded = {gid for gid, v in sample.grade.gates.items() if v.recorded == "fail"}
    if failed is not None:
        assert recorded == failed
    else:
        assert "no-python-sources" in recorded  # State A handed back as-is is not a migration
        assert not any(v.downgraded for v in sample.grade.gates.values())
