"""SVG snapshots of every screen of the console (pytest-textual-snapshot).

Update after an intended change with ``pytest tests/ui/test_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srb_tui.config import Settings
from srb_tui.store import Store
from tests.conftest import BUILTIN_TASKS, REPO
from tests.ui.helpers import quiet_app, settle, until

SIZE = (120, 34)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths on screen are shown relative to the working directory."""
    monkeypatch.chdir(REPO)


def _settings(state: Path) -> Settings:
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)


def test_tasks_screen(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=settle)


def test_tasks_screen_light_theme(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(quiet_app(_settings(state_dir)), press=["ctrl+t"],
                        terminal_size=SIZE, run_before=settle)


def test_tasks_screen_filter_without_match(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(quiet_app(_settings(state_dir)), press=["/", *"zzz"],
                        terminal_size=SIZE, run_before=settle)


def test_runs_screen_empty(snap_compare: Any, state_dir: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(state_dir.parent)  # the store path shows as state/srb.sqlite3
    assert snap_compare(quiet_app(_settings(state_dir)), press=["r"], terminal_size=SIZE,
                        run_before=settle)


def test_runs_screen_with_runs(snap_compare: Any, state_dir: Path) -> None:
    _seed_three_runs(state_dir)

    async def before(pilot: Any) -> None:
        await pilot.press("r")
        await settle(pilot)

    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=before)


def test_runs_screen_at_80x24(snap_compare: Any, state_dir: Path) -> None:
    """A small terminal: the footer shows the Runs screen's first keys, none cut."""
    _seed_three_runs(state_dir)

    async def before(pilot: Any) -> None:
        await pilot.press("r")
        await settle(pilot)

    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=(80, 24),
                        run_before=before)


def _seed_three_runs(state_dir: Path) -> None:
    async def seed() -> None:
        async with await Store.open(state_dir / "srb.sqlite3") as store:
            for n, agent in enumerate(("replay:reference", "untouched", "replay:subtle")):
                run = await store.runs.create_run(
                    task_id="demo01-csvtab-python-to-node",
                    task_path="tasks/demo01-csvtab-python-to-node", agent=agent,
                    budget_sec=1800.0, run_id=f"r-20261129-12000{n}-ab0{n}",
                )
                await store.runs.transition(run.id, "preparing")
                await store.runs.update_run(run.id, started_at=f"2026-11-29T12:00:0{n}.000000Z")
            await store.runs.transition("r-20261129-120001-ab01", "cancelled", "operator")
            # a fixed end: the Duration column (off-screen, it sizes the scroll bar) must not
            # grow with the day the test runs
            await store.runs.update_run("r-20261129-120001-ab01",
                                        finished_at="2026-11-29T12:03:01.000000Z")

    asyncio.run(seed())


# ---- Run screen and launch dialog (seeded, finished run: no clock in the picture) -------


RUN_TABS = {"2": "tab-transcript", "3": "tab-audit", "4": "tab-behavioural",
            "5": "tab-verification", "6": "tab-score"}


def _run_screen_before(*keys: str) -> Any:
    from textual.widgets import TabbedContent

    from srb_tui.ui.screens.run import RunScreen
    from srb_tui.ui.widgets.log_view import LogView
    from tests.ui.test_run_screen import LOG_LINES, RUN_ID

    async def before(pilot: Any) -> None:
        app = pilot.app
        app.open_run(RUN_ID)

        def log_shown() -> bool:
            screen = app.screen
            if not isinstance(screen, RunScreen) or screen.detail is None:
                return False
            log = screen.query_one("#run-log", LogView)
            return LOG_LINES in log.visible_seqs() and all(
                log.line_text(s) is not None for s in log.visible_seqs())

        await until(pilot, log_shown, "the run's last log page")
        if keys:
            await pilot.press(*keys)
            tabs = app.screen.query_one(TabbedContent)
            await until(pilot, lambda: tabs.active == RUN_TABS[keys[0]], "the tab")
        # the Run screen's bus listener never completes, so no settle(): one more pass
        await pilot.pause()

    return before


def test_run_screen_log(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_run_screen import seed_finished_run

    settings = _settings(state_dir)
    seed_finished_run(settings)
    assert snap_compare(quiet_app(settings), terminal_size=SIZE,
                        run_before=_run_screen_before())


def test_run_screen_audit(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_run_screen import seed_finished_run

    settings = _settings(state_dir)
    seed_finished_run(settings)
    # gates are ordered by id: node-is-primary (the failed one, with evidence) is second
    assert snap_compare(quiet_app(settings), terminal_size=SIZE,
                        run_before=_run_screen_before("3", "down"))


def test_run_screen_behavioural_small_terminal(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_run_screen import seed_finished_run

    settings = _settings(state_dir)
    seed_finished_run(settings)
    assert snap_compare(quiet_app(settings), terminal_size=(80, 24),
                        run_before=_run_screen_before("4", "down"))


def test_run_screen_verification(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_run_screen import seed_finished_run

    settings = _settings(state_dir)
    seed_finished_run(settings)
    assert snap_compare(quiet_app(settings), terminal_size=SIZE,
                        run_before=_run_screen_before("5", "down", "down"))


def test_launch_dialog_with_inline_error(snap_compare: Any, state_dir: Path) -> None:
    async def before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("l")
        await pilot.pause()
        pilot.app.screen.select_agent("command:")
        await pilot.press("ctrl+s")
        await pilot.pause()

    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=(80, 24),
                        run_before=before)


def test_launch_dialog(snap_compare: Any, state_dir: Path) -> None:
    async def before(pilot: Any) -> None:
        from srb_tui.ui.screens.launch import LaunchDialog

        await settle(pilot)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(pilot.app.screen, LaunchDialog), "the dialog")
        await pilot.pause()

    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=(80, 24),
                        run_before=before)


def test_confirm_dialog_over_the_run_screen(snap_compare: Any, state_dir: Path) -> None:
    """The yes/no dialog (as the Run screen's cancel asks it) over a finished run."""
    from srb_tui.ui.screens.run_dialogs import ConfirmDialog
    from tests.ui.test_run_screen import RUN_ID, seed_finished_run

    settings = _settings(state_dir)
    seed_finished_run(settings)
    show_run = _run_screen_before()

    async def before(pilot: Any) -> None:
        await show_run(pilot)
        dialog = ConfirmDialog(f"Cancel run {RUN_ID}?",
                               "The agent container gets TERM, then KILL after the grace "
                               "period. The run ends as cancelled, without a score.")
        await pilot.app.push_screen(dialog)
        await until(pilot, lambda: pilot.app.screen is dialog and dialog.is_mounted,
                    "the dialog")
        await pilot.pause()

    assert snap_compare(quiet_app(settings), terminal_size=SIZE, run_before=before)


# ---- inspection screens: Diff, Counterexamples, Runs table with funnel and compare --------


def _diff_before(*keys: str) -> Any:
    async def before(pilot: Any) -> None:
        from srb_tui.ui.screens.diff import DiffScreen
        from srb_tui.ui.widgets.diff_tree import DiffTree
        from srb_tui.ui.widgets.diff_view import DiffView

        submissions = BUILTIN_TASKS / "demo01-csvtab-python-to-node" / "submissions"
        screen = DiffScreen(left=submissions / "untouched", right=submissions / "reference")
        await pilot.app.push_screen(screen)
        await until(pilot, lambda: screen.tree_shown, "the diff tree")
        await settle(pilot)
        screen.query_one(DiffTree).reveal("README.md")
        view = screen.query_one(DiffView)
        await until(pilot, lambda: view.prepared is not None, "the README's diff")
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return before


def test_diff_screen_unified(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=_diff_before("n"))


def test_diff_screen_side_by_side(snap_compare: Any, state_dir: Path) -> None:
    assert snap_compare(quiet_app(_settings(state_dir)), terminal_size=SIZE,
                        run_before=_diff_before("u"))


def test_counterexamples_screen(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_counterexamples_screen import RUN_ID, seed_counterexamples

    settings = _settings(state_dir)
    asyncio.run(seed_counterexamples(settings))

    async def before(pilot: Any) -> None:
        from srb_tui.ui.screens.counterexamples import CounterexamplesScreen

        await pilot.app.push_screen(CounterexamplesScreen(pilot.app.run_host, RUN_ID))
        await settle(pilot)

    assert snap_compare(quiet_app(settings), terminal_size=SIZE, run_before=before)


def test_runs_screen_funnel_and_compare(snap_compare: Any, state_dir: Path) -> None:
    from tests.ui.test_runs_table import _seed

    settings = _settings(state_dir)
    asyncio.run(_seed(settings))

    async def before(pilot: Any) -> None:
        from textual.widgets import DataTable

        await pilot.press("r")
        await settle(pilot)
        table = pilot.app.screen.query_one("#runs-table", DataTable)
        table.move_cursor(row=table.get_row_index("r-20261129-120000-ab00"))
        await pilot.press("space")
        table.move_cursor(row=table.get_row_index("r-20261129-120002-ab02"))
        await pilot.press("c")
        await settle(pilot)

    assert snap_compare(quiet_app(settings), terminal_size=SIZE, run_before=before)
