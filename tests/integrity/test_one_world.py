"""One world (issue 32, item 3): what a program under test can observe in each place srb
runs it, compared field by field.

The probe (:mod:`.probe_world`, the honest demo01 `reference` port whose bin/csvtab lists
what it sees instead of running) is run through the grader's own code paths, in real stage
containers of demo01:

* ``stage2``: a Stage II module case, as the demo's modules start it (``srb_submission.run``
  in the module's process, the entry at ``/workspace/repo/bin/csvtab``, cwd its run folder);
* ``fuzz``: the fuzzer's run of the submission (:class:`srb_grader.fuzzing.argv.EntryRunner`);
* ``first`` and ``rerun``: the first and a later run of the submission in adjudication of
  that very fuzz finding's candidate (``fuzz_view.judge_candidate``: the candidate script the
  fuzzer writes, the demo's ``run-candidate.sh``, the exec broker).

uid, gid and groups (and the uid/gid numbers inside mount options and process lists) are
written relative to the container's drawn uid base (``U+k``): the base is random per
container, so its value says nothing about the stage. Every field srb makes equal must be
equal in all four; the fields that still differ are the ``ALLOWED`` list below, which is
the README's list ("What still tells the fuzzer, adjudication and Stage II apart"): the test
fails when a new difference appears and when a listed one disappears.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool, exec_run
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.behavioural import LAYOUT
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import candidate_layout

from ..conftest import DEMO_TASK
from .probe_world import make_probe

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]
BASE_IMAGE = "srb/base:bookworm"
CONTEXTS = ("stage2", "fuzz", "first", "rerun")

# field -> (the contexts where it differs from adjudication's first run, why)
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "script": (frozenset({"stage2"}), "Stage II runs the tree at /workspace/repo (the module "
               "contract), Stage III at the slot's /srb/run/N/target"),
    "argv0": (frozenset({"stage2"}), "the entry as named: an absolute path into that tree"),
    "cwd": (frozenset({"stage2"}), "a Stage II module chooses its cases' folder"),
    "env": (frozenset({"stage2", "fuzz"}), "Stage II: the module's names; the fuzzer: what "
            "the task's run-candidate.sh exports (CSVTAB in demo01)"),
    "groups": (frozenset({"stage2"}), "Stage III programs have the candidate /tmp group"),
    "limits": (frozenset({"stage2"}), "the file size limit is the stage's largest tmpfs"),
    "mounts": (frozenset({"stage2"}), "another stage container: /workspace, no per-slot "
               "scratch, another /tmp"),
    "procs": (frozenset({"stage2", "fuzz"}), "no PID namespace: the grader (and in "
              "adjudication the candidate's stub) are visible with their command lines"),
}


async def as_grader(box: StageContainer, code: str) -> str:
    argv = [box.python, "-I", "-c", "import sys; sys.path.insert(0, '/opt/srb')\n" + code]
    res = await exec_run(box.engine, box.h, argv, timeout_sec=240, env={"SRB_SANDBOX": "on"})
    assert res.exit_code == 0, res.stderr.decode()[-3000:]
    return res.stdout.decode()


STAGE_TWO = r"""
import os, srb_submission
from pathlib import Path
from srb_grader.suite.run import stage_submission
stage_submission(Path('/srb/submission'), Path('/workspace/repo'))
work = Path('/srb/work/module/run')
work.mkdir(parents=True, exist_ok=True)
os.chmod('/srb/work/module', 0o755); os.chmod(work, 0o777)
env = {'LC_ALL': 'C.UTF-8', 'LANG': 'C.UTF-8', 'TZ': 'UTC', 'PYTHONDONTWRITEBYTECODE': '1'}
done = srb_submission.run(['/workspace/repo/bin/csvtab'], cwd=work, timeout=60, env=env,
                          input=b'a,b\n1,2\n')
print(done.stderr.decode())
"""

STAGE_THREE = r"""
import json, os
from pathlib import Path
from srb_grader.candidates.records import CandidateSpec
from srb_grader.fuzzing.argv import EntryRunner, FuzzConfig, entry_in_tree
from srb_grader.fuzzing.script import candidate_script
from srb_grader.fuzzing.view import RoundState, judge_candidate
drop = Path('/srb/probe-drop')
drop.mkdir(mode=0o1733)
os.chmod(drop, 0o1733)

def collect():
    docs = [json.loads(f.read_text()) for f in sorted(drop.iterdir())]
    for f in drop.iterdir():
        f.unlink()
    return docs

spec = CandidateSpec(command=('bash', '/tests/verification/run-candidate.sh'), reruns=2,
                     timeout_sec=60, slot=0)
