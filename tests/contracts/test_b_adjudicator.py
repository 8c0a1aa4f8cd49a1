"""Stage III's model adjudicator (issue 11 point 5e): after the mechanical checks, an upheld
candidate is put to the adjudicator, which rules through a `rule` tool. The adjudicator here
is srb's real scripted driver running a small ruling PROGRAM (a stand-in for a model; no
network), over the same loop a vendor model would use."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from srb_tui.schema import Adversary, load_task
from srb_tui.service.grading.stages.adjudicator import rule_on_breaks
from srb_tui.service.grading.stages.verification import RoundResult

from ..conftest import DEMO_TASK

RULER = """import json, sys
start = json.loads(sys.stdin.readline())
assert start["type"] == "start" and start["tools"] == ["rule"]
assert "IN SCOPE" in start["prompt"] and "candidate.sh" in start["prompt"]
if sys.argv[1] == "silent":
    sys.exit(0)
ruling = {"in_scope": sys.argv[1] == "in", "reason": "asserts on " + sys.argv[1]}
print(json.dumps({"tool": "rule", "args": ruling}), flush=True)
for line in sys.stdin:
    pass
"""


def _setup(tmp_path: Path, mode: str | None) -> dict[str, Any]:
    load = load_task(DEMO_TASK)
    task = load.task
    assert task is not None and task.evaluation is not None and task.probe is not None
    spec = task.evaluation.verification
    assert spec is not None
    program = tmp_path / "ruler.py"
    program.write_text(RULER)
    options = dict(spec.options)
    argv = [sys.executable, str(program), str(mode)]
    if mode == "unreachable":
        argv = [str(tmp_path / "no-such-ruler")]
    if mode is not None:
        options["adjudicator"] = {"driver": "scripted", "model": "ruler", "program": argv}
    return {"spec": dataclasses.replace(spec, options=options), "probe": task.probe}


def _broken() -> RoundResult:
    verdict = {"outcome": "upheld", "reason": "passes on State A and fails, reproduced 3 times",
               "runs": [{"role": "submission", "stdout_tail": "", "stderr_tail": "41"}]}
    return RoundResult(
        Adversary(id="a1", model="m", driver="scripted"), "broken", "a break", "t0", 1.0,
        candidates=[{"files": {"candidate.sh": "[ $(tool) = 42 ]\\n"}, "verdict": verdict}],
    )  # fmt: skip


async def _rule(tmp_path: Path, mode: str | None) -> RoundResult:
    world = _setup(tmp_path, mode)
    result = _broken()
    await rule_on_breaks(result, spec=world["spec"], probe=world["probe"], run_dir=tmp_path,
                         environ={"PATH": "/usr/bin:/bin"})  # fmt: skip
    return result


async def test_an_in_scope_ruling_keeps_the_break(tmp_path: Path) -> None:
    result = await _rule(tmp_path, "in")
    assert result.outcome == "broken"
    verdict = result.candidates[0]["verdict"]
    assert verdict["outcome"] == "upheld"
    assert verdict["adjudication"] == {"in_scope": True, "reason": "asserts on in"}
    assert (tmp_path / "verification" / "adjudication-a1-1.jsonl").is_file()


async def test_an_out_of_scope_ruling_rejects_the_candidate(tmp_path: Path) -> None:
    result = await _rule(tmp_path, "out")
    assert result.outcome == "survived"
    verdict = result.candidates[0]["verdict"]
    assert verdict["outcome"] == "rejected"
    assert verdict["reason"] == "out of scope (adjudicator): asserts on out"


async def test_an_unreachable_adjudicator_makes_the_round_an_error(tmp_path: Path) -> None:
    result = await _rule(tmp_path, "unreachable")
    assert result.outcome == "error", result.reason
    assert result.reason.startswith("a break was claimed and the adjudication did not complete")
    assert result.candidates[0]["verdict"]["outcome"] == "upheld", "nothing was ruled"


async def test_no_ruling_is_not_upheld_and_no_adjudicator_changes_nothing(
    tmp_path: Path,
) -> None:
    silent = await _rule(tmp_path, "silent")
    assert silent.outcome == "survived"
    assert "did not return a ruling" in silent.candidates[0]["verdict"]["reason"]
    plain = await _rule(tmp_path, None)
    assert plain.outcome == "broken" and "adjudication" not in plain.extra
