"""What a new user meets in the console (issue 26): two task roots holding one task id, the
keys (`?` everywhere, Esc closing the keys panel, the palette, the footers, 1–6 in tab
order, the Campaign screen's focus), and texts that said the wrong thing (a broken
task.toml, imported runs, Export on an empty report). Real store, real Textual, Pilot."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.command import CommandPalette
from textual.widgets import DataTable, Input, Markdown, Static, TabbedContent, TabPane
from textual.widgets._footer import FooterKey

from srb_tui.config import Settings
from srb_tui.reports.import_job import read_job
from srb_tui.service.catalog import load_catalog
from srb_tui.store import Store
from srb_tui.ui.app import SrbApp
from srb_tui.ui.screens.campaign import CampaignScreen
from srb_tui.ui.screens.launch import LaunchDialog
from srb_tui.ui.screens.reports import ReportsScreen
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.runs import RunsScreen
from srb_tui.ui.screens.tasks import TasksScreen
from tests.conftest import BUILTIN_TASKS
from tests.ui.helpers import quiet_app, settle, until
from tests.ui.test_run_screen import RUN_ID, seed_run

DEMO = "demo01-csvtab-python-to-node"


def _two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Root ``a`` with both built-in tasks, root ``b`` with a copy of demo01 (same id)."""
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(BUILTIN_TASKS, first)
    second.mkdir()
    shutil.copytree(BUILTIN_TASKS / DEMO, second / DEMO)
    (second / DEMO / "instruction.md").write_text("# the copy's instruction\n")
    return first, second


def _messages(app: SrbApp) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def _footer(app: SrbApp) -> list[tuple[str, str]]:
    return [(k.key_display, k.description) for k in app.screen.query(FooterKey)
            if not k.has_class("-command-palette")]


# ---- 1: the same task id under two roots --------------------------------------------


def test_the_catalog_keeps_the_first_roots_task_and_names_the_other(tmp_path: Path) -> None:
    first, second = _two_roots(tmp_path)
    catalog = load_catalog([second, first])  # root order decides, not path order
    assert catalog.ids().count(DEMO) == 1
    load = catalog.find(DEMO)
    assert load is not None and load.path == second / DEMO
    [duplicate] = catalog.duplicates
    assert (duplicate.used, duplicate.ignored) == (second / DEMO, (first / DEMO,))
    assert str(second / DEMO) in duplicate.message and str(first / DEMO) in duplicate.message
    assert load_catalog([first]).duplicates == ()


async def test_the_console_opens_over_two_roots_with_one_id_and_warns_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, _second = _two_roots(tmp_path)
    monkeypatch.chdir(tmp_path)
    settings = Settings(task_roots=(Path("a"), Path("b")), state_dir=tmp_path / "state")
    app = quiet_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TasksScreen)
        table = app.screen.query_one("#task-table", DataTable)
        assert [str(k.value) for k in table.rows] == sorted(p.name for p in first.iterdir())
        warnings = [m for m in _messages(app) if "two task roots" in m]
        assert len(warnings) == 1, _messages(app)
        assert f"using a/{DEMO}" in warnings[0] and f"ignoring b/{DEMO}" in warnings[0]
        source = app.screen.query_one("#task-instruction", Markdown).source
        assert "the copy's instruction" not in source  # the first root's task is shown


