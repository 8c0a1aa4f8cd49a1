"""Keep a DataTable equal to a list of rows, updating cells in place by row key.

Row key = primary key of the stored record, so a live refresh changes only the cells that
changed, keeps the cursor on its row, and never clears and refills the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

Cell = str | Text
Row = tuple[str, Sequence[Cell]]


def add_columns(table: DataTable[Cell], columns: Sequence[tuple[str, str]]) -> None:
    """``(label, key)`` columns, once."""
    if table.columns:
        return
    for label, key in columns:
        table.add_column(label, key=key)


def _same(a: object, b: object) -> bool:
    if isinstance(a, Text) and isinstance(b, Text):
        return a.plain == b.plain and a.spans == b.spans and a.style == b.style
    return a == b


def sync_rows(table: DataTable[Cell], rows: Sequence[Row]) -> None:
    """Make ``table`` show exactly ``rows`` (order of first appearance is kept).

    When none of ``rows`` is in the table (another module's checks, say), the table is
    cleared in one step: DataTable's ``remove_row`` renumbers every row after the one it
    removes, so removing a few hundred rows one by one took tens of milliseconds."""
    wanted = {key for key, _ in rows}
    if table.row_count and not any(str(k.value) in wanted for k in table.rows):
        table.clear()
    for key in [str(k.value) for k in table.rows if str(k.value) not in wanted]:
        table.remove_row(key)
    column_keys = [c.key for c in table.ordered_columns]
    existing = {str(k.value) for k in table.rows}
    for key, cells in rows:
        if key in existing:
            current = table.get_row(key)
            for column, old, new in zip(column_keys, current, cells, strict=False):
                if not _same(old, new):
                    table.update_cell(key, column, new)
        else:
            table.add_row(*cells, key=key)


def selected_key(table: DataTable[Cell]) -> str | None:
    """The key of the row under the cursor, if any."""
    if table.row_count == 0:
        return None
    try:
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
    except Exception:
        return None
    return None if key.value is None else str(key.value)
