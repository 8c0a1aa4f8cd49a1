"""The Behavioural tab's keys (issue 38 item 4): the module table's cursor shows the
module's failing checks as it moves (the same frame, not a message later), and moving
through failing checks whose details differ in height never cuts one (the check box is
laid out again exactly when its height changes)."""

from __future__ import annotations

from rich.console import Console
from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.widgets.behavioural_pane import AT_ONCE
from tests.ui.helpers import quiet_app, until

LONG = "\n".join(f"line {n} of a long detail" for n in range(1, 9))


def _detail(n: int) -> str:
    if n == 2:
        return f"expected: 'row {n}'\nactual: '{LONG}'"
    return f"expected: 'row {n}'\nactual: 'ROW {n}'"


async def _seed(settings: Settings) -> str:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id="keys01", task_path="tasks/keys01",
                                          agent="replay:keys")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.runs.transition(run.id, status)
        modules = []
        # m1: no failing check; m2: four with details of different heights; m3: more
        # failing checks than are shown in the cursor's own frame
        for mid, failing in (("m1", 0), ("m2", 4), ("m3", AT_ONCE + 5)):
            checks = [{"id": f"{mid}-{k}", "verdict": "fail", "summary": f"differs {k}",
                       "detail": _detail(k)} for k in range(failing)]
            checks.append({"id": f"{mid}-ok", "verdict": "pass"})
            await store.grading.record_checks(run.id, "behavioural", checks, module_id=mid)
            modules.append({"id": mid, "status": "ok", "passed": 1, "failed": failing,
                            "scored": failing + 1})
        await store.grading.record_module_results(run.id, "behavioural", modules)
        await store.grading.record_stage_result(run.id, "behavioural", "ok", duration_sec=1.0)
        for status in ("verification", "scored"):  # finished: the screen follows nothing
            await store.runs.transition(run.id, status)
        await store.runs.update_run(run.id, finished_at="2026-12-01T00:00:00.000000Z", score=40.0,
                                    max_score=100.0, valid=True)
        return run.id


def _shown(box: Static) -> str:
    console = Console(width=200, color_system=None, record=True)
    console.print(box.content)  # type: ignore[arg-type]
    return console.export_text()


async def test_cursor_shows_the_modules_checks_at_once_and_no_detail_is_cut(
        state_dir: object) -> None:
    from pathlib import Path

    assert isinstance(state_dir, Path)
    settings = Settings(task_roots=(state_dir / "tasks",), state_dir=state_dir)
    run_id = await _seed(settings)
    app = quiet_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run detail")
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        screen = app.screen
        modules = screen.query_one("#behav-modules", DataTable)
        checks = screen.query_one("#behav-checks", DataTable)
        box = screen.query_one("#behav-check-detail", Static)
        modules.move_cursor(row=modules.get_row_index("m1"))
        await pilot.pause()
        assert checks.row_count == 0 and not checks.display

        modules.move_cursor(row=modules.get_row_index("m2"))  # no await: synchronous
        assert [str(checks.get_row_at(r)[0]) for r in range(checks.row_count)] == \
            ["m2-0", "m2-1", "m2-2", "m2-3"]
        assert "ROW 0" in _shown(box)
        await pilot.pause()

        modules.move_cursor(row=modules.get_row_index("m3"))  # a long list: a frame later
        assert checks.row_count == 4
        await pilot.pause()
        assert checks.row_count == AT_ONCE + 5

        modules.move_cursor(row=modules.get_row_index("m2"))
        await pilot.pause()
        checks.focus()
        heights = []
        for k in range(4):  # 0 short, 1 short, 2 long, 3 short
            checks.move_cursor(row=k)
            await pilot.pause()
            text = _shown(box)
            assert f"'row {k}'" in text
            wanted = box.get_content_height(screen.size, app.size, box.content_region.width)
            assert box.content_region.height == wanted, (k, box.content_region, wanted)
            heights.append(box.content_region.height)
            if k == 2:
                assert "line 8 of a long detail" in text
        assert heights[2] > heights[1] and heights[3] == heights[1] == heights[0]
