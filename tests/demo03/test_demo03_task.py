"""demo03 (greet, make → CMake): a task written to the published module contract, whose
``build`` module runs ``sh build.sh PREFIX`` itself in ``$SRB_REPO`` (no launcher, no
``[verifier] user``), graded by a real engine.

* ``srb tasks record`` gives identity 1.0 and names, in one line, the module that ran
  submission code as uid 0 itself;
* the honest CMake port (``reference``) passes Stage I and Stage II complete, and the run
  records the boundary the build module gave up under ``runs.extra.grading``;
* ``untouched`` (State A handed back) is stopped at Stage I by the scripted reviewer;
* a module that writes where the sandbox forbids it fails with a record saying so.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.schema.published import validate_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

from ..conftest import BUILTIN_TASKS
from ..ladder.harness import BASE_IMAGE, Graded, Ladder
from ..ladder.test_commands import parse, run_handler

DEMO03 = BUILTIN_TASKS / "demo03-greet-make-to-cmake"
BOUNDARY = "boundary given up in Stage II: module(s) build ran submission code as uid 0"
STAGES = ("audit", "behavioural")


def test_validate_says_in_one_line_which_modules_leave_the_sandbox() -> None:
    load = validate_task(DEMO03)
    assert load.ok, load.problems
    lines = [str(p) for p in load.problems if p.key == "module"]
    assert len(lines) == 1 and "module(s) build start submission code themselves" in lines[0]
    assert "layout" not in lines[0] and "run," not in lines[0]


@pytest.mark.docker
def test_demo03_identity_run_scores_one(
    builtin_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_handler(parse("tasks", "record", DEMO03.name, "--json"), builtin_settings)
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    assert doc["ok"] is True and doc["failing"] == []
    assert [(m["id"], m["status"], m["rate"]) for m in doc["modules"]] == [
        ("build", "ok", 1.0), ("layout", "ok", 1.0), ("run", "ok", 1.0),
    ]  # fmt: skip
    assert doc["boundary"].startswith(BOUNDARY), doc["boundary"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ladder03(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ladder]:
    root = tmp_path_factory.mktemp("ladder03")
    load = load_task(DEMO03)
    assert load.task is not None and load.ok, load.problems
    task = load.task
    state_a = prepare_state_a(DEMO03, task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    for stage in STAGES:
        await images.get(stage)
    store = await Store.open(root / "srb.sqlite3")
    try:
        yield Ladder(engine, store, task, state_a, root)
    finally:
        await store.close()
        engine.close()


async def graded(ladder: Ladder, name: str) -> Graded:
    return await ladder.grade(DEMO03 / "submissions" / name, stages=STAGES)


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_reference_passes_audit_and_stage_two_complete(ladder03: Ladder) -> None:
    got = await graded(ladder03, "reference")
    env = got.envelope
    assert env.audit_gate == "pass", env
    assert env.behavioural["complete"] is True, env.behavioural
    assert {m["id"]: m["rate"] for m in env.behavioural["modules"]} == {
        "build": 1.0, "layout": 1.0, "run": 1.0}
    run = await ladder03.store.get_run(got.run_id)
    assert run is not None
    given_up = run.extra["grading"]["behavioural"]["boundary_given_up"]
    assert [item["module"] for item in given_up] == ["build"]
    assert "_build" in given_up[0]["note"]  # CMake's build folder, written as uid 0


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_untouched_is_stopped_at_stage_one(ladder03: Ladder) -> None:
    env = (await graded(ladder03, "untouched")).envelope
    assert env.audit_gate == "fail" and env.score == 0.0 and env.valid
    assert env.blocked_by == "audit"


SCRIBBLE = '''"""Module 'scribble': writes where a module may not: the submission uid's own
scratch (0700, another owner: uid 0 without DAC_OVERRIDE is refused, EACCES) and /sys
(read-only in a container, EROFS)."""
import json, os
checks = []
for target in ("/srb/run/0/scribbled", "/sys/scribbled"):
    try:
        open(target, "w").write("x")
        checks.append({"id": target, "verdict": "pass"})
    except OSError as exc:
        checks.append({"id": target, "verdict": "fail", "summary": str(exc)})
open(os.environ["SRB_RESULT"], "w").write(json.dumps({"checks": checks}))
'''


@pytest.mark.docker
def test_a_write_the_sandbox_refuses_is_named_in_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_dir = tmp_path / "tasks" / DEMO03.name
    shutil.copytree(DEMO03, task_dir, ignore=shutil.ignore_patterns("submissions"))
    module = task_dir / "tests" / "behavioural" / "modules" / "scribble"
    module.mkdir()
    (module / "run.py").write_text(SCRIBBLE)
    suite = task_dir / "tests" / "behavioural" / "suite.toml"
    suite.write_text(suite.read_text() + (
        '\n[[module]]\nid = "scribble"\ntitle = "writes into State A"\nweight = 1.0\n'
        'command = ["/opt/srb/python/bin/python3", "run.py"]\n'))
    settings = Settings(task_roots=(tmp_path / "tasks",), state_dir=tmp_path / "state")
    code = run_handler(parse("tasks", "record", DEMO03.name, "--json"), settings)
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["failing"] == ["scribble"], doc
    row = next(m for m in doc["modules"] if m["id"] == "scribble")
    assert row["passed"] == 0 and row["scored"] == 2
    assert "the sandbox may have caused this" in row["checked"], row
    assert "refused" in row["detail"]["sandbox_hint"]


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_subtle_passes_the_fixed_suite(ladder03: Ladder) -> None:
    """``subtle`` cuts names at 16 bytes, not 24: no recorded case is that long, so Stage I
    and Stage II pass it (a fuzzer with a long name is what should find it)."""
    env = (await graded(ladder03, "subtle")).envelope
    assert env.audit_gate == "pass" and env.behavioural["complete"] is True, env
