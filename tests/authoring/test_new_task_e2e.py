"""The author's whole path on a real engine, for a program that is not a demo: ``roman``
(Python, State A) made into a task by ``srb tasks new`` from fresh folders, an honest
Node.js port written as the reference, ``srb tasks record`` (State A scores 1.0 against
its recorded answers), then srb's grading ladder: the reference scores 100 and is valid,
State A handed back unchanged (``untouched``) scores 0, stopped by the task's own offline
reviewer.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

from ..ladder.harness import BASE_IMAGE, Ladder
from ..ladder.test_commands import parse, run_handler
from .helpers import TASK_ID, roman_argv, run_new
from .roman import write_port

pytestmark = [pytest.mark.docker, pytest.mark.asyncio]

ADVERSARY_BUDGET_SEC = 8.0


def _make_task(tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]) -> Path:
    code = run_new(settings, *roman_argv(tmp_path, settings.task_roots[0]), json_mode=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == codes.OK and doc["recorded"], doc
    task = Path(doc["path"])
    reference = task / "submissions" / "reference"
    shutil.rmtree(reference)
    write_port(reference)
    return task


async def test_a_task_made_by_srb_tasks_new_grades_its_reference_at_100(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(task_roots=(tmp_path / "tasks",), state_dir=tmp_path / "state")
    settings.task_roots[0].mkdir()
    task_dir = _make_task(tmp_path, settings, capsys)

    # srb tasks record: the identity run (the handler runs its own loop: in a thread)
    args = parse("tasks", "record", TASK_ID, "--json")
    code = await asyncio.to_thread(run_handler, args, settings)
    identity = json.loads(capsys.readouterr().out)
    assert code == codes.OK, identity
    assert [(m["id"], m["status"], m["rate"], m["scored"]) for m in identity["modules"]] == [
        ("cases", "ok", 1.0, 8)]

    load = load_task(task_dir)
    assert load.task is not None and load.ok, load.problems
    task = load.task
    state_a = prepare_state_a(task_dir, task.state_a, tmp_path / "cache").tree
    engine = DockerEngine(RunnerPool(2))
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    for stage in ("audit", "behavioural", "verification"):
        await images.get(stage)
    store = await Store.open(tmp_path / "srb.sqlite3")
    try:
        ladder = Ladder(engine, store, task, state_a, tmp_path / "ladder")
        submissions = task_dir / "submissions"
        reference = await ladder.grade(submissions / "reference",
                                       adversary_budget_sec=ADVERSARY_BUDGET_SEC)
        env = reference.envelope
        assert env.audit_gate == "pass", env
        assert env.behavioural["complete"] is True, env.behavioural
        assert env.verification["ran"] is True and env.verification["models_survived"] == 6, \
            env.verification
        assert env.score == 100.0 and env.valid, env

        graded = await ladder.grade(submissions / "untouched")
        untouched = graded.envelope
        assert untouched.score == 0.0 and untouched.valid
        assert untouched.audit_gate == "fail" and untouched.blocked_by == "audit"
        assert untouched.behavioural["complete"] is True  # State A is its own oracle
        assert untouched.verification["ran"] is False
        verdicts = {g.gate_id: g.verdict for g in await store.grading.gate_outcomes(graded.run_id)}
        assert verdicts == {"no-source-files": "fail", "no-source-runtime": "fail",
                            "target-present": "fail", "entry-is-target": "fail",
                            "no-embedded-original": "pass"}, verdicts
    finally:
        await store.close()
        engine.close()
