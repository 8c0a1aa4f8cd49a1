"""One report table drawn for the Reports screen so that it fits the terminal's width.

Numbers are never cut: every column is at least as wide as its widest value and no value
wraps. To fit, the drawing gives things up in this order: the full column headings (long
numeric headings become letters ``a``, ``b``, … explained in a legend under the table),
then the bar column, and only then is the table wider than the screen (the Reports screen
scrolls sideways). Text columns empty in every row (a replay has no model or effort) are
left out; the Markdown export keeps every column.

Pure Rich: what is drawn for a width is easy to test without a terminal.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.constrain import Constrain
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

from srb_tui.reports.model import Cell, Column, Table, fmt

BAR_WIDTH = 20
MIN_BAR = 6  # a bar narrower than this says nothing; it is left out instead
LETTERS = string.ascii_lowercase


@dataclass(frozen=True)
class Styles:
    """Rich styles from the theme (the screen passes them; no colour is chosen here)."""

    header: str = "bold"
    bar: str = ""
    muted: str = ""


def bar(value: float | None, top: float, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` eighths-resolution blocks for ``value`` out of ``top``."""
    if value is None or top <= 0 or width <= 0:
        return ""
    eighths = round(width * 8 * max(0.0, min(1.0, value / top)))
    full, rest = divmod(eighths, 8)
    return "█" * full + ("▏▎▍▌▋▊▉"[rest - 1] if rest else "")


@dataclass(frozen=True)
class Drawn:
    """A table as drawn: the renderable, the cells it needs, and what was given up."""

    renderable: RenderableType
    width: int
    lettered: bool
    bar_width: int


def _shown_columns(table: Table) -> list[int]:
    """Indexes of the columns worth a place: a text column with no value in any row
    (total included) is left out."""
    rows = [*table.rows, *([table.total] if table.total is not None else [])]
    keep: list[int] = []
    for i, column in enumerate(table.columns):
        if column.kind == "text" and i and all(r[i] in (None, "") for r in rows):
            continue
        keep.append(i)
    return keep


def _repeats(table: Table, shown: Sequence[int]) -> list[tuple[int, int]]:
    """(column, earlier column) pairs of shown count columns whose every value (total
    included) is the earlier one's: Runs beside Tasks when every task ran once."""
    rows = [*table.rows, *([table.total] if table.total is not None else [])]
    if not rows:
        return []
    found: list[tuple[int, int]] = []
    for n, i in enumerate(shown):
        if table.columns[i].kind != "int":  # counts only: a measure is its own statement
            continue
        same = next((j for j in shown[:n] if table.columns[j].kind == "int"
                     and all(r[i] == r[j] for r in rows)), None)
        if same is not None:
            found.append((i, same))
    return found


def _values_width(table: Table, index: int) -> int:
    column = table.columns[index]
    rows = [*table.rows, *([table.total] if table.total is not None else [])]
    return max((cell_len(fmt(r[index], column.kind)) for r in rows), default=1)


def _letter_order(table: Table, shown: Sequence[int]) -> list[int]:
    """Columns whose heading is wider than their values, longest heading first: the order
    in which headings give way to letters (the first column, the rows' names, keeps its)."""
    found = [i for i in shown[1:]
             if cell_len(table.columns[i].title) > _values_width(table, i)]
    return sorted(found, key=lambda i: -cell_len(table.columns[i].title))[:len(LETTERS)]


def _headings(table: Table, shown: Sequence[int], lettered: set[int]
              ) -> tuple[list[str], list[tuple[str, str]]]:
    """Each shown column's heading (a letter for those in ``lettered``, in column order),
    and the legend of the lettered ones."""
    headings: list[str] = []
    legend: list[tuple[str, str]] = []
    for i in shown:
        if i in lettered:
            letter = LETTERS[len(legend)]
            headings.append(letter)
            legend.append((letter, table.columns[i].title))
        else:
            headings.append(table.columns[i].title)
    return headings, legend


def _legend(legend: Sequence[tuple[str, str]], width: int, style: str) -> Text:
    """``a Title  b Title …`` in lines of ``width`` cells, broken between entries."""
    out = Text(style=style)
    used = 0
    for letter, title in legend:
        entry = f"{letter} {title}"
        if used and used + 2 + cell_len(entry) > width:
            out.append("\n")
            used = 0
        elif used:
            out.append("  ")
            used += 2
        out.append(letter, style="bold")
        out.append(f" {title}")
        used += cell_len(entry)
    return out


