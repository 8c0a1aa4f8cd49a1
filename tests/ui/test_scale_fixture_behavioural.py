"""Issue 38 item 2: the generated fw03-size task (bench/scale_fixture.py: 14 modules, 25,000
checks recorded from State A) graded for real -- the ``fail-1`` submission through srb's
Stage II (``run_behavioural``: a stage container, the in-container grader, the host's check
of the result, the module and check rows written to the store) -- and its one failing check
found in the console's Behavioural tab: the module table says which module fails, and the
one key that puts the cursor on that module filters the checks table to its failing
check, with expected against actual."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.service.app import open_service
from srb_tui.service.grading.stages.behavioural import run_behavioural
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.ui.screens.run import RunScreen
from tests.ui.helpers import quiet_app, settle, until

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import scale_fixture

pytestmark = [pytest.mark.docker]

# Where seed 38 puts the fail-1 submission's one differing row (bench/scale_fixture.py).
FAILING_MODULE = "m03"
FAILING_CHECK = "m03-00241"


def _quiet(_event: object) -> None:
    return None


def _text(box: Static) -> str:
    console = Console(width=200, record=True)
    console.print(box.render())
    return console.export_text()


async def _grade_fail_1(settings: Settings, task_dir: Path) -> str:
    async with open_service(settings) as core:
        await core.connect()
        load = core.catalog.find(task_dir.name)
        assert load is not None and load.task is not None
        task = load.task
        original = (await core.prepare_state_a(task)).tree
        store = await core.store()
        run = await store.create_run(task_id=task.id, task_path=str(task_dir),
                                     agent="replay:fail-1")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.transition(run.id, status)
        images = StageImages(core.engine, task, settings.base_image, _quiet, run_id=run.id)
        outcome = await run_behavioural(
            engine=core.engine, store=store, run_id=run.id, task=task, original=original,
            submission=task_dir / "submissions" / "fail-1", images=images, publish=_quiet)
        assert outcome.status == "ok", outcome
        checks = await store.checks(run.id, "behavioural")
        assert len(checks) == 25_000
        assert [c.check_id for c in checks if c.verdict != "pass"] == [FAILING_CHECK]
        await store.record_stage_result(run.id, "behavioural", "ok", duration_sec=1.0)
        for status in ("verification", "scored"):  # finished: the screen follows nothing
            await store.transition(run.id, status)
        await store.update_run(run.id, finished_at="2026-12-06T00:00:00.000000Z", score=0.0,
                               max_score=100.0, valid=True)
        return run.id


async def test_the_one_failing_check_of_25000_is_one_key_away(tmp_path: Path) -> None:
    task_dir = scale_fixture.build(tmp_path / "tasks", 25_000, 14)
    settings = Settings(task_roots=(tmp_path / "tasks",), state_dir=tmp_path / "state")
    run_id = await _grade_fail_1(settings, task_dir)

    app = quiet_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run detail", timeout=30)
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        summary = _text(screen.query_one("#behav-summary", Static))
        assert "24999/25000 checks pass" in summary
        modules = screen.query_one("#behav-modules", DataTable)
        checks = screen.query_one("#behav-checks", DataTable)
        failed = {str(modules.get_row_at(r)[0]): str(modules.get_row_at(r)[3])
                  for r in range(modules.row_count)}
        assert failed == {f"m{k:02d}": "1" if f"m{k:02d}" == FAILING_MODULE else "0"
                          for k in range(1, 15)}
        target = modules.get_row_index(FAILING_MODULE)
        modules.focus()
        modules.move_cursor(row=target - 1)
        await settle(pilot)
        assert checks.row_count == 0 and not checks.display

        await pilot.press("down")  # the one key: the cursor onto the failing module
        await settle(pilot)
        assert modules.cursor_row == target
        assert checks.display
        assert [str(checks.get_row_at(r)[0]) for r in range(checks.row_count)] == \
            [FAILING_CHECK]
        shown = _text(screen.query_one("#behav-check-detail", Static))
        assert "fault-one" in shown and "FAULT-ONE" in shown
