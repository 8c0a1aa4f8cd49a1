"""Runs screen: the run history from the store, filtered, sorted, paged and kept live.

The table is keyed by run id and is never cleared to show progress: a refresh (every
second, and at once when the run service publishes an event) re-reads the visible page
and changes only the cells that changed. Filters (``task:… status:… agent:… words``) and
the sort are done by the store; a page holds ``PAGE_SIZE`` runs. Below the table, the
funnel over every run the filter matches. Space marks runs, ``c`` compares two of them,
``d`` opens a run's diff and ``x`` its counterexamples.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Static

from srb_tui.service.events import EventBus, RunCreated, RunFinished, StageFinished, StatusChanged
from srb_tui.service.views.display import display_path
from srb_tui.service.views.runs_table import (
    PAGE_SIZE,
    RunFilter,
    RunsPage,
    StageMarks,
    funnel_over,
    load_page,
    parse_filter,
)
from srb_tui.store import Store
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.screens.run_compare import RunCompareScreen
from srb_tui.ui.widgets.footer import PriorityFooter
from srb_tui.ui.widgets.run_tables import Row, selected_key, sync_rows
from srb_tui.ui.widgets.runs_columns import (
    COLUMNS,
    cell_cap,
    next_sort_column,
    page_status,
    reversed_sort,
    run_cells,
    run_id_of,
    sort_for_column,
)

EMPTY = (
    "No runs yet.\n\n"
    "A run is one agent attempt at one task, graded by the three stages. Start one here: "
    "press {tasks} for the task list, move to a task and press {launch} to launch it (the "
    "dialog offers the agents, the budget and repeats). Or from the command line, e.g.\n\n"
    "    srb run demo01-csvtab-python-to-node --agent replay:reference\n\n"
    "Runs are kept in {db} and appear here as they progress."
)
NO_MATCH = "No run matches the filter {text!r}. Press Escape in the filter bar to clear it."
REFRESH_SEC = 1.0  # how often the change watermark is read (one small query)


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("runs.filter", "runs.diff", "runs.counterexamples",
                "runs.mark", "runs.compare", "app.tasks")


class RunsScreen(Screen[None]):
    """Every stored run; the table is keyed by run id."""

    AUTO_FOCUS = "#runs-table"
    BINDINGS = [
        Binding("ctrl+r", "refresh", "Refresh", id="runs.refresh",
                tooltip="Read the run history from the store again"),
        Binding("slash", "focus_filter", "Filter", id="runs.filter",
                tooltip="Filter: task:ID status:S agent:A model:M and free words"),
        Binding("escape", "clear_filter", "Clear", id="runs.clear", show=False,
                tooltip="Clear the filter and return to the table"),
        Binding("s", "cycle_sort", "Sort", id="runs.sort",
                tooltip="Sort by the next sortable column (click a header to pick one)"),
        Binding("S", "reverse_sort", "Reverse", id="runs.reverse", show=False,
                tooltip="Reverse the sort order"),
        Binding("right_square_bracket", "page(1)", "Next page", id="runs.next_page",
                tooltip="Show the next page of runs"),
        Binding("left_square_bracket", "page(-1)", "Prev page", id="runs.prev_page",
                show=False, tooltip="Show the previous page of runs"),
        Binding("space", "mark", "Mark", id="runs.mark",
                tooltip="Mark the run under the cursor for comparison"),
        Binding("c", "compare", "Compare", id="runs.compare",
                tooltip="Compare the two marked runs (or the marked one and the cursor's)"),
        Binding("d", "diff", "Diff", id="runs.diff",
                tooltip="State A against the submission of the run under the cursor"),
        Binding("x", "counterexamples", "Counterexamples", id="runs.counterexamples",
                tooltip="Stage III candidates of the run under the cursor"),
    ]

    def __init__(self, run_host: ConsoleService, key_of: Callable[[str, str], str]) -> None:
        """``key_of(binding_id, default)``: the key a binding has after the user keymap
        (the empty state names the keys that start a run)."""
        super().__init__()
        self.run_host = run_host
        self.key_of = key_of
        self.run_filter = RunFilter()
        self.filter_text = ""
        self.run_sort = "-created_at"
        self.page_offset = 0
        self.runs_page: RunsPage | None = None
        self.marked: list[str] = []
        self.funnel_text = ""
        self._debounce: Timer | None = None
        self._order: list[str] = []
        self._events: asyncio.Task[None] | None = None
        self._funnel_stale = True
        self._mark: tuple[int, str] | None = None
        self._cap: int | None = None  # the Task/Agent cell cap the table's rows were drawn with

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="runs-body"):
            yield Input(placeholder="filter: task:ID status:scored agent:NAME node:NAME words"
                        "  (press /)",
                        id="runs-filter", compact=True)
            yield Static(id="runs-message")
            yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="runs-status")
            yield Static(id="runs-funnel")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Runs"
        self._add_columns(self.query_one("#runs-table", DataTable))
        self.action_refresh()
        self.set_interval(REFRESH_SEC, self._tick)
        self._subscribe()

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def on_resize(self) -> None:
        """Crossing the narrow width draws the rows again with the other cell cap."""
        if self.runs_page is not None and cell_cap(self.size.width) != self._cap:
            self._load_rows()

    @staticmethod
    def _add_columns(table: DataTable[str | Text]) -> None:
        for label, key, _ in COLUMNS:
            table.add_column(label, key=key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a run opens its Run screen."""
        if event.data_table.id == "runs-table" and event.row_key.value is not None:
            from srb_tui.ui.screens.run import RunScreen

            self.app.push_screen(RunScreen(self.run_host, str(event.row_key.value)))

    # -- loading ---------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self._funnel_stale = True
        self._load_rows()

    def _tick(self) -> None:
        """Runs driven by another srb process publish on no bus here: the store's change
        watermark (a count and the newest update time) tells when to read the page again."""
        if self.is_current and self.settings_exist():
            self._check_mark()

    @work(exclusive=True, group="runs-mark")
    async def _check_mark(self) -> None:
        try:
            mark = await (await self._store()).infra.change_mark()
        except Exception:
            return  # the next page load reports a broken store
        if mark != self._mark:
            self._mark = mark
            self._funnel_stale = True
            self._load_rows()

    def settings_exist(self) -> bool:
        return self.run_host.settings.db_path.exists()

    async def _store(self) -> Store:
        return await self.run_host.store()

    @work(exclusive=True, group="runs-load")
    async def _load_rows(self) -> None:
        settings = self.run_host.settings
        if not settings.db_path.exists():
            self._show_message(self._empty_text())
            return
        try:
            store = await self._store()
            mark = await store.infra.change_mark()  # before the page: a later change shows
            page = await load_page(store, self.run_filter, self.run_sort, self.page_offset,
                                   run_dir=settings.run_dir)
            self._mark = mark
        except Exception as exc:
            self._show_message(Text(_problem(exc), style=tone(self.app, "bad")))
            return
        self._show(page)

    @work(exclusive=True, group="runs-funnel")
    async def _load_funnel(self) -> None:
        settings = self.run_host.settings
        funnel = self.query_one("#runs-funnel", Static)
        if not settings.db_path.exists():
            funnel.update("")
            return
        funnel.update(Text("funnel: counting…", style=tone(self.app, "muted")))
        try:
            summary = await funnel_over(await self._store(), self.run_filter)
        except Exception:
            funnel.update("")
            return
        self.funnel_text = summary.text()
        funnel.update(Text("funnel: " + self.funnel_text, style=tone(self.app, "accent")))

    def _empty_text(self) -> str:
        """The empty state, naming the keys that start a run here (after the keymap)."""
        return EMPTY.format(db=display_path(self.run_host.settings.db_path),
                            tasks=self.key_of("app.tasks", "t"),
                            launch=self.key_of("tasks.launch", "l"))

    def _show_message(self, message: str | Text) -> None:
        text = self.query_one("#runs-message", Static)
        text.update(message)
        text.display = True
        self.query_one("#runs-table", DataTable).display = False
        self.query_one("#runs-status", Static).display = False

    def _show(self, page: RunsPage) -> None:
        self.runs_page = page
        self.page_offset = page.offset
        table = self.query_one("#runs-table", DataTable)
        if page.total == 0:
            if self.run_filter.empty:
                self._show_message(self._empty_text())
            else:
                self._show_message(NO_MATCH.format(text=self.filter_text))
            table.clear()
            self._order = []
            self._funnel_stale = False
            self.query_one("#runs-funnel", Static).update("")
            return
        self.query_one("#runs-message", Static).display = False
        table.display = True
        cap = cell_cap(self.size.width)
        cursor: str | None = None
        if cap != self._cap:  # a column only ever widens: start the table again
            self._cap = cap
            cursor = selected_key(table)
            table.clear(columns=True)
            self._add_columns(table)
        rows: list[Row] = [
            (run.id, run_cells(self.app, run, page.marks.get(run.id, StageMarks()),
                               page.costs.get(run.id, "—"), marked=run.id in self.marked,
                               cap=cap))
            for run in page.runs
        ]
        sync_rows(table, rows)
        order = [run.id for run in page.runs]
        if [str(r.key.value) for r in table.ordered_rows] != order:
            position = {run_id: n for n, run_id in enumerate(order)}
            table.sort("run", key=lambda cell: position.get(run_id_of(cell), 0))
        self._order = order
        if cursor is not None and cursor in order:
            table.move_cursor(row=table.get_row_index(cursor))
        self._show_status()
        if self._funnel_stale:  # the funnel reads every matching run: after the first page
            self._funnel_stale = False
            self.call_after_refresh(self._load_funnel)

    def _show_status(self) -> None:
        page = self.runs_page
        status = self.query_one("#runs-status", Static)
        if page is None or page.total == 0:
            status.display = False
            return
        status.update(page_status(self.app, page, self.run_sort, self.marked))
        status.display = True

    # -- live updates ----------------------------------------------------------------------

    def _subscribe(self) -> None:
        """Refresh at once when the console's run service says a run changed.

        A plain task, not a worker: it never ends, and ``workers.wait_for_complete()`` (used
        by tests and screenshots to settle the screen) must not wait for it.
        """
        self._events = asyncio.create_task(self._listen(self.run_host.bus), name="runs-events")

    async def _listen(self, bus: EventBus) -> None:
        async with bus.subscribe() as queue:
            while True:
                event = await queue.get()
                if isinstance(event, RunCreated | StatusChanged | StageFinished | RunFinished):
                    if self.is_current:
                        self._load_rows()
                    if isinstance(event, RunFinished | RunCreated):
                        self._load_funnel()

    # -- filter and sort -------------------------------------------------------------------

    def action_focus_filter(self) -> None:
        self.query_one("#runs-filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        if box.value:
            box.value = ""
        self.query_one("#runs-table", DataTable).focus()

    @on(Input.Changed, "#runs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.15, lambda: self._apply_filter(event.value))

    @on(Input.Submitted, "#runs-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._apply_filter(event.value)
        self.query_one("#runs-table", DataTable).focus()

    def _apply_filter(self, text: str) -> None:
        found, problems = parse_filter(text)
        if problems:
            self.notify("; ".join(problems), title="filter", severity="warning", timeout=6)
        if found == self.run_filter and text == self.filter_text:
            return
        self.run_filter, self.filter_text, self.page_offset = found, text, 0
        self.action_refresh()

    @on(DataTable.HeaderSelected, "#runs-table")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def sort_by(self, column: str) -> None:
        """Sort by a column (the same column again reverses the order)."""
        run_sort = sort_for_column(self.run_sort, column)
        if run_sort is None:
            self.notify(f"the store cannot sort by {column}", timeout=3)
            return
        self.run_sort = run_sort
        self.page_offset = 0
        self._load_rows()

    def action_cycle_sort(self) -> None:
        self.sort_by(next_sort_column(self.run_sort))

    def action_reverse_sort(self) -> None:
        self.run_sort = reversed_sort(self.run_sort)
        self._load_rows()

    def action_page(self, step: int) -> None:
        page = self.runs_page
        if page is None:
            return
        target = page.offset + step * PAGE_SIZE
        if target < 0 or target >= page.total:
            self.notify("no more pages that way", timeout=2)
            return
        self.page_offset = target
        self._load_rows()

    # -- marks, compare, diff, counterexamples ---------------------------------------------

    def _cursor_run(self) -> str | None:
        table = self.query_one("#runs-table", DataTable)
        return selected_key(table) if table.display else None

    def action_mark(self) -> None:
        run_id = self._cursor_run()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked.append(run_id)
            self.marked = self.marked[-2:]
        if self.runs_page is not None:
            self._show(self.runs_page)

    def action_compare(self) -> None:
        pair = list(self.marked)
        cursor = self._cursor_run()
        if len(pair) == 1 and cursor is not None and cursor not in pair:
            pair.append(cursor)
        if len(pair) != 2:
            self.notify("Mark two runs with space, then press c", timeout=4)
            return
        self.app.push_screen(RunCompareScreen(self.run_host, pair[0], pair[1]))

    def action_diff(self) -> None:
        run_id = self._cursor_run()
        if run_id is not None:
            from srb_tui.ui.screens.diff import DiffScreen

            self.app.push_screen(DiffScreen(run_id, settings=self.run_host.settings))

    def action_counterexamples(self) -> None:
        run_id = self._cursor_run()
        if run_id is not None:
            from srb_tui.ui.screens.counterexamples import CounterexamplesScreen

            self.app.push_screen(CounterexamplesScreen(self.run_host, run_id))

    async def on_unmount(self) -> None:
        if self._events is not None:
            self._events.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._events



def _problem(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
