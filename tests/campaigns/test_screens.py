"""Pilot tests of the Campaign and Reports screens over a seeded store (real Textual, real
SQLite), and their SVG snapshots."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.store.provenance import PROVENANCE
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.campaign import CampaignScreen
from srb_tui.ui.screens.reports import ReportsScreen
from srb_tui.ui.screens.reports_compare import ComparePicker
from srb_tui.ui.widgets.report_table import bar
from tests.conftest import BUILTIN_TASKS, REPO

from .seed import seed_campaign

SIZE = (120, 34)


def _settings(state: Path) -> Settings:
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state)


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _shown(screen: ReportsScreen) -> str:
    """The Reports screen's tables as the terminal shows them (plain text)."""
    tables = screen.query_one("#reports-tables", Static)
    console = Console(width=400, color_system=None, record=True)
    console.print(tables.content)  # type: ignore[arg-type]
    return " ".join(console.export_text().split())


def _text(table: DataTable[Any], row: str, column: str) -> str:
    return str(table.get_cell(row, column))


async def test_campaign_matrix_and_enter_opens_the_run(state_dir: Path) -> None:
    ids = await seed_campaign(state_dir / "srb.sqlite3")
    app = create_app(_settings(state_dir))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, CampaignScreen)
        table = screen.query_one("#campaign-table", DataTable)
        assert [c.label.plain for c in table.columns.values()] == \
            ["Task", "reference", "subtle", "untouched"]
        assert table.row_count == 2
        assert _text(table, "t1#1", "reference").startswith("✓ accepted 100")
        assert _text(table, "t1#1", "subtle").startswith("✗ counterexample 90")
        assert _text(table, "t1#1", "untouched") == "◌ blindness"  # every fixed check passes
        assert _text(table, "t2#1", "reference") == "✗ fixed checks"
        assert _text(table, "t2#1", "subtle") == "! failed"
        assert _text(table, "t2#1", "untouched") == "· planned"
        counts = str(screen.query_one("#campaign-counts", Static).render())
        assert "accepted 1" in counts and "planned 1" in counts

        await pilot.press("slash", *"t2", "enter")
        await _settle(pilot)
        assert table.row_count == 1
        await pilot.press("escape")
        await _settle(pilot)
        assert table.row_count == 2

        table.focus()
        table.cursor_coordinate = table.get_cell_coordinate("t1#1", "subtle")
        await pilot.press("enter")
        deadline = asyncio.get_running_loop().time() + 10
        while type(app.screen).__name__ != "RunScreen":  # the Run screen keeps live workers
            assert asyncio.get_running_loop().time() < deadline
            await pilot.pause(0.05)
        assert getattr(app.screen, "run_id", None) == ids[("t1", "subtle")]


async def test_reports_screen_tables_and_selection(state_dir: Path) -> None:
    await seed_campaign(state_dir / "srb.sqlite3")
    app = create_app(_settings(state_dir))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportsScreen)
        assert screen.report is not None
        assert screen.report.counts["runs"] == 5
        assert screen.report.counts["invalid"] == 1
        funnel = screen.report.table("table2")
        assert funnel.cell("reference", "accepted") == 1  # campaign runs carry their label
        screen.query_one("#reports-filter", Input).value = "campaign:demo task:t1"
        await pilot.press("slash", "enter")
        await _settle(pilot)
        assert screen.report.counts["runs"] == 3
        assert screen.report.table("table2").column("config") == \
            ["reference", "subtle", "untouched"]
        await pilot.press("e")
        assert (state_dir / "report.md").read_text().startswith("# srb report — campaign:demo")


async def test_reports_screen_export_names_the_provenance(state_dir: Path) -> None:
    ids = await seed_campaign(state_dir / "srb.sqlite3")
    async with await Store.open(state_dir / "srb.sqlite3") as store:
        for (task, _config), rid in ids.items():
            await store.runs.merge_extra(rid, {PROVENANCE: {
                "grader_fingerprint": "feedc0ffee12", "task_digest": f"sha256:{task * 32}"}})
    app = create_app(_settings(state_dir))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await _settle(pilot)
        await pilot.press("e")
        written = " ".join((state_dir / "report.md").read_text().split())
        assert "Provenance: grader fingerprint feedc0ffee12 × 5" in written
        assert "t1 t1t1t1t1t1t1 × 3; t2 t2t2t2t2t2t2 × 2" in written


