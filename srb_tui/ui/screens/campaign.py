"""Campaign screen: the matrix of a campaign, rows (task, repeat) × configurations.

Each cell is its current run's outcome (not migrated, blindness, fixed checks fail,
counterexample, accepted, invalid, running, planned…), coloured by the theme, refreshed
every second and whenever the run service announces a change; cells are updated in place
by key. Enter on a cell opens its run. ``/`` filters rows (task id words, or
``config:LABEL`` to keep some columns), ``s`` cycles the row order, ``[``/``]`` the
campaign shown.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from srb_tui.reports.matrix import OUTCOME_ORDER, Matrix, MatrixCell, load_matrix
from srb_tui.store import Store
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.footer import PriorityFooter

OUTCOME_TONE: dict[str, Tone] = {
    "accepted": "ok", "counterexample": "warn", "fixed checks fail": "bad",
    "blindness": "accent", "not migrated": "bad", "invalid": "warn", "failed": "bad",
    "running": "accent", "planned": "muted", "cancelled": "muted",
}
GLYPH = {
    "accepted": "✓ accepted", "counterexample": "✗ counterexample",
    "fixed checks fail": "✗ fixed checks", "blindness": "◌ blindness",
    "not migrated": "✗ not migrated", "invalid": "! invalid", "failed": "! failed",
    "running": "… running", "planned": "· planned", "cancelled": "– cancelled",
}
# The same outcomes in a few characters, for a matrix wider than the screen (the counts
# line under it spells each outcome with its glyph).
SHORT = {
    "accepted": "✓", "counterexample": "✗ cx", "fixed checks fail": "✗ checks",
    "blindness": "◌ blind", "not migrated": "✗ audit", "invalid": "! inval",
    "failed": "! fail", "running": "…", "planned": "·", "cancelled": "–",
}
SORTS = ("task", "-task", "accepted")
EMPTY = ("No campaign in this store yet.\n\nPlan and run one from the command line:\n\n"
         "    srb campaign run campaign.toml\n")
REFRESH_SEC = 1.0


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("campaign.filter", "campaign.sort", "campaign.next", "app.runs", "app.reports")


class CampaignScreen(Screen[None]):
    """One campaign's matrix, live."""

    AUTO_FOCUS = "#campaign-table"
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="campaign.filter",
                tooltip="Filter rows by task words; config:LABEL keeps columns"),
        Binding("escape", "clear_filter", "Clear", id="campaign.clear", show=False),
        Binding("s", "cycle_sort", "Sort", id="campaign.sort",
                tooltip="Order rows by task, task descending, or accepted count"),
        Binding("right_square_bracket", "campaign(1)", "Next campaign", id="campaign.next"),
        Binding("left_square_bracket", "campaign(-1)", "Prev campaign", id="campaign.prev",
                show=False),
        Binding("ctrl+r", "refresh", "Refresh", id="campaign.refresh", show=False),
    ]

    def __init__(self, run_host: ConsoleService, campaign_id: str | None = None) -> None:
        super().__init__()
        self.run_host = run_host
        self.campaign_id = campaign_id
        self.matrix: Matrix | None = None
        self.sort = "task"
        self.filter_text = ""
        self._columns: list[str] = []
        self._rows: list[str] = []
        self._short: bool | None = None  # cells drawn with SHORT labels

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="campaign-body"):
            yield Input(placeholder="filter: task words, config:LABEL  (press /)",
                        id="campaign-filter", compact=True)
            yield Static(id="campaign-title")
            yield DataTable(id="campaign-table", cursor_type="cell", zebra_stripes=True)
            yield Static(id="campaign-counts")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Campaign"
        self.action_refresh()
        self.set_interval(REFRESH_SEC, self._tick)

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def _tick(self) -> None:
        if self.is_current:
            self.action_refresh()

    def action_refresh(self) -> None:
        self._load()

    async def _store(self) -> Store:
        return await self.run_host.store()

    @work(exclusive=True, group="campaign-load")
    async def _load(self, step: int = 0) -> None:
        if not self.run_host.settings.db_path.exists():
            self._message(EMPTY)
            return
        try:
            store = await self._store()
            if self.campaign_id and not step:  # the usual refresh: no need to list them all
                matrix = await load_matrix(store, self.campaign_id)
                if matrix is not None:
                    self._show(matrix)
                    return
            campaigns = [c.id for c in await store.campaigns.campaigns()]
            if not campaigns:
                self._message(EMPTY)
                return
            if self.campaign_id not in campaigns:
                self.campaign_id = campaigns[0]
            elif step:
                index = (campaigns.index(self.campaign_id) + step) % len(campaigns)
                self.campaign_id = campaigns[index]
            matrix = await load_matrix(store, self.campaign_id)
        except Exception as exc:
            self._message(Text(f"{type(exc).__name__}: {exc}", style=tone(self.app, "bad")))
            return
        if matrix is not None:
            self._show(matrix)

    def _message(self, text: str | Text) -> None:
        """No matrix to show: the message alone. The filter hides with the table, so focus
        does not fall into it and the console's keys (q t r b) stay keys."""
        self.query_one("#campaign-title", Static).update(text)
        self.query_one("#campaign-table", DataTable).display = False
        box = self.query_one("#campaign-filter", Input)
        if box.has_focus:
            self.set_focus(None)
        box.display = False

    # -- drawing ------------------------------------------------------------------

    def _visible(self, matrix: Matrix) -> tuple[list[str], list[tuple[str, int]]]:
        words = self.filter_text.split()
        wanted = [w.split(":", 1)[1] for w in words if w.startswith("config:")]
        plain = [w.lower() for w in words if not w.startswith("config:")]
        columns = [c for c in matrix.configs if not wanted or any(w in c for w in wanted)]
        rows = [r for r in matrix.rows if all(w in r[0].lower() for w in plain)]
        if self.sort == "-task":
            rows.sort(reverse=True)
        elif self.sort == "accepted":
            rows.sort(key=lambda r: (-sum(
                matrix.cells[(r[0], r[1], c)].outcome == "accepted"
                for c in matrix.configs if (r[0], r[1], c) in matrix.cells), r))
        return columns, rows

    def _cell_text(self, cell: MatrixCell | None, styles: dict[str, str],
                   short: bool = False) -> Text:
        if cell is None:
            return Text("")
        label = (SHORT if short else GLYPH).get(cell.outcome, cell.outcome)
        if cell.score is not None and cell.outcome in ("accepted", "counterexample"):
            label += f" {cell.score:g}"
        if cell.attempts > 1:
            label += f" ×{cell.attempts}"
        return Text(label, style=styles.get(cell.outcome, ""))

    def _show(self, matrix: Matrix) -> None:
        self.matrix = matrix
        table = self.query_one("#campaign-table", DataTable)
        if not table.display:
            table.display = True
            self.query_one("#campaign-filter", Input).display = True
            if self.focused is None:
                table.focus()
        columns, rows = self._visible(matrix)
        styles = {o: tone(self.app, t) for o, t in OUTCOME_TONE.items()}  # once per refresh
        repeats = len({r[1] for r in matrix.rows}) > 1
        row_keys = [f"{t}#{r}" for t, r in rows]
        short = self._too_wide(matrix, columns, rows, styles)
        if short != self._short:  # a column only ever widens: build the table again
            self._short, self._columns = short, []
        if columns != self._columns or row_keys != self._rows:
            table.clear(columns=True)
            table.add_column("Task", key="task")
            for label in columns:
                table.add_column(label, key=label)
            for (task, repeat), key in zip(rows, row_keys, strict=True):
                name = f"{task} #{repeat}" if repeats else task
                cells = [self._cell_text(matrix.cells.get((task, repeat, c)), styles, short)
                         for c in columns]
                table.add_row(Text(name), *cells, key=key)
            self._columns, self._rows = columns, row_keys
        else:
            for (task, repeat), key in zip(rows, row_keys, strict=True):
                for label in columns:
                    text = self._cell_text(matrix.cells.get((task, repeat, label)), styles,
                                           short)
                    table.update_cell(key, label, text)
        c = matrix.campaign
        self.query_one("#campaign-title", Static).update(Text.assemble(
            (f"campaign {c.id}", "bold"), f" · {c.status} · {len(matrix.cells)} cells · "
            f"max_parallel {c.max_parallel} · retry limit {c.retry_limit}",
            f" · cost ceiling ${c.max_cost:g}" if c.max_cost is not None else "",
        ))
        counts = matrix.counts()
        parts: list[str | tuple[str, str]] = []
        for outcome in OUTCOME_ORDER:
            if counts.get(outcome):
                glyph = f"{SHORT[outcome]} " if short and outcome in SHORT else ""
                parts += [(f"{glyph}{outcome} {counts[outcome]}",
                           tone(self.app, OUTCOME_TONE.get(outcome, "muted"))), "  "]
        self.query_one("#campaign-counts", Static).update(Text.assemble(*parts))

    def _too_wide(self, matrix: Matrix, columns: list[str], rows: list[tuple[str, int]],
                  styles: dict[str, str]) -> bool:
        """Whether the matrix with whole labels is wider than the screen."""
        width = max((len(task) + 4 for task, _ in rows), default=4) + 2
        for label in columns:
            cells = [self._cell_text(matrix.cells.get((task, repeat, label)), styles)
                     for task, repeat in rows]
            width += max([len(label), *(cell.cell_len for cell in cells)]) + 2
        return width > self.size.width - 2

    def on_resize(self) -> None:
        if self.matrix is not None:
            self._show(self.matrix)

    # -- actions ------------------------------------------------------------------

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        """Enter on a cell opens its run."""
        if self.matrix is None or event.cell_key.column_key.value in (None, "task"):
            return
        task, _, repeat = str(event.cell_key.row_key.value).rpartition("#")
        cell = self.matrix.cells.get((task, int(repeat), str(event.cell_key.column_key.value)))
        if cell is not None and cell.run_id:
            from srb_tui.ui.screens.run import RunScreen

            self.app.push_screen(RunScreen(self.run_host, cell.run_id))
        else:
            self.notify("this cell has no run yet", timeout=3)

    def action_focus_filter(self) -> None:
        self.query_one("#campaign-filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#campaign-filter", Input)
        box.value = ""
        self.filter_text = ""
        self.query_one("#campaign-table", DataTable).focus()
        if self.matrix is not None:
            self._show(self.matrix)

    @on(Input.Changed, "#campaign-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if self.matrix is not None:
            self._show(self.matrix)

    @on(Input.Submitted, "#campaign-filter")
    def _filter_done(self) -> None:
        self.query_one("#campaign-table", DataTable).focus()

    def action_cycle_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.notify(f"rows by {self.sort}", timeout=2)
        if self.matrix is not None:
            self._show(self.matrix)

    def action_campaign(self, step: int) -> None:
        self._columns, self._rows = [], []
        self._load(step)
