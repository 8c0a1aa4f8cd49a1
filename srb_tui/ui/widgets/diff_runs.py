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

    def show(self, rows: Sequence[CompareRow], left: str, right: str) -> None:
        self.clear(columns=True)
        self.compared = list(rows)
        # Fixed widths: the table does not re-measure its columns after the rows arrive.
        for label, key, width in (("", "diff", 1), ("Section", "section", 11),
                                  ("Field", "field", 24), (left, "left", 34),
                                  (right, "right", 34)):
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
