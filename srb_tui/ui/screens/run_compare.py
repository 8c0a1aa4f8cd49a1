"""Two runs side by side: a dialog over the Runs screen (``c`` on two marked runs)."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from srb_tui.service.views.diff_runs import compare_runs
from srb_tui.service.views.runs_table import stage_marks
from srb_tui.store import StoreError
from srb_tui.ui.console_service import ConsoleError, ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.diff_runs import RunComparison


class RunCompareScreen(ModalScreen[None]):
    """Two runs side by side (a dialog over the Runs screen)."""

    BINDINGS = [Binding("escape,q,c", "dismiss", "Close", id="runs.compare.close")]

    def __init__(self, run_host: ConsoleService, left: str, right: str) -> None:
        super().__init__()
        self.run_host = run_host
        self.left = left
        self.right = right

    def compose(self) -> ComposeResult:
        with Vertical(id="compare-box"):
            yield Static(f"Comparing {self.left}  ↔  {self.right}", id="compare-title")
            yield RunComparison(id="compare-table")
            yield Static("differing rows are marked ≠ · escape closes", id="compare-hint")

    def on_mount(self) -> None:
        self._load()

    def on_resize(self) -> None:
        # Under 100 columns the dialog takes the whole width, so both runs' columns fit.
        box = self.query_one("#compare-box", Vertical)
        box.styles.width = "100%" if self.size.width < 100 else "90%"

    @work(exclusive=True)
    async def _load(self) -> None:
        try:
            store = await self.run_host.store()
            a = await store.run_detail(self.left)
            b = await store.run_detail(self.right)
            marks = await stage_marks(store, [a.run, b.run], self.run_host.settings.run_dir)
        except (StoreError, ConsoleError) as exc:
            self.query_one("#compare-title", Static).update(
                Text(str(exc), style=tone(self.app, "bad"))
            )
            return
        self.query_one(RunComparison).show(
            compare_runs(a, b, marks[a.run.id], marks[b.run.id]), self.left, self.right)
