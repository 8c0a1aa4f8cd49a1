"""Reports screen: the paper's tables and figures (``srb report``) with Rich bars.

The selection bar takes the Runs screen's filter words (``task:… agent:… status:…``) and
``campaign:NAME``; every table of the report follows, each with a bar column drawn from the
table's chosen measure. ``e`` writes the report as Markdown into the state directory.
"""

from __future__ import annotations

from collections.abc import Callable

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from srb_tui.reports import build_report, load_runs, render
from srb_tui.reports.build import adversary_efforts
from srb_tui.reports.model import Report, Table, fmt
from srb_tui.service.runs_table import parse_filter
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.footer import PriorityFooter

BAR_WIDTH = 20


WIDE_TABLE = 10  # columns from which a table's bars are half as long (they stay whole)


def bar(value: float | None, top: float, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` eighths-resolution blocks for ``value`` out of ``top``."""
    if value is None or top <= 0:
        return ""
    eighths = round(width * 8 * max(0.0, min(1.0, value / top)))
    full, rest = divmod(eighths, 8)
    return "█" * full + ("▏▎▍▌▋▊▉"[rest - 1] if rest else "")


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("reports.filter", "reports.export", "app.campaign", "app.runs")


class ReportsScreen(Screen[None]):
    """Every table of the report over the selected runs."""

    AUTO_FOCUS = "#reports-body"
    BINDINGS = [
        Binding("slash", "focus_filter", "Select", id="reports.filter",
                tooltip="campaign:NAME and the Runs filter words (task: agent: status: model:)"),
        Binding("ctrl+r", "refresh", "Refresh", id="reports.refresh"),
        Binding("e", "export", "Export .md", id="reports.export",
                tooltip="Write the report as Markdown into the state directory"),
    ]

    def __init__(self, run_host: ConsoleService, key_of: Callable[[str, str], str]) -> None:
        """``key_of(binding_id, default)``: the key a binding has after the user keymap
        (the empty state names the keys that start a run)."""
        super().__init__()
        self.run_host = run_host
        self.key_of = key_of
        self.selection = ""
        self.report: Report | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="select: campaign:NAME task:ID agent:SPEC status:S  (press /)",
                    id="reports-filter", compact=True)
        yield Static(id="reports-message")
        with VerticalScroll(id="reports-body"):
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
        self.report = build_report(runs, title=f"srb report — {selection}",
                                   selection=selection, config_order=order, has_ledger=ledger)
        c = self.report.counts
        message.update(Text(f"{selection}: {c['runs']} runs · {c['counted']} counted · "
                            f"{c['invalid']} invalid (excluded) · {c['imported']} imported",
                            style=tone(self.app, "accent")))
        self.query_one("#reports-tables", Static).update(
            Group(*(self._table(t) for t in self.report.tables))
        )

    def _table(self, table: Table) -> RenderableType:
        # Light rules and whole names: labels never wrap or shrink to "referen…"; long
        # numeric headers wrap instead, and the bar keeps its full width.
        out = RichTable(title=table.title, title_justify="left", expand=False,
                        box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                        title_style="bold",
                        header_style=tone(self.app, "accent", bold=True))
        for column in table.columns:
            text = column.kind == "text"
            out.add_column(column.title, justify="left" if text else "right", no_wrap=text)
        index = next((i for i, c in enumerate(table.columns) if c.key == table.bar), None)
        width = BAR_WIDTH if len(table.columns) < WIDE_TABLE else BAR_WIDTH // 2
        if index is not None:
            out.add_column("", min_width=width, no_wrap=True)
        values = [r[index] for r in table.rows] if index is not None else []
        top = max([float(v) for v in values if isinstance(v, int | float)], default=0.0)
        if index is not None and table.columns[index].kind == "pct":
            top = 100.0
        for row in table.rows:
            cells: list[RenderableType] = [fmt(v, c.kind) for v, c in zip(row, table.columns,
                                                                           strict=True)]
            if index is not None:
                value = row[index]
                cells.append(Text(bar(float(value) if isinstance(value, int | float) else None,
                                      top, width), style=tone(self.app, "ok")))
            out.add_row(*cells)
        if table.total is not None:
            out.add_section()
            cells = [fmt(v, c.kind) for v, c in zip(table.total, table.columns, strict=True)]
            out.add_row(*cells, *([""] if index is not None else []), style="bold")
        notes = [Text(n, style=tone(self.app, "muted")) for n in table.notes]
        return Group(out, *notes, Text(""))

    def action_export(self) -> None:
        if self.report is None:
            return
        path = self.run_host.settings.state_dir / "report.md"
        path.write_text(render(self.report, "md"), encoding="utf-8")
        self.notify(f"wrote {path}", timeout=4)
