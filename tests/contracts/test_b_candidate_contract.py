"""Stage III's candidate contract as the published harness defines it, in a real verification
container (issue 11 point 5c).

The fixture's run-candidate.sh is written the way both published scripts are (lang03,
build03: ``TARGET="${SRB_TARGET:?...}"`` first). Under srb's earlier contract (SRB_VIEW, the
candidate's folder) it exits 1 on State A, so no candidate could ever be upheld and every
submission kept its 60 Stage III points. Here a candidate is upheld against a wrong
submission and survives an identical one, and the script records what the contract handed
it (cwd, the candidate file, token, SRB_WORK, SRB_NETWORK, the uid, what it can read) on
stderr, which the verdict carries back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.grader.boundary.lockdown import tree_digest
from srb_tui.grader.boundary.slot import CANDIDATE_OFFSET
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.runner.files import put_readonly_tree
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.channels import CandidateOptions, adjudicate_in
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import (
    CANDIDATES,
    ORIGINAL_DIR,
    STAGE_BASE,
    candidate_layout,
)

from ..conftest import DEMO_TASK
from .candidate_contract import CONTRACT_PREAMBLE

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]
BASE_IMAGE = "srb/base:bookworm"
FIXTURE = "/tests/fixture"

RUN_CANDIDATE = CONTRACT_PREAMBLE + r"""mkdir -p "$STATE"
echo x >> "$STATE/runs"
leaked=$(env | grep -c -E '^SRB_(ORIGINAL|REPO|SANDBOX|RESULT|SUITE_DIR|VIEW)=' || true)
if cat /srb/original/tool.sh >/dev/null 2>&1; then original=readable; else original=private; fi
if touch "$TARGET/.built" 2>/dev/null; then writable=yes; else writable=no; fi
if [ -f "$CANDIDATE" ]; then is_file=yes; else is_file=no; fi
{
  echo "FACT role=$ROLE"; echo "FACT cwd=$PWD"; echo "FACT target=$TARGET"
  echo "FACT token=$TOKEN"; echo "FACT candidate=$CANDIDATE"; echo "FACT is_file=$is_file"
  echo "FACT name=${SRB_CANDIDATE_NAME:-}"; echo "FACT network=${SRB_NETWORK:-}"
  echo "FACT uid=$(id -u)"; echo "FACT runs_for_token=$(wc -l < "$STATE/runs")"
  echo "FACT leaked=$leaked"; echo "FACT original_dir=$original"
  echo "FACT target_writable=$writable"
} >&2
export TOOL="$TARGET/tool.sh"
bash "$CANDIDATE"
"""

CANDIDATE = {
    "candidate.sh": '[ "$(bash "$TOOL")" = 42 ] || { echo "expected 42" >&2; exit 1; }\n'
    "[ $# -eq 0 ] || exit 1  # the role never reaches the candidate\n",
    "notes.md": "the tool prints 42, as State A does\n",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[StageContainer]:
    load = load_task(DEMO_TASK)
    assert load.task is not None
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, load.task, BASE_IMAGE, lambda event: None)
    info = await images.get("verification")
    root = tmp_path_factory.mktemp("contract")
    original, wrong, fixture = root / "original", root / "wrong", root / "fixture"
    for folder, answer in ((original, 42), (wrong, 41), (fixture / "same", 42)):
        folder.mkdir(parents=True)
        (folder / "tool.sh").write_text(f"echo {answer}\n")
    (fixture / "run-candidate.sh").write_text(RUN_CANDIDATE)
    DIGEST["original"] = tree_digest(original)
    container = StageContainer(
        engine, "contract-b", "verification", info.tag, publish=lambda e: None,
        layout=candidate_layout(2),
        task=load.task,
    )  # fmt: skip
    async with container:
        await container.put_trees(original, wrong)
        await put_readonly_tree(engine, container.h, fixture, FIXTURE)
        yield container
    engine.close()


OPTIONS = CandidateOptions(
    command=("bash", f"{FIXTURE}/run-candidate.sh"),
    reruns=2,
    timeout_sec=30.0,
    fault_codes="64-78",
    deny_commands=(),
)


DIGEST: dict[str, str] = {}


def facts(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """What run-candidate.sh saw on each run, from its FACT lines."""
    found = []
    for run in verdict["runs"]:
        pairs = [x[5:].split("=", 1) for x in run["stderr_tail"].splitlines() if x[:5] == "FACT "]
        fact: dict[str, Any] = dict(pairs)
        for key in ("uid", "runs_for_token", "leaked"):
            fact[key] = int(fact[key])
        found.append(fact)
    return found


async def test_a_published_style_candidate_is_upheld_against_a_wrong_submission(
    box: StageContainer,
) -> None:
    checked = dataclasses.replace(OPTIONS, original_digest=DIGEST["original"])
    verdict = await adjudicate_in(box, checked, CANDIDATE, f"{CANDIDATES}/tries/c1", slot=1)
    assert verdict["outcome"] == "upheld", verdict
    seen = facts(verdict)
    assert [f["role"] for f in seen].count("original") == 2 and len(seen) == 4
    for fact in seen:
        assert fact["cwd"] == fact["target"], "cwd is the tree under test"
        assert fact["is_file"] == "yes" and fact["candidate"].endswith("/candidate.sh")
        assert fact["name"] == "c1" and fact["network"] == "denied"
        # issue 21: the candidate has a uid of its own; the programs it starts get the slot's
        assert fact["uid"] == box.uid_base + CANDIDATE_OFFSET + 1, "the candidate's own uid"
        assert fact["leaked"] == 0 and fact["original_dir"] == "private"
        assert fact["target_writable"] == "yes", "the target is a copy, safe to build in"
    assert len({f["target"] for f in seen}) == 1, "one path for both roles"
    tokens = {role: {f["token"] for f in seen if f["role"] == role} for role in OPTIONS_ROLES}
    assert all(len(t) == 1 for t in tokens.values()), "the token is stable within the stage"
    assert tokens["original"] != tokens["submission"]
    per_token = [f["runs_for_token"] for f in seen if f["role"] == "original"]
    # issue 32: SRB_WORK is fresh and empty for every run (a kept one let a program note the
    # inputs it had seen and answer a rerun differently): one line per run, never more.
    assert per_token == [1, 1], "SRB_WORK starts empty on every run"


OPTIONS_ROLES = ("original", "submission")


async def test_the_same_candidate_survives_an_identical_submission(box: StageContainer) -> None:
    folder = f"{CANDIDATES}/tries/c2"
    first = await adjudicate_in(box, OPTIONS, CANDIDATE, folder, slot=0)
    assert first["outcome"] == "upheld"
    res = await box.grader(
        [
            "candidate", "--candidate", folder, "--original", ORIGINAL_DIR,
            "--submission", f"{FIXTURE}/same", "--stage-base", f"{STAGE_BASE}/0/same",
            "--slot", "0", "--name", "c2", *OPTIONS.args(),
        ],
        timeout_sec=OPTIONS.exec_budget_sec(),
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr.decode()
    verdict = json.loads(res.stdout.decode().strip().splitlines()[-1])
    assert verdict["outcome"] == "invalid", verdict
    assert verdict["reason"] == "passes on the submission too: not a break"
    earlier = {f["token"] for f in facts(first) if f["role"] == "original"}
    assert {f["token"] for f in facts(verdict) if f["role"] == "original"} == earlier
