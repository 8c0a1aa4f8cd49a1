"""One key from the Behavioural tab to the one failing check among thousands (issue 38
item 2b): ``F`` keeps the failing modules and lands the cursor on the failing check, its
expected vs actual shown; ``F`` again brings every module back in its order.

The store is written directly (no Docker run): 14 modules of 250 checks, one failing
(``m03-00241``, as the scale fixture's ``fail-1``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from tests.ui.helpers import quiet_app, until

MODULES = [f"m{m:02d}" for m in range(1, 15)]
PER = 250
FAILING = "m03-00241"


async def _seed(settings: Settings) -> str:
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id="scale01", task_path="tasks/scale01",
                                          agent="replay:fail-1")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.runs.transition(run.id, status)
        results = []
        for mid in MODULES:
            checks: list[dict[str, Any]] = [{"id": f"{mid}-{k:05d}", "verdict": "pass"}
                                            for k in range(1, PER + 1)]
            failed = 0
            for n, check in enumerate(checks):
                if check["id"] == FAILING:
                    checks[n] = {"id": FAILING, "verdict": "fail", "summary": "row differs",
                                 "detail": "expected: 'r000240\\tfault-one'\n"
                                           "actual: 'r000240\\tFAULT-ONE'"}
                    failed = 1
            await store.grading.record_checks(run.id, "behavioural", checks, module_id=mid)
            results.append({"id": mid, "status": "ok", "passed": PER - failed,
                            "failed": failed, "scored": PER})
        await store.grading.record_module_results(run.id, "behavioural", results)
        await store.grading.record_stage_result(run.id, "behavioural", "ok", duration_sec=1.0)
        for status in ("verification", "scored"):
            await store.runs.transition(run.id, status)
        await store.runs.update_run(run.id, finished_at="2026-12-01T00:00:00.000000Z",
                                    score=40.0, max_score=100.0, valid=True)
        return run.id


def _footer(screen: Any) -> list[str]:
    return [str(k.description) for k in screen.query(FooterKey)]


def _keys(table: DataTable[Any]) -> list[str]:
    return [str(table.get_row_at(r)[0]) for r in range(table.row_count)]


async def test_one_key_lands_on_the_failing_check(state_dir: Path) -> None:
    # Waits are conditions (``until``) and ``pilot.pause``: the Run screen keeps a worker
    # listening for the run's events, so waiting for every worker to finish never returns.
    settings = Settings(task_roots=(state_dir / "tasks",), state_dir=state_dir)
    run_id = await _seed(settings)
    app = quiet_app(settings)
    async with app.run_test(size=(160, 45)) as pilot:
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run detail")
        screen = app.screen
        await until(pilot, lambda: "Back" in _footer(screen), "the footer")
        assert "Failing only" not in _footer(screen)  # the Behavioural tab's own key
        await pilot.press("4")
        modules = screen.query_one("#behav-modules", DataTable)
        checks = screen.query_one("#behav-checks", DataTable)
        await until(pilot, lambda: modules.has_focus and _keys(modules) == MODULES,
                    "the modules table")
        assert modules.cursor_row == 0 and checks.row_count == 0  # m01 passes
        await until(pilot, lambda: "Failing only" in _footer(screen), "F in the key hints")

        await pilot.press("F")  # one key
        await until(pilot, lambda: checks.has_focus and _keys(checks) == [FAILING],
                    "the failing check under the cursor")
        assert _keys(modules) == ["m03"]
        assert str(checks.get_row_at(checks.cursor_row)[0]) == FAILING
        box = screen.query_one("#behav-check-detail", Static)
        console = Console(width=160, color_system=None, record=True)
        console.print(box.content)  # type: ignore[arg-type]
        assert "FAULT-ONE" in console.export_text()  # its expected vs actual below
        summary = screen.query_one("#behav-summary", Static)
        console.print(summary.content)  # type: ignore[arg-type]
        assert "failing only (F: every module)" in console.export_text()

        await pilot.press("F")  # every module again, in order, the cursor kept on m03
        await until(pilot, lambda: modules.has_focus and _keys(modules) == MODULES,
                    "every module again")
        assert str(modules.get_row_at(modules.cursor_row)[0]) == "m03"
