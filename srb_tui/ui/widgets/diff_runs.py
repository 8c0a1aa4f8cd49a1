"""RunComparison: two runs' facts in three columns, with the differing rows marked."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from srb_tui.service.views.diff_runs import CompareRow
from srb_tui.ui.palette import Tone, tone


class RunComparison(DataTable[str | Text]):
    """Section, field, left run, right run; a ``≠`` before every row that differs."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.compared: list[CompareRow] = []
        self._runs: tuple[str, str] = ("", "")
        self._shown_at = 0

    def show(self, rows: Sequence[CompareRow], left: str, right: str) -> None:
        self.compared = list(rows)
        self._runs = (left, right)
        self._fill()

    def on_resize(self) -> None:
        if self.compared and self.size.width != self._shown_at:
            self._fill()

    def _fill(self) -> None:
        """Both runs' columns always in view: the widths are shared out of the width the
        table has (a narrow terminal shortens the names and wraps nothing)."""
        left, right = self._runs
        self._shown_at = self.size.width
        section, field, side = column_widths(self.size.width)
        self.clear(columns=True)
        rows = self.compared
        for label, key, width in (("", "diff", 1), ("Section", "section", section),
                                  ("Field", "field", field), (left, "left", side),
                                  (right, "right", side)):
            self.add_column(label, key=key, width=width)
        for n, row in enumerate(rows):
            kind: Tone = "warn" if row.differs else "muted"
            self.add_row(
                Text("≠" if row.differs else "", style=tone(self.app, "warn", bold=True)),
                Text(row.section, style=tone(self.app, "muted")),
                row.label,
                Text(row.left, style=tone(self.app, kind) if row.differs else ""),
                Text(row.right, style=tone(self.app, kind) if row.differs else ""),
                key=f"{n}:{row.section}:{row.label}",
            )


def column_widths(width: int) -> tuple[int, int, int]:
    """(section, field, each run's) column widths for a table ``width`` cells wide: each
    column takes its width plus one cell of padding either side, and a vertical scroll
    bar may take two more. At 80 columns both runs still show."""
    usable = max(width - 5 * 2 - 2, 0)
    section, field = (11, 24) if usable >= 100 else (8, 16)
    side = max(10, min(34, (usable - 1 - section - field) // 2))
    return section, field, side
