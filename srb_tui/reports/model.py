"""The shape every table and figure takes before it is exported: columns, rows, notes.

A cell is an int, a float, a text or None (shown as "—"). A column's ``kind`` says how a
number is printed: ``int``, ``pct`` (one decimal, a percentage already × 100), ``score``
(one decimal), ``usd`` (two decimals), ``num`` (two decimals), ``num4`` (four: a
p-value), ``text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Cell = int | float | str | None
DASH = "—"


@dataclass(frozen=True)
class Column:
    """One column of a report table: its key, heading and kind of value."""

    key: str
    title: str
    kind: str = "int"


@dataclass
class Table:
    """One table (or figure, as a table of its bars) of the report."""

    id: str
    title: str
    columns: Sequence[Column]
    rows: list[list[Cell]] = field(default_factory=list)
    total: list[Cell] | None = None
    notes: list[str] = field(default_factory=list)
    bar: str | None = None  # the column key a screen draws as bars

    def to_json(self) -> dict[str, Any]:
        keys = [c.key for c in self.columns]
        return {
            "id": self.id,
            "title": self.title,
            "columns": [{"key": c.key, "title": c.title, "kind": c.kind} for c in self.columns],
            "rows": [dict(zip(keys, row, strict=True)) for row in self.rows],
            "total": None if self.total is None else dict(zip(keys, self.total, strict=True)),
            "notes": list(self.notes),
        }

    def column(self, key: str) -> list[Cell]:
        """The values of one column (total row excluded)."""
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]

    def cell(self, row_key: Cell, key: str) -> Cell:
        """The cell in column ``key`` of the row whose first cell is ``row_key``."""
        index = [c.key for c in self.columns].index(key)
        for row in self.rows:
            if row[0] == row_key:
                return row[index]
        if self.total is not None and self.total[0] == row_key:
            return self.total[index]
        raise KeyError(f"table {self.id}: no row {row_key!r}")


@dataclass
class Report:
    """A titled list of tables over one selection of runs."""

    title: str
    selection: str
    tables: list[Table]
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # about the whole selection (pooling)

    def table(self, table_id: str) -> Table:
        for table in self.tables:
            if table.id == table_id:
                return table
        raise KeyError(f"no table {table_id!r} in the report")

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "selection": self.selection,
            "counts": dict(self.counts),
            "notes": list(self.notes),
            "tables": [t.to_json() for t in self.tables],
        }


def counts_line(c: dict[str, int]) -> str:
    """What a report counts, in one sentence: its runs, or a strength report's campaigns."""
    if "campaigns" in c and "runs" not in c:
        return f"{c['campaigns']} strength campaigns, {c.get('mutants', 0)} mutants."
    return (f"{c.get('runs', 0)} runs: {c.get('counted', 0)} counted, {c.get('invalid', 0)} "
            f"invalid (excluded), {c.get('cancelled', 0)} cancelled, "
            f"{c.get('unfinished', 0)} unfinished; {c.get('imported', 0)} imported.")


def fmt(value: Cell, kind: str) -> str:
    """A cell as text for Markdown, LaTeX and the screens."""
    if value is None:
        return DASH
    if isinstance(value, str):
        return value
    if kind == "pct":
        return f"{value:.1f}"
    if kind == "score":
        return f"{value:.1f}"
    if kind == "usd":
        return f"{value:.2f}"
    if kind == "num":
        return f"{value:.2f}"
    if kind == "num4":
        return f"{value:.4f}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def pct(part: int, whole: int) -> float | None:
    """``part`` of ``whole`` as a percentage, None when nothing was counted."""
    return None if whole == 0 else round(100.0 * part / whole, 6)


def mean(values: Sequence[float]) -> float | None:
    return None if not values else round(sum(values) / len(values), 6)


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2
