"""demo03 (greet, make → CMake): a task written to the published module contract, whose
``build`` module runs ``sh build.sh PREFIX`` itself in ``$SRB_REPO`` (no launcher, no
``[verifier] user``), graded by a real engine.

* ``srb tasks record`` gives identity 1.0, and the build and the installed greet the modules
  start run as the slot uid behind the exec boundary (issue 32): no boundary given up;
* the honest CMake port (``reference``) passes Stage I and Stage II complete, and the run
  records no boundary given up under ``runs.extra.grading``;
* ``untouched`` (State A handed back) is stopped at Stage I by the scripted reviewer;
* a module that writes where the sandbox forbids it fails with a record saying so;
* Stage III builds each tree first (the probe's ``fuzz_build``): a fuzz adversary breaks
  ``subtle`` (names cut at 16 bytes) with a candidate that builds its tree the same way,
  ``reference`` survives all six, and a build that fails on State A makes the rounds
  errors (the run invalid), never a break.
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
STAGES = ("audit", "behavioural")
IMAGES = (*STAGES, "verification")


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
    # the build the module starts runs as the slot (issue 32): nothing given up, and the
    # module's record says which programs its exec boundary started
    assert doc["boundary"] is None, doc["boundary"]
    build = doc["modules"][0]["detail"]["exec_boundary"]
    assert "sh" in build["program_argv0"] and not build["faults"], build
    run = doc["modules"][2]["detail"]["exec_boundary"]
    assert run["programs"] == 7 and run["program_argv0"][0].endswith("/prefix/bin/greet"), run


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ladder03(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ladder]:
    root = tmp_path_factory.mktemp("ladder03")
    load = load_task(DEMO03)
    assert load.task is not None and load.ok, load.problems
    task = load.task
    state_a = prepare_state_a(DEMO03, task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    for stage in IMAGES:
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
    run = await ladder03.store.runs.get_run(got.run_id)
    assert run is not None
    # CMake's _build is the slot's now (the build ran behind the exec boundary): no
    # module gave anything up, so the run records nothing of the kind
    assert not run.extra["grading"]["behavioural"].get("boundary_given_up")


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


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_subtle_is_broken_by_a_fuzzer_of_the_built_greet(ladder03: Ladder) -> None:
    got = await ladder03.grade(DEMO03 / "submissions" / "subtle")
    env = got.envelope
    assert env.valid and env.blocked_by == "verification", env.to_json()
    rounds = await ladder03.store.grading.adversary_rounds(got.run_id)
    assert len(rounds) == 6 and all(r.driver == "fuzz" for r in rounds)
    assert any(r.status == "broken" for r in rounds), [(r.status, r.notes) for r in rounds]
    # issue 32: no round ends in a harness fault (a slot's scratch made unreachable by a
    # reset was "cannot copy the tree to /srb/run/N/target"), and the score is what the
    # rounds say: Stage II's 40 plus 10 per surviving round
    assert all(r.status in ("broken", "survived") for r in rounds), [
        (r.status, r.notes, r.extra) for r in rounds]
    survived = sum(r.status == "survived" for r in rounds)
    assert env.score == 40.0 + 10.0 * survived, (env.score, survived)
    upheld = [c for c in await ladder03.store.grading.counterexamples(got.run_id)
              if c.verdict == "upheld"]
    assert upheld
    assert not [c for c in await ladder03.store.grading.counterexamples(got.run_id)
                if c.verdict == "error"], "no candidate failed to start"
    for cx in upheld:
        assert 'sh /tests/verification/fuzz-build.sh "$SRB_TARGET"' in cx.code, cx.code
        assert '"$SRB_TARGET/stage/bin/greet"' in cx.code
        assert cx.exit_a == 0 and cx.exit_b not in (None, 0)
        # issue 21's boundary: the tree's build and its product run as the slot, started
        # by the exec broker; the task's fuzz-build.sh stays the candidate's
        started = [argv0 for run in cx.extra["runs"]
                   for argv0 in (run.get("boundary") or {}).get("program_argv0", [])]
        assert "sh" in started or any(a.endswith("/sh") for a in started), started
        assert any(a.endswith("stage/bin/greet") for a in started), started


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_reference_survives_every_fuzzer_of_the_built_greet(ladder03: Ladder) -> None:
    got = await ladder03.grade(DEMO03 / "submissions" / "reference")
    env = got.envelope
    rounds = await ladder03.store.grading.adversary_rounds(got.run_id)
    assert [r.status for r in rounds] == ["survived"] * 6, [(r.status, r.notes) for r in rounds]
    assert env.valid and env.score == 100.0 and env.blocked_by is None, env.to_json()
    notes = [note for r in rounds for note in r.notes if note.startswith("fuzz_build")]
    # once per tree content: six rounds, two trees, two builds; the rest from the cache
    assert sorted(notes).count("fuzz_build original: built") == 1, notes
    assert sorted(notes).count("fuzz_build submission: built") == 1, notes
    assert len([n for n in notes if n.endswith(": cached")]) == 10, notes


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_build_that_fails_on_state_a_makes_the_round_invalid(
    ladder03: Ladder, tmp_path: Path
) -> None:
    task_dir = tmp_path / DEMO03.name
    shutil.copytree(DEMO03, task_dir, ignore=shutil.ignore_patterns("submissions"))
    script = task_dir / "tests" / "verification" / "fuzz-build.sh"
    script.write_text("#!/bin/sh\necho 'no toolchain here' >&2\nexit 3\n")
    load = load_task(task_dir)
    assert load.task is not None and load.ok, load.problems
    got = await ladder03.grade(DEMO03 / "submissions" / "reference", task=load.task)
    rounds = await ladder03.store.grading.adversary_rounds(got.run_id)
    assert rounds and all(r.status == "error" for r in rounds), [r.status for r in rounds]
    said = [" ".join(r.notes) + str(r.extra) for r in rounds]
    assert all("fuzz_build fails on State A" in text for text in said), said[0]
    assert not got.envelope.valid, got.envelope.to_json()


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_build_that_fails_on_the_submission_is_its_own_break(
    ladder03: Ladder, tmp_path: Path
) -> None:
    """A build script that refuses any tree without a Makefile: State A builds, the CMake
    port does not, so the fuzzers break it (the submission's own failure, not a fault)."""
    task_dir = tmp_path / DEMO03.name
    shutil.copytree(DEMO03, task_dir, ignore=shutil.ignore_patterns("submissions"))
    script = task_dir / "tests" / "verification" / "fuzz-build.sh"
    script.write_text('#!/bin/sh\nset -eu\n[ -f Makefile ] || { echo "no Makefile" >&2; '
                      'exit 4; }\nsh build.sh stage\n')
    load = load_task(task_dir)
    assert load.task is not None and load.ok, load.problems
    got = await ladder03.grade(DEMO03 / "submissions" / "reference", task=load.task)
    rounds = await ladder03.store.grading.adversary_rounds(got.run_id)
    assert all(r.status == "broken" for r in rounds), [(r.status, r.notes) for r in rounds]
    assert got.envelope.valid, got.envelope.to_json()
    upheld = [c for c in await ladder03.store.grading.counterexamples(got.run_id)
              if c.verdict == "upheld"]
    assert upheld and all("fuzz_build exits 4" in (c.extra["runs"][-1]["stderr_tail"] or "")
                          or c.exit_b == 1 for c in upheld)