config = FuzzConfig(adversary='probe', original=Path('/srb/original'),
                    submission=Path('/workspace/repo'), seeds=Path('/nonexistent'),
                    entry='bin/csvtab', argv_sets=[[]], seed=1, budget_sec=30,
                    run_timeout_sec=30, spec=spec, work=Path('/srb/grader/one-world'),
                    stage_base=Path('/srb/stage/0/fuzz'))
data = b'a,b\n1,2\n'
runner = EntryRunner(config)
original = runner.run('original', [], data)
said = runner.run('submission', [], data)
fuzz = collect()
script = candidate_script(adversary='probe', seed=1, entry=entry_in_tree('bin/csvtab'),
                          argv=[], data=data, original_len=len(data), expected=original)
runner.park()
record = judge_candidate(config, RoundState(), script, {}, (original, original))
runs = [r['role'] for r in record['verdict']['runs']]
print(json.dumps({'fuzz': fuzz, 'adjudication': collect(), 'runs': runs,
                  'verdict': record['verdict']['outcome'],
                  'said': said.stderr.decode()[:300]}))
"""


def relative_ids(doc: dict[str, Any], base: int) -> dict[str, Any]:
    """uids/gids near the container's drawn base written as U+k (the base is random)."""

    def rel(match: re.Match[str]) -> str:
        n = int(match.group(0))
        return f"U+{n - base}" if 0 <= n - base < 1000 else match.group(0)

    def rel_int(n: int) -> int | str:
        return f"U+{n - base}" if 0 <= n - base < 1000 else n

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, int):
            return rel_int(value)
        if isinstance(value, str):
            return re.sub(r"\b\d{6,}\b", rel, value)
        return value

    return walk(doc)  # type: ignore[no-any-return]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seen(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    load = load_task(DEMO_TASK)
    assert load.task is not None
    task = load.task
    engine = DockerEngine(RunnerPool(2))
    probe = make_probe(DEMO_TASK / "submissions" / "reference",
                       tmp_path_factory.mktemp("probe") / "tree")
    reference = DEMO_TASK / "submissions" / "reference"
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    docs: dict[str, Any] = {}
    info = await images.get("behavioural")
    box = StageContainer(engine, "one-world-2", "behavioural", info.tag,
                         publish=lambda e: None, layout=LAYOUT, task=task)
    async with box:
        await box.put_trees(reference, probe, workspace=True)
        out = await as_grader(box, "sys.path.insert(0, '/opt/srb/lib')\n" + STAGE_TWO)
        line = next(x for x in out.splitlines() if x.startswith("srb-probe "))
        docs["stage2"] = relative_ids(json.loads(line.removeprefix("srb-probe ")), box.uid_base)
    info = await images.get("verification")
    box = StageContainer(engine, "one-world-3", "verification", info.tag,
                         publish=lambda e: None, layout=candidate_layout(2), task=task)
    async with box:
        await box.put_trees(reference, probe)
        await box.put_context(task, ["verification"])
        got = json.loads((await as_grader(box, STAGE_THREE)).strip().splitlines()[-1])
        assert len(got["fuzz"]) == 1, got
        # every run of the submission in adjudication reported; the first and a rerun
        assert len(got["adjudication"]) == got["runs"].count("submission") >= 2, got
        docs["fuzz"] = relative_ids(got["fuzz"][0], box.uid_base)
        docs["first"] = relative_ids(got["adjudication"][0], box.uid_base)
        docs["rerun"] = relative_ids(got["adjudication"][-1], box.uid_base)
    engine.close()
    yield docs


def differences(docs: dict[str, Any]) -> dict[str, frozenset[str]]:
    fields = sorted(docs["first"])
    found: dict[str, frozenset[str]] = {}
    for name in fields:
        first = docs["first"][name]
        where = frozenset(c for c in CONTEXTS if c != "first" and docs[c][name] != first)
        if where:
            found[name] = where
    return found


async def test_one_world_every_field(seen: dict[str, Any]) -> None:
    for context in CONTEXTS:  # every context ran the probe as its slot's uid
        assert seen[context]["uid"] == seen[context]["gid"] == "U+0", seen[context]["uid"]
    found = differences(seen)
    detail = {name: {c: seen[c][name] for c in CONTEXTS} for name in found}
    allowed = {name: where for name, (where, _why) in ALLOWED.items()}
    assert found == allowed, json.dumps(detail, indent=1, default=str)[:20000]
    # the fuzzer's program lacks exactly what the task's run-candidate.sh exports
    assert set(seen["first"]["env"]) ^ set(seen["fuzz"]["env"]) == {"CSVTAB"}, seen["fuzz"]
