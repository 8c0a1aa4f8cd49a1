"""The Reports screen's compare picker: mark two configurations, Enter compares them.

Dismisses with the two names (A first, in the order they were marked), or None to go back
to the whole report (Escape, or Enter with nothing marked). The comparison itself is the
report's (:func:`srb_tui.reports.uncertainty.compare_report`), drawn by the Reports screen.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static

from srb_tui.ui.palette import tone


class ComparePicker(ModalScreen[tuple[str, str] | None]):
    """Choose the two configurations to compare."""

    BINDINGS = [
        # priority: the list would take enter as another mark
        Binding("enter", "compare", "Compare", id="reports.compare.go", priority=True,
                tooltip="Compare the two marked configurations"),
        Binding("escape", "dismiss_none", "Whole report", id="reports.compare.close"),
    ]

    def __init__(self, configs: list[str]) -> None:
        super().__init__()
        self.configs = configs
        self.marked: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="compare-picker", classes="run-dialog"):
            yield Static(Text("Compare two configurations", style="bold"))
            yield Static("space marks a configuration (A first, then B) · enter compares · "
                         "escape shows the whole report", id="compare-picker-hint")
            yield SelectionList[str](*((c, c) for c in self.configs), id="compare-configs")
            yield Static(id="compare-picker-message")

    def on_mount(self) -> None:
        self.query_one("#compare-configs", SelectionList).focus()

    @on(SelectionList.SelectedChanged, "#compare-configs")
    def _marked(self, event: SelectionList.SelectedChanged[str]) -> None:
        now = list(event.selection_list.selected)
        self.marked = [c for c in self.marked if c in now] + [c for c in now
                                                              if c not in self.marked]
        self.query_one("#compare-picker-message", Static).update(
            " − ".join(f"{'AB'[i] if i < 2 else '?'}: {c}" for i, c in enumerate(self.marked)))

    def action_compare(self) -> None:
        if not self.marked:
            self.dismiss(None)
            return
        if len(self.marked) != 2:
            self.query_one("#compare-picker-message", Static).update(Text(
                f"mark exactly two configurations ({len(self.marked)} marked)",
                style=tone(self.app, "bad")))
            return
        self.dismiss((self.marked[0], self.marked[1]))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
