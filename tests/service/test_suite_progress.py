"""Stage II while it runs (issue 35 item 4): the grader's per-module lines become Progress
events and the run's ``behavioural_progress`` table, in the grader's order, and the Run
screen's Stage II tab shows the module that runs — also for a run another process drives
(the screen reads a live run again every few seconds). Real store, real Textual."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from srb_tui.config import Settings
from srb_tui.service.events import Progress
from srb_tui.service.grading.stages.suite_progress import PROGRESS_MARK, SuiteProgress
from srb_tui.store import Store
from srb_tui.store.run_extra_more import ModuleProgress
from srb_tui.ui.widgets.behavioural_pane import BehaviouralPane, live_summary
from tests.conftest import BUILTIN_TASKS, DEMO_TASK
from tests.ui.helpers import quiet_app, until


def _line(**doc: object) -> bytes:
    return PROGRESS_MARK + json.dumps(doc).encode()


async def test_progress_lines_reach_the_bus_and_the_store(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="t", task_path="/t", agent="untouched",
                                          budget_sec=60)
        await store.runs.merge_extra(run.id, {"behavioural_progress": {"old": {"module": "old"}}})
        heard: list[object] = []
        progress = SuiteProgress(store, run.id, heard.append)
        await progress.begin()
        assert "behavioural_progress" not in (await store.runs.require_run(run.id)).extra
        progress.on_line(b"a line of the grader that is not progress")
        progress.on_line(PROGRESS_MARK + b"{not json")
        progress.on_line(_line(module="m1", index=1, total=2, state="running", at="x"))
        progress.on_line(_line(module="m1", index=1, total=2, state="ok", passed=3,
                               scored=4, at="y"))
        progress.on_line(_line(module="m2", index=2, total=2, state="running", at="z"))
        await progress.drain()
        table = ModuleProgress.read_all((await store.runs.require_run(run.id)).extra)
    assert [str(getattr(e, "message", "")) for e in heard] == [
        "behavioural: module 1/2 m1 running",
        "behavioural: module 1/2 m1 ok, 3/4 checks pass",
        "behavioural: module 2/2 m2 running",
    ]
    assert all(isinstance(e, Progress) for e in heard)
    assert table["m1"].state == "ok" and (table["m1"].passed, table["m1"].scored) == (3, 4)
    assert table["m2"].state == "running"


def test_live_summary_names_the_running_module() -> None:
    now = datetime(2026, 12, 5, 12, 0, 0, tzinfo=UTC)
    start = (now - timedelta(seconds=65)).isoformat().replace("+00:00", "Z")
    recs = [ModuleProgress("formats", 1, 3, "ok", start, 40, 40),
            ModuleProgress("unicode", 2, 3, "running", start)]
    assert live_summary(recs, now) == "Module 2 of 3 running: unicode (1:05); 1 ended."
    assert live_summary(recs[:1], now).startswith("1 of 3 modules ended")


async def test_the_stage_two_tab_shows_the_running_module_of_another_process(
    tmp_path: Path,
) -> None:
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=tmp_path / "state")
    settings.state_dir.mkdir(parents=True)
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:reference", budget_sec=60)
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.runs.transition(run.id, status)
    app = quiet_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(run.id)
        await until(pilot, lambda: app.screen.query(BehaviouralPane), "the Run screen")
        pane = app.screen.query_one(BehaviouralPane)
        await until(pilot, lambda: pane.task_def is not None, "the task's modules")
        # Another process (a store of its own) reports the first module running.
        async with await Store.open(settings.db_path) as other:
            assert pane.task_def is not None
            first = pane.task_def.module_ids[0]
            at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
            await other.runs.merge_extra(run.id, into={"behavioural_progress": {first: {
                "module": first, "index": 1, "total": 2, "state": "running", "at": at}}})

        def cell() -> str:
            table = pane.query_one("#behav-modules")
            try:
                return str(table.get_row(first)[6])  # type: ignore[attr-defined]
            except Exception as exc:
                return f"! {exc!r}"

        try:
            await until(pilot, lambda: cell().startswith("running"), "the running module",
                        timeout=15)
        except AssertionError:
            screen = app.screen
            raise AssertionError((cell(), getattr(screen, "detail", None) and
                                  screen.detail.run.extra, first)) from None
        summary = str(pane.query_one("#behav-summary").render())
        assert f"running: {first}" in summary
