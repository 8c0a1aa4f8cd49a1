"""Runs screen: run history from the store, newest first, with an explained empty state."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from srb_tui.service.display import display_path
from srb_tui.service.history import RunRow, load_run_rows
from srb_tui.ui.palette import Tone, tone

if TYPE_CHECKING:
    from srb_tui.ui.app import SrbApp

COLUMNS = ("Run", "Task", "Agent", "Status", "Stop", "Score", "Valid", "Started", "Duration")
EMPTY = (
    "No runs yet.\n\n"
    "A run is one agent attempt at one task, graded by the three stages. Start one from the "
    "command line, e.g.\n\n"
    "    srb run demo01-csvtab-python-to-node --agent replay:reference\n\n"
    "Runs are kept in {db} and appear here as they progress."
)
STATUS_TONE: dict[str, Tone] = {
    "scored": "ok", "cancelled": "muted", "infra_error": "bad", "pending": "muted",
}


class RunsScreen(Screen[None]):
    """Every stored run; the table is keyed by run id."""

    BINDINGS = [
        Binding("ctrl+r", "refresh", "Refresh", id="runs.refresh",
                tooltip="Read the run history from the store again"),
    ]

    @property
    def srb(self) -> SrbApp:
        return cast("SrbApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="runs-body"):
            yield Static(id="runs-message")
            yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Runs"
        table = self.query_one("#runs-table", DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label.lower())
        self.action_refresh()

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a run opens its Run screen."""
        if event.data_table.id == "runs-table" and event.row_key.value is not None:
            self.srb.open_run(str(event.row_key.value))

    def action_refresh(self) -> None:
        self._load_rows()

    @work(exclusive=True, group="runs-load")
    async def _load_rows(self) -> None:
        result = await load_run_rows(self.srb.settings.db_path)
        self._show(result.rows, result.problem)

    def _show(self, rows: list[RunRow], problem: str | None) -> None:
        table = self.query_one("#runs-table", DataTable)
        message = self.query_one("#runs-message", Static)
        table.clear()
        if problem:
            message.update(Text(problem, style=tone(self.app, "bad")))
            message.display = True
            table.display = False
            return
        if not rows:
            message.update(EMPTY.format(db=display_path(self.srb.settings.db_path)))
            message.display = True
            table.display = False
            return
        message.display = False
        table.display = True
        for row in rows:
            status = Text(row.status, style=tone(self.app, STATUS_TONE.get(row.status, "accent")))
            table.add_row(
                row.run_id, row.task_id, row.agent, status, row.stop_reason or "—",
                row.score_text, row.valid_text, row.started_text, row.duration_text,
                key=row.run_id,
            )