def _rich_table(table: Table, shown: Sequence[int], headings: Sequence[str],
                bar_width: int, styles: Styles) -> RichTable:
    out = RichTable(title=table.title, title_justify="left", expand=False,
                    box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                    title_style="bold", header_style=styles.header)
    columns: list[Column] = [table.columns[i] for i in shown]
    for i, column, heading in zip(shown, columns, headings, strict=True):
        text = column.kind == "text"
        out.add_column(heading, justify="left" if text else "right", no_wrap=True,
                       min_width=max(_values_width(table, i), cell_len(heading)))
    index = next((i for i, c in enumerate(table.columns) if c.key == table.bar), None)
    if index is None:
        bar_width = 0
    if bar_width:
        out.add_column("", min_width=bar_width, no_wrap=True)
    values = [r[index] for r in table.rows] if index is not None else []
    top = max([float(v) for v in values if isinstance(v, int | float)], default=0.0)
    if index is not None and table.columns[index].kind == "pct":
        top = 100.0

    def cells(row: Sequence[Cell]) -> list[RenderableType]:
        return [fmt(row[i], table.columns[i].kind) for i in shown]

    for row in table.rows:
        drawn = cells(row)
        if bar_width and index is not None:
            value = row[index]
            drawn.append(Text(bar(float(value) if isinstance(value, int | float) else None,
                                  top, bar_width), style=styles.bar))
        out.add_row(*drawn)
    if table.total is not None:
        out.add_section()
        out.add_row(*cells(table.total), *([""] if bar_width else []), style="bold")
    return out


def _measure(table: RichTable) -> int:
    """The cells ``table`` takes, as Rich measures it, without measuring every cell: each
    column's minimum width is at least its widest cell (heading and total included), so
    Rich's measure of a column is that minimum plus its padding, and the table's is their
    sum plus the rules between columns (``measured`` is Rich's own, for the tests)."""
    return sum((column.min_width or 0) + table._get_padding_width(i)
               for i, column in enumerate(table.columns)) + table._extra_width


def measured(renderable: RenderableType) -> int:
    """Rich's own measure of ``renderable`` (every cell measured)."""
    console = Console(width=10_000, color_system=None)
    return Measurement.get(console, console.options, renderable).maximum


def draw_table(table: Table, width: int, styles: Styles = Styles()) -> Drawn:
    """``table`` drawn to fit ``width`` cells if it can (see the module's docstring)."""
    shown = _shown_columns(table)
    has_bar = table.bar is not None and any(c.key == table.bar for c in table.columns)
    order = _letter_order(table, shown)
    lettered: set[int] = set()
    target = width - (MIN_BAR + 1 if has_bar else 0)  # a short bar is worth a few letters
    folded: list[str] = []
    while True:  # letter the longest headings one by one until the table fits
        headings, legend = _headings(table, shown, lettered)
        plain = _rich_table(table, shown, headings, 0, styles)
        need = _measure(plain)
        if need <= target:
            break
        if len(lettered) == len(order):
            # still too wide: a column that repeats another's values is said in a note
            repeats = _repeats(table, shown)
            if folded or not repeats:
                break
            for column, same in repeats:
                shown = [i for i in shown if i != column]
                folded.append(f"{table.columns[column].title} = "
                              f"{table.columns[same].title} in every row (not shown).")
            order = _letter_order(table, shown)
            lettered = {i for i in lettered if i in shown}
            continue
        lettered.add(order[len(lettered)])
    room = width - need - 1
    bar_width = min(BAR_WIDTH, room) if has_bar and room >= MIN_BAR else 0
    drawn = _rich_table(table, shown, headings, bar_width, styles) if bar_width else plain
    parts: list[RenderableType] = [drawn]
    if legend:
        parts.append(_legend(legend, width, styles.muted))
    # the notes wrap at the screen's width even when the table is wider and scrolls
    parts += [Constrain(Text(note, style=styles.muted), width)
              for note in (*folded, *table.notes)]
    parts.append(Text(""))
    return Drawn(Group(*parts), need + (bar_width + 1 if bar_width else 0), bool(legend),
                 bar_width)


__all__ = ["BAR_WIDTH", "Drawn", "Styles", "bar", "draw_table"]
