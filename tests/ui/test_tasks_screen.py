"""Pilot tests of the Tasks screen over the real built-in tasks and a broken task."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import DataTable, Input, Markdown, Static

from srb_tui.config import Settings
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.runs import RunsScreen
from srb_tui.ui.screens.tasks import TasksScreen
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_lists_builtin_tasks_and_shows_instruction(builtin_settings: Settings) -> None:
    app = create_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TasksScreen)
        table = app.screen.query_one("#task-table", DataTable)
        keys = [str(k.value) for k in table.rows]
        assert DEMO_TASK.name in keys
        heading = _text(app.screen.query_one("#task-heading", Static))
        assert DEMO_TASK.name in heading
        assert "5 gates" in heading
        markdown = app.screen.query_one("#task-instruction", Markdown)
        assert "csvtab" in markdown.source
        problems = _text(app.screen.query_one("#task-problems", Static))
        assert "valid" in problems


async def test_filter_narrows_and_escape_clears(builtin_settings: Settings) -> None:
    app = create_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("/")
        assert isinstance(app.focused, Input)
        await pilot.press(*"no-such-task")
        await pilot.pause()
        table = app.screen.query_one("#task-table", DataTable)
        assert table.row_count == 0
        assert "No task matches" in _text(app.screen.query_one("#task-heading", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count >= 1
        assert app.focused is table


async def test_broken_task_lists_its_problems(tmp_path: Path, state_dir: Path) -> None:
    root = tmp_path / "tasks"
    broken = root / "broken01"
    shutil.copytree(DEMO_TASK, broken, ignore=shutil.ignore_patterns("submissions"))
    manifest = broken / "task.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("timeout_sec = ", "timeout_secs = ", 1), encoding="utf-8")
    app = create_app(Settings(task_roots=(root,), state_dir=state_dir))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#task-table", DataTable)
        assert table.row_count == 1
        status = str(table.get_cell("broken01", "status"))
        assert status.startswith("invalid")
        problems = _text(app.screen.query_one("#task-problems", Static))
        assert "timeout_secs" in problems
        assert "error" in problems


async def test_empty_roots_explain_what_to_do(tmp_path: Path, state_dir: Path) -> None:
    app = create_app(Settings(task_roots=(tmp_path / "nothing",), state_dir=state_dir))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        markdown = app.screen.query_one("#task-instruction", Markdown)
        assert "No tasks found" in markdown.source
        assert "--tasks" in markdown.source


async def test_keys_switch_screens_and_user_keymap_rebinds(
    builtin_settings: Settings,
) -> None:
    (builtin_settings.state_dir / "keymap.toml").write_text('"app.runs" = "f2"\n')
    app = create_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        await pilot.pause()
        assert not isinstance(app.screen, RunsScreen)
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, TasksScreen)


async def test_broken_keymap_is_reported_not_fatal(builtin_settings: Settings) -> None:
    (builtin_settings.state_dir / "keymap.toml").write_text("this is = = not toml")
    app = create_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert app.keymap_problem is not None
        assert "keymap.toml" in app.keymap_problem
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_detail_lists_stages_and_prepare_caches_state_a(
    builtin_settings: Settings,
) -> None:
    app = create_app(builtin_settings)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.pause()
        heading = _text(app.screen.query_one("#task-heading", Static))
        assert "not prepared yet" in heading
        assert "no-python-sources" in heading
        assert "Adversaries:" in heading and "(fuzz)" in heading
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        heading = _text(app.screen.query_one("#task-heading", Static))
        assert "prepared: 12 files" in heading
    assert list((builtin_settings.cache_dir / "state-a").glob("*/strip-*/tree"))


async def test_keymap_names_unknown_actions_and_shadowed_keys(builtin_settings: Settings) -> None:
    """Issue 26, 9: an unknown binding id is named with a did-you-mean and left out; a
    key that takes over another binding's is named (and applied, as asked)."""
    (builtin_settings.state_dir / "keymap.toml").write_text(
        '"app.quit" = "t"\n"app.quitt" = "x"\n"app.theme" = "ctrl+y"\n')
    app = create_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        problem = app.keymap_problem or ""
        assert "unknown binding `app.quitt` (did you mean `app.quit`?)" in problem
        assert '`app.quit` = "t" shadows `app.tasks` (key t)' in problem
        assert "app.theme" not in problem  # a free key is no problem
        assert "app.quitt" not in app.user_keymap


async def test_the_state_a_line_is_read_again_when_tasks_is_shown_again(
    builtin_settings: Settings,
) -> None:
    """Issue 35 item 4: Tasks kept "State A cache: not prepared yet … press p" after a run
    prepared it. State A is prepared while Runs is shown (as a run prepares it); back on
    Tasks, the line is read again."""
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TasksScreen), "the Tasks screen")
        screen = app.screen
        assert isinstance(screen, TasksScreen)
        screen.select_task(DEMO_TASK.name)
        heading = screen.query_one("#task-heading", Static)
        await until(pilot, lambda: "not prepared yet" in str(heading.render()),
                    "the unprepared line")
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "Runs")
        load = app.run_host.catalog.find(DEMO_TASK.name)
        assert load is not None and load.task is not None
        await app.run_host.prepare_state_a(load.task, offline=True)
        await pilot.press("t")
        await until(pilot, lambda: "not prepared yet" not in str(heading.render()),
                    "the line read again on return")