def test_two_roots_snapshot_80x24(snap_compare: Any, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _two_roots(tmp_path)
    monkeypatch.chdir(tmp_path)
    settings = Settings(task_roots=(Path("a"), Path("b")), state_dir=tmp_path / "state")
    assert snap_compare(quiet_app(settings), terminal_size=(80, 24), run_before=settle)


def test_two_roots_snapshot_120x40(snap_compare: Any, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _two_roots(tmp_path)
    monkeypatch.chdir(tmp_path)
    settings = Settings(task_roots=(Path("a"), Path("b")), state_dir=tmp_path / "state")
    assert snap_compare(quiet_app(settings), terminal_size=(120, 40), run_before=settle)


# ---- 10: keys --------------------------------------------------------------------------


def _keys_open(app: SrbApp) -> bool:
    return bool(app.screen.query("HelpPanel"))


@pytest.mark.parametrize("mode", ["tasks", "runs", "campaign", "reports"])
async def test_question_mark_opens_the_keys_and_escape_closes_them(
    builtin_settings: Settings, mode: str,
) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.switch_mode(mode)
        await settle(pilot)
        screen = app.screen
        assert ("?", "Keys") in _footer(app)
        await pilot.press("question_mark")
        await until(pilot, lambda: _keys_open(app), "the keys panel")
        await pilot.press("escape")
        await until(pilot, lambda: not _keys_open(app), "the keys panel closed")
        assert app.screen is screen  # Esc closed the panel, nothing else
        await pilot.press("question_mark")
        await until(pilot, lambda: _keys_open(app), "the keys panel again")
        await pilot.press("question_mark")
        await until(pilot, lambda: not _keys_open(app), "`?` closes it too")


async def test_keys_on_the_run_screen_and_the_launch_dialog(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, LaunchDialog), "the launch dialog")
        await until(pilot, lambda: _footer(app), "the dialog's footer")
        shown = [d for _, d in _footer(app)]
        assert shown[:2] == ["Launch", "Cancel"], shown
        assert "Filter" not in shown and "Prepare" not in shown  # not the Tasks keys
        await pilot.press("question_mark")
        await until(pilot, lambda: _keys_open(app), "the keys panel over the dialog")
        await pilot.press("escape")
        await until(pilot, lambda: not _keys_open(app), "closed")
        assert isinstance(app.screen, LaunchDialog)  # Esc closed the panel, not the dialog
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TasksScreen), "the dialog closed")

        app.open_run(RUN_ID)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the Run screen")
        run_screen = app.screen
        await pilot.press("question_mark")
        await until(pilot, lambda: _keys_open(app), "the keys panel on the Run screen")
        await pilot.press("escape")
        await until(pilot, lambda: not _keys_open(app), "closed")
        assert app.screen is run_screen
        await pilot.press("escape")  # no panel: Esc is the screen's Back again
        await until(pilot, lambda: isinstance(app.screen, TasksScreen), "back")


async def test_question_mark_in_a_filter_is_typed(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "question_mark")
        await pilot.pause()
        assert app.screen.query_one("#task-filter", Input).value == "?"
        assert not _keys_open(app)


