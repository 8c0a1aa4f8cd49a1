"""Pilot tests of the Runs screen over a real SQLite store."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.runs import RunsScreen
from tests.ui.helpers import quiet_app


async def test_empty_history_is_explained(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        message = str(app.screen.query_one("#runs-message", Static).render())
        assert "No runs yet" in message
        assert "srb run" in message
        assert not app.screen.query_one("#runs-table", DataTable).display


async def test_stored_runs_are_listed_newest_first(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        first = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                            agent="replay:reference")
        second = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                             agent="untouched")
        await store.runs.transition(second.id, "preparing")
        await store.runs.transition(second.id, "cancelled", "operator")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.display
        keys = [str(k.value) for k in table.rows]
        assert set(keys) == {first.id, second.id}
        row = table.get_row(second.id)
        assert row[2] == "untouched"
        assert str(row[3]) == "cancelled"


async def test_corrupt_store_is_reported_not_fatal(builtin_settings: Settings) -> None:
    builtin_settings.db_path.write_bytes(b"this is not a database" * 100)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        message = str(app.screen.query_one("#runs-message", Static).render())
        assert "srb.sqlite3" in message
    assert builtin_settings.db_path.read_bytes().startswith(b"this is not a database")


async def test_runs_graded_before_score_events_still_show_their_marks(
    builtin_settings: Settings,
) -> None:
    """An older srb recorded stage_finished events (or only score.json on disk) and no score
    event: the marks are rebuilt from those, not shown as "—"."""
    import json

    async with await Store.open(builtin_settings.db_path) as store:
        by_events = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                                agent="replay:subtle")
        by_file = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                              agent="untouched")
        nothing = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                              agent="replay:wrong")
        for run in (by_events, by_file, nothing):
            for status in ("preparing", "agent", "collecting", "audit", "behavioural",
                           "verification", "scored"):
                await store.runs.transition(run.id, status)
        await store.infra.add_event(by_events.id, "stage_finished",
                                    {"stage": "audit", "status": "ok", "gate": "pass"})
        await store.infra.add_event(by_events.id, "stage_finished",
                                    {"stage": "behavioural", "status": "ok", "complete": True})
        await store.infra.add_event(by_events.id, "stage_finished", {
            "stage": "verification", "status": "ok",
            "adversaries": {"f01": "survived", "f03": "broken"}})
    folder = builtin_settings.run_dir(by_file.id)
    folder.mkdir(parents=True)
    (folder / "score.json").write_text(json.dumps(
        {"audit_gate": "fail", "behavioural": {"complete": False},
         "verification": {"ran": False}}))
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#runs-table", DataTable)
        marks = {str(k.value): str(table.get_cell(k, "stages")).split() for k in table.rows}
        assert marks[by_events.id] == ["✓", "✓", "✗"]
        assert marks[by_file.id] == ["✗", "✗", "—"]
        assert marks[nothing.id] == ["—", "—", "—"]  # nothing recorded: nothing guessed
