"""The Reports screen's table drawing (pure Rich): what fits a width, what gives way first,
and that no number is ever cut."""

from __future__ import annotations

from rich.console import Console

from srb_tui.reports.model import Column, Table, fmt
from srb_tui.ui.widgets.report_table import BAR_WIDTH, bar, draw_table

LONG = "Stage I fail · fixed checks pass (blindness)"


def _table() -> Table:
    return Table(
        id="t", title="Table T", bar="accepted",
        columns=[Column("config", "Configuration", "text"), Column("model", "Model", "text"),
                 Column("blind", LONG), Column("score", "Score (of 100)", "score"),
                 Column("accepted", "Accepted"), Column("runs", "Runs")],
        rows=[["reference", None, 0, 100.0, 12345, 80], ["subtle", "", 1, 40.5, 2, 3]],
        total=["All", None, 1, 70.25, 12347, 83],
    )


def _lines(table: Table, width: int) -> list[str]:
    drawn = draw_table(table, width)
    console = Console(width=max(width, drawn.width), color_system=None, record=True)
    console.print(drawn.renderable)
    return console.export_text().splitlines()


def test_wide_enough_shows_every_heading_whole_and_the_bar() -> None:
    drawn = draw_table(_table(), 200)
    assert not drawn.lettered and drawn.bar_width == BAR_WIDTH
    text = "\n".join(_lines(_table(), 200))
    assert LONG in text and "Model" not in text  # the empty text column is left out


def test_narrow_letters_long_headings_with_a_legend_and_keeps_numbers() -> None:
    for width in (80, 60, 40):
        lines = _lines(_table(), width)
        drawn = draw_table(_table(), width)
        assert drawn.lettered
        assert all(len(line) <= max(width, drawn.width) for line in lines)
        text = "\n".join(lines)
        for value in ("12345", "12347", "100.0", "40.5", "70.2", "83"):
            assert value in text, (width, value)  # never "12…"
        assert "a " + LONG in " ".join(text.split())  # the legend names the whole heading
    assert draw_table(_table(), 80).width <= 80


def test_too_narrow_for_letters_scrolls_instead_of_cutting() -> None:
    drawn = draw_table(_table(), 20)
    assert drawn.width > 20 and drawn.bar_width == 0
    assert "12345" in "\n".join(_lines(_table(), 20))


def test_bar() -> None:
    assert bar(None, 10) == "" and bar(3, 0) == ""
    assert bar(10, 10) == "█" * BAR_WIDTH
    assert bar(1, 16) == "█▎"
    assert fmt(None, "int") == "—"


def test_a_count_column_repeating_another_is_folded_into_a_note_when_too_wide() -> None:
    """Table 3i at 80 columns was one cell too wide: a count column equal to an earlier
    one in every row (Runs = Tasks: one run per task) is left out, and a note says so;
    with room, or when the columns differ, it stays."""
    from srb_tui.reports.model import Column, Table
    from srb_tui.ui.widgets.report_table import draw_table

    columns = [Column("config", "Configuration", "text"), Column("tasks", "Tasks"),
               Column("runs", "Runs"), *(Column(f"m{n}", f"Measure {n}", "score")
                                         for n in range(8))]
    table = Table("t", "T", columns)
    table.rows.append(["a-long-configuration", 12, 12, *(100.0 + n for n in range(8))])
    narrow = draw_table(table, 60)
    wide = draw_table(table, 200)
    from rich.console import Console

    def text(drawn: object) -> str:
        console = Console(width=200, color_system=None, record=True)
        console.print(drawn.renderable)  # type: ignore[attr-defined]
        return console.export_text()

    assert "Runs = Tasks in every row (not shown)." in text(narrow)
    assert "not shown" not in text(wide) and "Runs" in text(wide)
    table.rows[0][2] = 13
    differing = draw_table(table, 60)
    assert "not shown" not in text(differing) and differing.width > narrow.width


def test_the_width_reckoned_is_richs_own_measure() -> None:
    """draw_table reckons a table's width from its columns' minimum widths (no cell is
    measured): the same number Rich's measure of every cell gives, for every table of a
    report, each heading lettered or not, with a bar and without."""
    from srb_tui.reports import build_report
    from srb_tui.reports.records import ReportRun
    from srb_tui.ui.widgets.report_table import (
        Styles,
        _headings,
        _letter_order,
        _measure,
        _rich_table,
        _shown_columns,
        measured,
    )

    runs = [ReportRun(run_id=f"r{i}", task=f"task-[{i % 3}]", config=f"cfg {i % 4}",
                      score=float(i * 7 % 101), audit_gate="pass", complete=i % 2 == 0,
                      checks_passed=i % 10, checks_total=10) for i in range(24)]
    tables = [_table(), *build_report(runs).tables]
    checked = 0
    for table in tables:
        shown = _shown_columns(table)
        order = _letter_order(table, shown)
        for lettered in (set(), set(order[:1]), set(order)):
            headings, _legend = _headings(table, shown, lettered)
            for bar_width in (0, 7, BAR_WIDTH):
                rich = _rich_table(table, shown, headings, bar_width, Styles())
                assert _measure(rich) == measured(rich), (table.id, lettered, bar_width)
                checked += 1
    assert checked >= 3 * 3 * len(tables)
