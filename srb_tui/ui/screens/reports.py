"""Reports screen: the paper's tables and figures (``srb report``) with Rich bars.

The selection bar takes the Runs screen's filter words (``task:… agent:… status:…``) and
``campaign:NAME``; every table of the report follows, each with a bar column drawn from the
table's chosen measure. ``e`` writes the report as Markdown into the state directory. ``c``
picks two configurations and shows their paired comparison instead (``srb report
--compare``); a selection that pools runs of different grader builds or task digests is
shown with a warning saying how many of each (the CLI refuses it without ``--mixed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from srb_tui.reports import build_report, load_runs, render
from srb_tui.reports.model import Report, Table
from srb_tui.reports.pooling import pool_of
from srb_tui.reports.task_facts import adversary_efforts
from srb_tui.reports.uncertainty import compare_report, select
from srb_tui.service.views.runs_table import parse_filter
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.screens.reports_compare import ComparePicker
from srb_tui.ui.widgets.footer import PriorityFooter
from srb_tui.ui.widgets.report_table import Styles, draw_table

SCROLLBAR = 2  # cells the body's vertical scrollbar may take

# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("reports.filter", "reports.compare", "reports.export", "app.campaign",
                "app.runs")


def _filling(tables: Sequence[Table], height: int) -> Sequence[Table]:
    """The first tables whose lines (rows, title, heading, rules, notes: at least) reach
    ``height``."""
    lines = 0
    for count, table in enumerate(tables, 1):
        lines += len(table.rows) + 4 + len(table.notes)
        if lines >= height:
            return tables[:count]
    return tables


class ReportsScreen(Screen[None]):
    """Every table of the report over the selected runs."""

    AUTO_FOCUS = "#reports-body"
    BINDINGS = [
        Binding("slash", "focus_filter", "Select", id="reports.filter",
                tooltip="campaign:NAME and the Runs filter words (task: agent: status: model:)"),
        Binding("ctrl+r", "refresh", "Refresh", id="reports.refresh"),
        Binding("e", "export", "Export .md", id="reports.export",
                tooltip="Write the report as Markdown into the state directory"),
        Binding("c", "compare", "Compare", id="reports.compare",
                tooltip="Mark two configurations: their paired difference over shared "
                        "tasks"),
    ]

    def __init__(self, run_host: ConsoleService, key_of: Callable[[str, str], str]) -> None:
        """``key_of(binding_id, default)``: the key a binding has after the user keymap
        (the empty state names the keys that start a run)."""
        super().__init__()
        self.run_host = run_host
        self.key_of = key_of
        self.selection = ""
        self.report: Report | None = None
        self.configs: list[str] = []
        self.compare: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="select: campaign:NAME task:ID agent:SPEC status:S  (press /)",
                    id="reports-filter", compact=True)
        yield Static(id="reports-message")
        with ScrollableContainer(id="reports-body"):
            yield Static(id="reports-tables")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Reports"
        self.action_refresh()

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        self._load()

    def action_focus_filter(self) -> None:
        self.query_one("#reports-filter", Input).focus()

    @on(Input.Submitted, "#reports-filter")
    def _selected(self, event: Input.Submitted) -> None:
        self.selection = event.value
        self.query_one("#reports-body").focus()
        self._load()

    def _categories(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for load in self.run_host.catalog.loads:
            if load.task is not None and load.task.category:
                found[load.task_id] = load.task.category
        return found

    @work(exclusive=True, group="reports-load")
    async def _load(self) -> None:
        message = self.query_one("#reports-message", Static)
        if not self.run_host.settings.db_path.exists():
            tasks, launch = self.key_of("app.tasks", "t"), self.key_of("tasks.launch", "l")
            message.update(f"No runs yet: the report is empty. Press {tasks} for the task list,"
                           f" then {launch} on a task to launch a run.")
            return
        words = self.selection.split()
        campaign = next((w.split(":", 1)[1] for w in words if w.startswith("campaign:")), None)
        flt, problems = parse_filter(" ".join(w for w in words if not w.startswith("campaign:")))
        if problems:
            message.update(Text("; ".join(problems), style=tone(self.app, "bad")))
            return
        try:
            store = await self.run_host.store()
            runs, order, ledger = await load_runs(store, campaign=campaign,
                                                  filters=flt.kwargs(),
                                                  categories=self._categories(),
                                                  efforts=adversary_efforts(
                                                      self.run_host.catalog.loads))
        except Exception as exc:
            message.update(Text(f"{type(exc).__name__}: {exc}", style=tone(self.app, "bad")))
            return
        selection = self.selection or "all runs"
        self.configs = list(dict.fromkeys([*order, *sorted({r.config for r in runs})]))
        if self.compare is not None and all(select(runs, n) for n in self.compare):
            a, b = self.compare
            self.report = compare_report(runs, a, b, selection=selection)
        else:
            self.compare = None
            self.report = build_report(runs, title=f"srb report — {selection}",
                                       selection=selection, config_order=order,
                                       has_ledger=ledger)
        c = self.report.counts
        said = Text(f"{selection}: {c['runs']} runs · {c['counted']} counted · "
                    f"{c.get('invalid', 0)} invalid (excluded) · {c['imported']} imported",
                    style=tone(self.app, "accent"))
        if self.compare is not None:
            said.append(f" · comparing {self.compare[0]} − {self.compare[1]} (c: change)")
        pool = pool_of(runs)
        if (trace := pool.trace()) is not None:
            self.report.notes.append(trace)  # in the exported Markdown, as srb report's
        if pool.mixed:
            said.append(f"\nmixed pool: {pool.summary()}", style=tone(self.app, "warn"))
        message.update(said)
        self._draw(first_screen=True)  # the tables in sight first: painted at once
        await self._painted()
        self._draw()  # then every table (what is below needs a scroll to be seen)

    async def _painted(self) -> None:
        """Return once the screen has been refreshed (what is drawn is on the terminal)."""
        done = asyncio.Event()
        self.call_after_refresh(done.set)
        await done.wait()

    def action_compare(self) -> None:
        if len(self.configs) < 2:
            self.notify("Nothing to compare: the selection has fewer than two "
                        "configurations.", title="compare", severity="warning", timeout=6)
            return

        def chosen(pair: tuple[str, str] | None) -> None:
            self.compare = pair
            self._load()

        self.app.push_screen(ComparePicker(self.configs), chosen)

    def on_resize(self, event: Resize) -> None:
        if self.report is not None:
            self._draw()

    def _draw(self, first_screen: bool = False) -> None:
        """Every table drawn for the body's width; a table that cannot fit even with
        lettered headings and no bar makes the body scroll sideways (nothing is cut).
        ``first_screen``: only the tables that fill the body's height (the top of what
        every table shows: drawing them all takes Rich most of a second at the paper's size)."""
        if self.report is None:
            return
        body = self.query_one("#reports-body", ScrollableContainer)
        room = max(20, (body.size.width or self.size.width) - 2 - SCROLLBAR)
        styles = Styles(header=tone(self.app, "accent", bold=True), bar=tone(self.app, "ok"),
                        muted=tone(self.app, "muted"))
        tables: Sequence[Table] = self.report.tables
        if first_screen:
            tables = _filling(tables, body.size.height or self.size.height)
        drawn = [draw_table(t, room, styles) for t in tables]
        shown = self.query_one("#reports-tables", Static)
        shown.styles.width = max([room, *(d.width for d in drawn)])
        shown.update(Group(*(d.renderable for d in drawn)))

    def action_export(self) -> None:
        if self.report is None or not self.report.counts.get("runs"):
            what = "no runs in the store yet" if self.report is None else \
                f"no runs match {self.selection or 'the selection'}"
            self.notify(f"Nothing to export: {what}.", title="export", severity="warning",
                        timeout=6)
            return
        path = self.run_host.settings.state_dir / "report.md"
        path.write_text(render(self.report, "md"), encoding="utf-8")
        self.notify(f"wrote {path}", timeout=4)
