"""Stage III candidate runs' writable places besides their tree, in a real verification
container: a /tmp of their own (published run-candidate.sh scripts write fixed /tmp paths,
as lang03's does with /tmp/srb-candidate-view) and a fresh SRB_WORK per run.

The fixture's run-candidate.sh copies the tree under test to the fixed path
/tmp/srb-fixed-view with ``mkdir`` (no ``-p``: a folder some other run left or still holds
there is a fault, exit 73), holds it for a moment, checks nobody else wrote it (exit 75) and
runs the candidate against the copy. It never removes the folder, so every later run finds
an empty /tmp only because srb emptied it. It caches the tool's answer per tree in
``$SRB_WORK/$SRB_TARGET_TOKEN`` the way the published scripts cache builds. Two rounds
adjudicate at once on two slots; a hostile submission plants a wrong answer in every cache
it can find; a scripted adversary (srb's real scripted driver running a small PROGRAM, a
stand-in for a model) learns State A's SRB_TARGET_TOKEN from a try and reports a candidate
that only compares the token.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.grader.boundary.sandbox import TMP_GROUP_OFFSET
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.runner.files import put_files, put_readonly_tree
from srb_tui.schema import Adversary, Task, load_task
from srb_tui.service.grading.stages.channels import CandidateOptions
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import (
    CANDIDATES,
    ORIGINAL_DIR,
    STAGE_BASE,
    SUBMISSION_DIR,
    candidate_layout,
    stage_mounts,
)
from srb_tui.service.grading.stages.verification import _model_round
from srb_tui.service.grading.stages.verification_setup import probe_setup

from ..conftest import DEMO_TASK
from .candidate_contract import CONTRACT_PREAMBLE

BASE_IMAGE = "srb/base:bookworm"
FIXTURE = "/tests/fixture"

RUN_CANDIDATE = CONTRACT_PREAMBLE + r"""mkdir -p "$STATE" || exit 70
echo "FACT role=$ROLE" >&2
echo "FACT tmp_seen=$(ls -A /tmp | wc -l)" >&2
echo "FACT work_entries=$(ls -A "$WORK" | wc -l)" >&2
touch "$HOME/.written" || exit 70
VIEW=/tmp/srb-fixed-view
mkdir "$VIEW" || exit 73
cp -a "$TARGET/." "$VIEW/" || exit 73
echo "$TOKEN" > "$VIEW/.owner"
sleep 0.3  # hold the view, so runs of two rounds would overlap here without srb's lease
[ "$(cat "$VIEW/.owner")" = "$TOKEN" ] || exit 75
if [ ! -f "$STATE/answer" ]; then bash "$VIEW/tool.sh" > "$STATE/answer" || exit 71; fi
ANSWER="$(cat "$STATE/answer")"
echo "FACT answer=$ANSWER" >&2
export ANSWER
bash "$CANDIDATE"
"""

CANDIDATE = {"candidate.sh": '[ "$ANSWER" = 42 ] || { echo "expected 42" >&2; exit 1; }\n'}

HOSTILE_TOOL = r"""# a wrong port that tries to make State A's cached answer wrong too
for f in "$SRB_WORK"/*/answer "$SRB_WORK"/*/*/answer /srb/run/*/*/*/answer \
         /srb/run/*/.srb-kept/*/*/answer /tmp/*/answer; do
  [ -e "$f" ] && echo 41 > "$f" 2>/dev/null
done
for d in "$SRB_WORK"/*/ /srb/run/*/.srb-kept/*/*/; do
  echo 41 > "$d/answer" 2>/dev/null
done
echo 41
"""

ORACLE = r"""import json, sys
def read():
    return json.loads(sys.stdin.readline())
def send(message):
    print(json.dumps(message), flush=True)
assert read()["type"] == "start"
show = 'echo "T=$SRB_TARGET_TOKEN"; exit 1\n'
send({"tool": "try_test", "args": {"files": {"candidate.sh": show}}})
runs = read()["result"]["runs"]
token = [line[2:] for run in runs if run["role"] == "original"
         for line in run["stdout_tail"].splitlines() if line.startswith("T=")][0]
oracle = '[ "$SRB_TARGET_TOKEN" = "%s" ]\n' % token
send({"tool": "try_test", "args": {"files": {"candidate.sh": oracle}}})
tried = read()["result"]["outcome"]
open(sys.argv[1], "w").write(tried)
send({"report": {"found": True, "summary": "token", "claim": "the token differs",
                 "files": {"candidate.sh": oracle}}})