async def test_reports_screen_compares_two_marked_configurations(state_dir: Path) -> None:
    await seed_campaign(state_dir / "srb.sqlite3")
    app = create_app(_settings(state_dir))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportsScreen) and screen.report is not None
        assert "table3i" in [t.id for t in screen.report.tables]
        shown = _shown(screen)
        assert "Table 3i · scores with 95% intervals" in shown
        assert "95% low" in shown and "95% high" in shown
        assert "percentile bootstrap of the mean, 10,000 resamples" in shown
        configs = screen.configs
        assert configs[:2] == ["reference", "subtle"]
        await pilot.press("c")
        await _settle(pilot)
        picker = app.screen
        assert isinstance(picker, ComparePicker)
        await pilot.press("space", "enter")  # one marked: refused, the picker stays
        await _settle(pilot)
        assert app.screen is picker
        assert "exactly two" in str(picker.query_one("#compare-picker-message",
                                                     Static).render())
        await pilot.press("down", "space", "enter")
        await _settle(pilot)
        assert app.screen is screen and screen.compare == ("reference", "subtle")
        assert [t.id for t in screen.report.tables] == ["compare", "compare_tasks"]
        assert screen.report.table("compare").cell("reference", "a") == "reference"
        message = str(screen.query_one("#reports-message", Static).render())
        assert "comparing reference − subtle" in message
        shown = _shown(screen)
        assert "Compare · Score: reference − subtle" in shown and "p-value" in shown
        assert "scipy.stats.wilcoxon" in shown and "Compare · per task" in shown
        await pilot.press("c")
        await _settle(pilot)
        await pilot.press("escape")  # back to the whole report
        await _settle(pilot)
        assert screen.compare is None and screen.report.table("table2") is not None


def test_bar() -> None:
    assert bar(None, 10) == ""
    assert bar(10, 10) == "█" * 20
    assert bar(5, 10) == "█" * 10
    assert bar(1, 16) == "█▎"  # 20 × 8 / 16 = 10 eighths


@pytest.fixture
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.usefixtures("_in_repo")
def test_campaign_screen_snapshot(snap_compare: Any, state_dir: Path) -> None:
    asyncio.run(seed_campaign(state_dir / "srb.sqlite3"))
    assert snap_compare(create_app(_settings(state_dir)), press=["m"], terminal_size=SIZE,
                        run_before=_settle)


@pytest.mark.usefixtures("_in_repo")
def test_reports_screen_snapshot(snap_compare: Any, state_dir: Path) -> None:
    asyncio.run(seed_campaign(state_dir / "srb.sqlite3"))
    assert snap_compare(create_app(_settings(state_dir)), press=["b"], terminal_size=SIZE,
                        run_before=_settle)


async def test_a_matrix_wider_than_the_screen_uses_short_labels(state_dir: Path) -> None:
    """Issue 35's walk at 80×24: the Campaign matrix pushed its last configuration off the
    screen ("✗ fixed ch…"). Too wide for the screen, cells say the outcome in a few
    characters and the counts line gives each glyph its name; wide again, whole labels."""
    await seed_campaign(state_dir / "srb.sqlite3")
    app = create_app(_settings(state_dir))
    async with app.run_test(size=(48, 24)) as pilot:
        await pilot.press("m")
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, CampaignScreen)
        table = screen.query_one("#campaign-table", DataTable)
        assert _text(table, "t1#1", "reference") == "✓ 100"
        assert _text(table, "t1#1", "subtle").startswith("✗ cx 90")
        assert _text(table, "t2#1", "reference") == "✗ checks"
        edge = sum(c.get_render_width(table) for c in table.columns.values())
        assert edge <= table.size.width, "every configuration inside the screen"
        counts = str(screen.query_one("#campaign-counts", Static).render())
        assert "✗ cx counterexample 1" in counts and "◌ blind blindness 1" in counts
        await pilot.resize_terminal(160, 34)
        await _settle(pilot)
        await pilot.pause()
        assert _text(table, "t1#1", "reference").startswith("✓ accepted 100")