async def test_run_keys_one_to_six_follow_the_tabs(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(RUN_ID)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the Run screen")
        tabs = app.screen.query_one(TabbedContent)
        order = [pane.id for pane in tabs.query(TabPane)]
        assert len(order) == 6
        for key, pane in reversed(list(enumerate(order, start=1))):
            await pilot.press(str(key))
            await until(pilot, lambda p=pane: tabs.active == p, f"key {key} shows {pane}")


async def test_palette_starts_with_srb_keys_and_help_finds_them(
    builtin_settings: Settings,
) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.focused is app.screen.query_one("#task-table")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        options = app.screen.query_one("CommandList")
        await until(pilot, lambda: options.option_count > 0, "the palette's list")
        prompts = [str(options.get_option_at_index(i).prompt)
                   for i in range(options.option_count)]
        assert not any("Cursor" in p or "Page" in p for p in prompts), prompts
        assert any("Campaign" in p and "m · " in p for p in prompts), prompts
        assert any("Reports" in p and "b · " in p for p in prompts), prompts
        await pilot.press(*"help")
        await until(pilot, lambda: options.option_count > 0
                    and "Keys" in str(options.get_option_at_index(0).prompt), "Keys by help")
        await pilot.press("enter")
        await until(pilot, lambda: _keys_open(app), "the keys panel from the palette")


async def test_m_and_b_are_in_the_footer(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: _footer(app), "the footer")
        assert ("m", "Campaign") in _footer(app) and ("b", "Reports") in _footer(app)


async def _seed_runs_without_campaign(state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(state_dir / "srb.sqlite3") as store:
        run = await store.runs.create_run(
            task_id=DEMO,
            task_path=f"tasks/{DEMO}",
            agent="untouched",
            budget_sec=60.0,
            run_id="r-20261129-120000-ab00",
        )
        await store.runs.transition(run.id, "cancelled", "operator")


async def test_campaign_screen_without_campaign_leaves_the_keys_alone(
    builtin_settings: Settings,
) -> None:
    await _seed_runs_without_campaign(builtin_settings.state_dir)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CampaignScreen)
        assert "No campaign" in str(screen.query_one("#campaign-title", Static).render())
        assert not isinstance(screen.focused, Input)
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ReportsScreen), "b went to Reports")
        assert screen.query_one("#campaign-filter", Input).value == ""
        await pilot.press("m", "r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "r went to Runs")
        assert screen.query_one("#campaign-filter", Input).value == ""


def test_campaign_without_campaign_snapshot_80x24(snap_compare: Any, state_dir: Path) -> None:
    asyncio.run(_seed_runs_without_campaign(state_dir))
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
    assert snap_compare(quiet_app(settings), press=["m"], terminal_size=(80, 24),
                        run_before=settle)


def test_keys_panel_snapshot_80x24(snap_compare: Any, state_dir: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BUILTIN_TASKS.parent)
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
    assert snap_compare(quiet_app(settings), press=["question_mark"], terminal_size=(80, 24),
                        run_before=settle)


# ---- 11: texts -------------------------------------------------------------------------


async def test_a_broken_task_toml_does_not_claim_no_instruction(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    shutil.copytree(BUILTIN_TASKS / DEMO, root / DEMO)
    (root / DEMO / "task.toml").write_text("[task\nbroken = ")
    app = quiet_app(Settings(task_roots=(root,), state_dir=tmp_path / "state"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        source = app.screen.query_one("#task-instruction", Markdown).source
        assert "ships no instruction.md" not in source
        assert "does not load" in source
        assert "task.toml" in str(app.screen.query_one("#task-problems", Static).render())


async def test_export_on_an_empty_report_says_so(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("e")
        await until(pilot, lambda: any("Nothing to export" in m for m in _messages(app)),
                    "the export's message")
        assert not (builtin_settings.state_dir / "report.md").exists()


async def _import_one(settings: Settings, tmp_path: Path) -> str:
    from tests.reports.test_import import _job

    trials, problems = read_job(_job(tmp_path))
    assert not problems
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(settings.db_path) as store:
        ids = await store.imports.import_runs(
            [{**dataclasses.asdict(trials[0]), "job": "job-0807"}]
        )
    return ids[0]


async def test_an_imported_run_says_where_it_came_from(builtin_settings: Settings,
                                                      tmp_path: Path) -> None:
    run_id = await _import_one(builtin_settings, tmp_path)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the imported run")
        await until(pilot, lambda: "imported from" in str(
            app.screen.query_one("#run-timeline", Static).render()), "the import line")
        timeline = str(app.screen.query_one("#run-timeline", Static).render())
        assert "not run by srb" in timeline and "preparing" not in timeline
        await pilot.press("3")
        await until(pilot, lambda: app.screen.query_one(TabbedContent).active == "tab-audit",
                    "the Audit tab")
        summary = str(app.screen.query_one("#audit-summary", Static).render())
        assert "No votes recorded yet" not in summary
        assert "Imported run" in summary


# ---- 5: the Reports screen at 80 and 120 columns ----------------------------------------


async def test_reports_fit_the_terminal_and_keep_every_number(state_dir: Path) -> None:
    from tests.campaigns.seed import seed_campaign

    await seed_campaign(state_dir / "srb.sqlite3")
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
    for size in ((80, 24), (120, 40)):
        app = quiet_app(settings)
        async with app.run_test(size=size) as pilot:
            await pilot.press("b")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ReportsScreen) and screen.report is not None
            body = screen.query_one("#reports-body")
            tables = screen.query_one("#reports-tables", Static)
            # every table of the seeded report fits: no sideways scrolling at either size
            assert tables.outer_size.width <= body.scrollable_content_region.width, size
            assert body.max_scroll_x == 0, size


def test_reports_snapshot_80x24(snap_compare: Any, state_dir: Path) -> None:
    from tests.campaigns.seed import seed_campaign

    asyncio.run(seed_campaign(state_dir / "srb.sqlite3"))
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
    assert snap_compare(quiet_app(settings), press=["b"], terminal_size=(80, 24),
                        run_before=settle)


def test_reports_snapshot_120x40(snap_compare: Any, state_dir: Path) -> None:
    from tests.campaigns.seed import seed_campaign

    asyncio.run(seed_campaign(state_dir / "srb.sqlite3"))
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
    assert snap_compare(quiet_app(settings), press=["b"], terminal_size=(120, 40),
                        run_before=settle)


async def test_the_keys_panel_starts_with_the_screens_own_keys(
    builtin_settings: Settings,
) -> None:
    """Issue 35 item 3: `?` listed the focused table's cursor and page keys first, so at
    80×24 none of the screen's own keys showed, and each line repeated itself ("f Follow
    Follow the end…"). The screen's keys come first now, each with one text."""
    from srb_tui.ui.widgets.keys_panel import ScreenFirstBindings

    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "Runs")
        await settle(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: bool(app.screen.query(ScreenFirstBindings)), "the panel")
        table = app.screen.query_one(ScreenFirstBindings).render_bindings_table()
        rows = list(zip(table.columns[0].cells, table.columns[1].cells, strict=True))
        words = [str(text) for _key, text in rows if str(text)]
        own = [b for b in type(app.screen).BINDINGS if isinstance(b, Binding)]
        screen_words = {b.tooltip or b.description for b in own}
        first = words[:3]
        assert first and set(first) <= screen_words, (first, screen_words)
        for _key, text in rows:  # one text a line, not description and tooltip both
            plain = str(text)
            half = len(plain) // 2
            assert not (plain and plain[:half].strip() and plain[:half].strip()
                        == plain[half:].strip()), plain


async def test_a_place_key_shows_that_place_from_anywhere(builtin_settings: Settings) -> None:
    """Issue 35 item 1: one key, one screen. `t` on Runs used to open a Counterexamples
    screen left open in the tasks mode earlier, and `r` from Campaign an old Run screen;
    each place key now shows its own screen, whatever was pushed there before."""
    await seed_run(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TasksScreen), "the Tasks screen")
        app.open_run(RUN_ID)  # a Run screen pushed in the tasks mode
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the Run screen")
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "the Runs screen")
        app.open_run(RUN_ID)  # and one in the runs mode
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the Run screen")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TasksScreen), "Tasks, not the Run")
        await pilot.press("t")  # again, where it is: stays
        await settle(pilot)
        assert isinstance(app.screen, TasksScreen)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen), "the Campaign")
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), "Runs, not the Run")
        assert len(app.screen_stack) == 1


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_tasks_status_stays_in_view(builtin_settings: Settings,
                                          size: tuple[int, int]) -> None:
    """The walk at 80×24: the Tasks table's Status column (is the task valid?) sat past the
    right edge behind Class, Stacks, Budget and G·M·A. It now follows the task id."""
    app = quiet_app(builtin_settings)
    async with app.run_test(size=size) as pilot:
        table = app.screen.query_one("#task-table", DataTable)
        await until(pilot, lambda: table.row_count > 0, "the tasks")
        keys = list(table.columns)
        status = next(n for n, k in enumerate(keys) if k.value == "status")
        right = sum(table.columns[k].get_render_width(table) for k in keys[:status + 1])
        assert right <= table.size.width
        first = str(next(iter(table.rows)).value)
        assert str(table.get_cell(first, "status")).startswith("ok")
