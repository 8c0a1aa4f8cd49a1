"""Stage III rounds through `run_adversary_round`: reading tools go to the grader's tools loop
(host subprocess), `try_test` to the grader's real candidate adjudication on both trees."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import textwrap
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from srb_tui.drivers.base import ToolCall, ToolResults
from srb_tui.drivers.channel import SubprocessToolChannel
from srb_tui.drivers.loop import run_adversary_round
from srb_tui.drivers.scripted import ScriptedDriver
from srb_tui.grader.candidates.judge import adjudicate
from srb_tui.grader.candidates.records import CandidateSpec

from .conftest import grader_argv
from .fixed_turns import TurnsDriver, turn

CHECK = (
    'cd "$SRB_TARGET" && python3 -c "import sys; sys.path.insert(0, \'.\'); '
    'from calc.core import add; sys.exit(0 if add(2, 2) == 4 else 1)"\n'
)
SPEC = CandidateSpec(
    command=("sh", "-c", 'exec sh "$SRB_CANDIDATE"', "candidate"),
    reruns=2,
    timeout_sec=30,
)


class StageChannel:
    """What the runner provides in the container, on the host: reading tools through the
    grader's tools loop, try_test through the grader's adjudication of a candidate folder."""

    def __init__(self, tools: SubprocessToolChannel, original: Path, submission: Path) -> None:
        self.tools = tools
        self.original = original
        self.submission = submission
        self.tried: list[str] = []

    async def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if tool != "try_test":
            return await self.tools.call(tool, args)
        self.tried.append(json.dumps(args["files"], sort_keys=True))
        with tempfile.TemporaryDirectory() as folder:
            for name, text in args["files"].items():
                (Path(folder) / name).write_text(text, encoding="utf-8")
            verdict = await asyncio.to_thread(
                adjudicate, folder, self.original, self.submission, SPEC
            )
        return {"ok": True, "result": verdict.to_dict()}


@pytest.fixture
async def stage(trees: tuple[Path, Path]) -> AsyncIterator[StageChannel]:
    original, submission = trees
    (submission / "calc" / "core.py").write_text("def add(a, b):\n    return a - b\n")
    async with SubprocessToolChannel(grader_argv(original, submission), timeout_sec=30) as tools:
        yield StageChannel(tools, original, submission)


async def test_scripted_adversary_reports_an_upheld_candidate(
    tmp_path: Path, stage: StageChannel
) -> None:
    script = tmp_path / "adversary.py"
    log = tmp_path / "received.jsonl"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            LOG = open({str(log)!r}, "a")
            def read():
                line = sys.stdin.readline()
                LOG.write(line); LOG.flush()
                return json.loads(line)
            def send(m):
                print(json.dumps(m), flush=True)
            read()
            send({{"tool": "diff", "args": {{"path": "calc/core.py"}}}})
            read()
            send({{"tool": "try_test", "args": {{"files": {{"check.sh": "exit 0\\n"}}}}}})
            read()
            send({{"tool": "try_test", "args": {{"files": {{"check.sh": {CHECK!r}}}}}}})
            read()
            send({{"report": {{"found": True, "summary": "add is wrong"}}}})
            read()
            send({{"report": {{"found": True, "summary": "add(2, 2) is 0",
                               "files": {{"check.sh": {CHECK!r}}}}}}})
            read()
            """
        ),
        encoding="utf-8",
    )
    driver = ScriptedDriver([sys.executable, str(script)])
    round_ = await run_adversary_round(
        driver, stage, "You are an adversary.", "Break it.", adversary_id="a01"
    )
    await driver.aclose()

    assert round_.status == "reported" and round_.ending == "accepted"
    assert round_.candidate == {"check.sh": CHECK}
    assert round_.rejections == 1 and round_.turns == 5
    outcomes = [t["reply"]["result"]["outcome"] for t in round_.tries]
    assert outcomes == ["invalid", "upheld"]
    assert "passes on the submission too" in round_.tries[0]["reply"]["result"]["reason"]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    start = received[0]
    assert start["role"] == "adversary" and start["adversary_id"] == "a01"
    assert start["tools"] == ["list_dir", "fetch_source", "search", "diff", "try_test"]
    assert "return a - b" in received[1]["result"]["diff"]
    assert received[4]["type"] == "report_rejected"
    assert "'files' must be a non-empty object" in received[4]["message"]
    assert received[5] == {"type": "report_accepted"}
    assert round_.to_dict()["candidate"] == {"check.sh": CHECK}


async def test_unsafe_candidate_is_refused_before_the_channel(stage: StageChannel) -> None:
    driver = TurnsDriver(
        [
            turn(ToolCall("t1", "try_test", {"files": {"../escape.sh": "exit 0"}})),
            turn(ToolCall("r1", "report", {"found": False, "summary": "nothing differs"})),
        ]
    )
    round_ = await run_adversary_round(driver, stage, "s", "u", adversary_id="a02")
    assert stage.tried == []
    assert round_.status == "gave_up" and round_.candidate is None
    assert round_.report == {"found": False, "summary": "nothing differs"}
    refused = driver.requests[1][-1]
    assert isinstance(refused, ToolResults) and refused.results[0].is_error
    assert "must be a plain relative path" in refused.results[0].content
    assert driver.ended[0][1] == {"type": "report_accepted"}


async def test_round_without_report_in_budget(stage: StageChannel) -> None:
    driver = TurnsDriver(
        [turn(ToolCall(f"c{i}", "list_dir", {"path": "original:"})) for i in range(3)]
    )
    round_ = await run_adversary_round(driver, stage, "s", "u", adversary_id="a03", max_turns=2)
    assert round_.status == "no_report" and round_.ending == "max_turns"
    assert round_.harness_error is None
