"""Pilot tests of the Diff screen over the demo task's real submissions."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.diff import DiffScreen
from srb_tui.ui.widgets.diff_tree import DiffTree
from srb_tui.ui.widgets.diff_view import DiffView
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

SUBMISSIONS = DEMO_TASK / "submissions"


async def _open_diff(pilot: Any, screen: DiffScreen) -> None:
    await pilot.app.push_screen(screen)
    await until(pilot, lambda: screen.tree_shown)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _open_file(pilot: Any, screen: DiffScreen, path: str) -> DiffView:
    tree = screen.query_one(DiffTree)
    assert tree.reveal(path) is not None
    view = screen.query_one(DiffView)
    await until(pilot, lambda: view.prepared is not None and view.prepared.diff.path == path)
    await pilot.pause()
    return view


async def test_migration_tree_languages_and_counts(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = DiffScreen(left=SUBMISSIONS / "untouched", right=SUBMISSIONS / "reference")
        await _open_diff(pilot, screen)
        tree = screen.query_one(DiffTree)
        removed = {p for p, n in tree.file_nodes.items() if n.data and n.data.entry
                   and n.data.entry.status == "removed"}
        added = {p for p, n in tree.file_nodes.items() if n.data and n.data.entry
                 and n.data.entry.status == "added"}
        assert "csvtab/cli.py" in removed and "lib/cli.js" in added
        assert all(p.endswith((".py", ".toml")) for p in removed)
        label = str(tree.file_nodes["lib/cli.js"].label)
        assert label.startswith("+ cli.js") and "+241" in label  # count filled by the worker
        table = screen.query_one("#diff-languages", DataTable)
        python = table.get_row("Python")
        javascript = table.get_row("JavaScript")
        assert str(python[2]) == "—" and str(javascript[1]) == "—"
        assert int(str(javascript[2]).replace(",", "")) > 500
        summary = str(screen.query_one("#diff-summary", Static).render())
        assert "10 removed" in summary and "8 added" in summary


async def test_hunk_navigation_moves_the_cursor(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = DiffScreen(left=SUBMISSIONS / "untouched", right=SUBMISSIONS / "reference")
        await _open_diff(pilot, screen)
        view = await _open_file(pilot, screen, "README.md")
        assert len(view.hunk_rows) >= 3
        assert view.current_hunk == 0
        seen = [view.current_hunk]
        for key in ("n", "right_square_bracket"):
            await pilot.press(key)
            await pilot.pause()
            seen.append(view.current_hunk)
            top = view.scroll_offset.y
            assert top <= view.hunk_rows[view.current_hunk] < top + view.size.height
        assert seen == [0, 1, 2]
        await pilot.press("N")
        await pilot.pause()
        assert view.current_hunk == 1
        heading = str(screen.query_one("#diff-file", Static).render())
        assert "hunk 2/" in heading
        assert view.rows[view.hunk_rows[1]].kind == "hunk"


async def test_layout_toggle_keeps_the_hunk(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = DiffScreen(left=SUBMISSIONS / "reference", right=SUBMISSIONS / "subtle")
        await _open_diff(pilot, screen)
        view = await _open_file(pilot, screen, "lib/width.js")
        unified_rows = len(view.rows)
        await pilot.press("u")
        await pilot.pause()
        assert view.layout_mode == "split"
        assert {row.kind for row in view.rows} == {"hunk", "pair"}
        assert len(view.rows) < unified_rows  # removals paired with additions
        await pilot.press("u")
        await pilot.pause()
        assert view.layout_mode == "unified" and len(view.rows) == unified_rows


async def test_only_changed_toggle_and_search(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = DiffScreen(left=SUBMISSIONS / "reference", right=SUBMISSIONS / "subtle")
        await _open_diff(pilot, screen)
        tree = screen.query_one(DiffTree)
        assert tree.shown_files == 3  # README, width.js, the test file
        await pilot.press("o")
        await pilot.pause()
        assert tree.shown_files == 10
        await pilot.press("o", "slash")
        await pilot.press(*"caret")
        await pilot.press("enter")
        await until(pilot, lambda: screen.matches is not None)
        await pilot.pause()
        assert screen.matches is not None and "lib/width.js" in screen.matches
        assert set(tree.file_nodes) == set(screen.matches)
        status = str(screen.query_one("#diff-search-status", Static).render())
        assert "files match 'caret'" in status
        search = screen.query_one("#diff-search", Input)
        search.focus()
        await pilot.press("escape")
        await pilot.pause()
        assert screen.matches is None and tree.shown_files == 3


async def test_diff_of_a_stored_run(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:reference")
    shutil.copytree(SUBMISSIONS / "reference", builtin_settings.runs_dir / run.id / "submission")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = DiffScreen(run.id, settings=app.settings)
        await _open_diff(pilot, screen)
        assert screen.comparison is not None
        assert screen.comparison.get("lib/cli.js") is not None
        assert screen.comparison.right == builtin_settings.runs_dir / run.id / "submission"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)


async def test_run_without_submission_is_explained(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:reference")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = DiffScreen(run.id, settings=app.settings)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        summary = str(screen.query_one("#diff-summary", Static).render())
        assert run.id in summary and "no submission collected" in summary


def test_diff_screen_needs_trees() -> None:
    try:
        DiffScreen()
    except ValueError as exc:
        assert "run id or two folders" in str(exc)
    else:
        raise AssertionError("DiffScreen() accepted no source")


async def test_two_paths_from_tmp(builtin_settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.py").write_text("print(1)\n")
    (tmp_path / "b" / "x.js").write_text("console.log(1)\n")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = DiffScreen(left=tmp_path / "a", right=tmp_path / "b")
        await _open_diff(pilot, screen)
        assert sorted(screen.query_one(DiffTree).file_nodes) == ["x.js", "x.py"]


async def test_long_paths_keep_the_summary_on_one_line_at_80_columns(
        builtin_settings: Settings, tmp_path: Path) -> None:
    """The walk at 80×24: State A's cache path took two lines of the header. Each path is
    shown by its end, after "…", so both trees' line fits; wide, the whole paths."""
    deep = tmp_path / ("a-long-cache-folder-" * 4) / "strip-0" / "tree"
    shutil.copytree(SUBMISSIONS / "untouched", deep)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = DiffScreen(left=deep, right=SUBMISSIONS / "reference")
        await _open_diff(pilot, screen)
        summary = screen.query_one("#diff-summary", Static)
        first = str(summary.render()).splitlines()[0]
        assert len(first) <= summary.content_size.width, first
        assert "…" in first and first.split("  ↔  ")[0].endswith("strip-0/tree")
        await pilot.resize_terminal(240, 40)
        await until(pilot, lambda: "…" not in str(summary.render()).splitlines()[0],
                    "the whole paths")
