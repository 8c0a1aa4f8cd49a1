"""Pilot tests of the Runs screen over a real SQLite store."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.runs import RunsScreen


async def test_empty_history_is_explained(builtin_settings: Settings) -> None:
    app = create_app(builtin_settings)
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
        first = await store.create_run(task_id="demo01", task_path="tasks/demo01",
                                       agent="replay:reference")
        second = await store.create_run(task_id="demo01", task_path="tasks/demo01",
                                        agent="untouched")
        await store.transition(second.id, "preparing")
        await store.transition(second.id, "cancelled", "operator")
    app = create_app(builtin_settings)
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
    app = create_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        message = str(app.screen.query_one("#runs-message", Static).render())
        assert "srb.sqlite3" in message
    assert builtin_settings.db_path.read_bytes().startswith(b"this is not a database")