read()
"""

OPTIONS = CandidateOptions(
    command=("bash", f"{FIXTURE}/run-candidate.sh"),
    reruns=3,
    timeout_sec=30.0,
    fault_codes="64-78",
    deny_commands=(),
    lanes=2,
)


@pytest.fixture(scope="module")
def task() -> Task:
    load = load_task(DEMO_TASK)
    assert load.task is not None
    return load.task


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box(
    tmp_path_factory: pytest.TempPathFactory, task: Task
) -> AsyncIterator[StageContainer]:
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    info = await images.get("verification")
    root = tmp_path_factory.mktemp("scratch")
    original, honest, fixture = root / "original", root / "honest", root / "fixture"
    for folder, tool in (
        (original, "echo 42\n"),
        (honest, "echo 42\n"),
        (fixture / "wrong", "echo 41\n"),
        (fixture / "hostile", HOSTILE_TOOL),
    ):
        folder.mkdir(parents=True)
        (folder / "tool.sh").write_text(tool)
    (fixture / "run-candidate.sh").write_text(RUN_CANDIDATE)
    container = StageContainer(
        engine, "contract-scratch", "verification", info.tag, publish=lambda e: None,
        layout=candidate_layout(5), task=task,
    )  # fmt: skip
    async with container:
        await container.put_trees(original, honest)
        await put_readonly_tree(engine, container.h, fixture, FIXTURE)
        yield container
    engine.close()


def facts(verdict: dict[str, Any]) -> list[dict[str, str]]:
    """What run-candidate.sh saw on each run, from its FACT lines."""
    found = []
    for run in verdict["runs"]:
        lines = run["stderr_tail"].splitlines()
        found.append(dict(x[5:].split("=", 1) for x in lines if x.startswith("FACT ")))
    return found


async def judge(
    box: StageContainer, submission: str, slot: int, name: str
) -> dict[str, Any]:
    """Adjudicate the candidate against State A and ``submission`` on ``slot``."""
    folder = f"{CANDIDATES}/tries/{name}"
    files = {key: text.encode() for key, text in CANDIDATE.items()}
    await put_files(box.engine, box.h, folder, files, uid=0, gid=0, mode=0o755)
    res = await box.grader(
        [
            "candidate", "--candidate", folder, "--original", ORIGINAL_DIR,
            "--submission", submission, "--stage-base", f"{STAGE_BASE}/{slot}/{name}",
            "--slot", str(slot), "--name", name, *OPTIONS.args(),
        ],
        timeout_sec=OPTIONS.exec_budget_sec(),
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr.decode()
    verdict: dict[str, Any] = json.loads(res.stdout.decode().strip().splitlines()[-1])
    return verdict


def test_stage_three_mounts_a_candidate_tmp_for_the_lease_group() -> None:
    mounts, _ = stage_mounts(candidate_layout(6), 2048, 4096, uid_base=100_000)
    group = 100_000 + TMP_GROUP_OFFSET
    assert f"mode=1770,uid=0,gid={group},exec" in mounts["/tmp"]
    assert f"mode=1770,uid=0,gid={group}" in mounts["/dev/shm"]
    assert all("mode=0770" in mounts[f"/srb/run/{n}"] for n in range(6))
    sizes = [int(v.split(",")[0][5:-1]) for v in mounts.values()]
    assert sum(sizes) <= 1024, "still under half the memory limit"


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_fixed_tmp_path_candidates_of_two_rounds_are_upheld_side_by_side(
    box: StageContainer,
) -> None:
    verdicts = await asyncio.gather(
        judge(box, f"{FIXTURE}/wrong", 0, "r0"), judge(box, f"{FIXTURE}/wrong", 1, "r1")
    )
    for verdict in verdicts:
        assert verdict["outcome"] == "upheld", verdict
        seen = facts(verdict)
        assert len(seen) == 6
        assert all(f["tmp_seen"] == "0" for f in seen), "every run starts with an empty /tmp"
        assert {f["answer"] for f in seen if f["role"] == "original"} == {"42"}
        # a fresh SRB_WORK per run: a run finds the cache folder it just made, nothing else
        assert {f["work_entries"] for f in seen} == {"1"}


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_an_untouched_submission_survives_the_fixed_tmp_candidate(
    box: StageContainer,
) -> None:
    verdict = await judge(box, SUBMISSION_DIR, 2, "same")
    assert verdict["outcome"] == "invalid", verdict
    assert verdict["reason"] == "passes on the submission too: not a break"
    assert [f["answer"] for f in facts(verdict)] == ["42", "42"]


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_hostile_submission_cannot_poison_state_a_cache(box: StageContainer) -> None:
    verdict = await judge(box, f"{FIXTURE}/hostile", 3, "hostile")
    seen = facts(verdict)
    assert verdict["outcome"] == "upheld", verdict
    assert [f["answer"] for f in seen if f["role"] == "original"] == ["42"] * 3
    assert [f["answer"] for f in seen if f["role"] == "submission"] == ["41"] * 3


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_reported_token_oracle_does_not_break_an_honest_submission(
    box: StageContainer, task: Task, tmp_path: Path
) -> None:
    program, tried = tmp_path / "oracle.py", tmp_path / "tried"
    program.write_text(ORACLE)
    assert task.evaluation is not None and task.evaluation.verification is not None
    spec = task.evaluation.verification
    setup = dataclasses.replace(probe_setup(task, spec), candidates=OPTIONS)
    adversary = Adversary(
        id="oracle", model="scripted", driver="scripted", budget_sec=120,
        metadata={"program": [sys.executable, str(program), str(tried)]},
    )  # fmt: skip
    result = await _model_round(
        box, setup, adversary, task, spec, 120.0, tmp_path, {"PATH": "/usr/bin:/bin"}, None, 4
    )
    assert tried.read_text() == "upheld", "under the round's own tokens the oracle discriminates"
    assert result.outcome == "survived", result.reason
    verdict = result.candidates[0]["verdict"]
    assert verdict["outcome"] == "invalid" and verdict["reason"].startswith(
        "does not pass on State A"
    ), verdict
