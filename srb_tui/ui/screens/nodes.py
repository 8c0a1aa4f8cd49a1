"""Nodes screen: the Docker engines runs are placed on, one row each.

Each row: the engine's name and whether it answers, its CPUs and memory, the srb containers
running on it (any store's), this store's runs there (live / placed), its address and the
last error it gave. Under the table, everything about the highlighted engine: its server
version, the runs this console drives there, the live runs' ids and the whole error. In
pool mode the summary line names srb's own engine too (the base image's source).

The engines are asked every few seconds by :func:`srb_tui.service.nodes.load_nodes`, in a
worker (the engine calls run on srb's engine pools, never on the event loop); a tick while
the last one is still waiting on a silent engine is skipped. With the default single local
engine the table has that one row.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from srb_tui.service.nodes import load_nodes
from srb_tui.service.views.nodes import NodeRow, NodesView
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.footer import PriorityFooter

REFRESH_SEC = 5.0
ERROR_CELL = 40  # the table's Last error column is cut here; the pane below has it whole
COLUMNS = (("Node", "node"), ("State", "state"), ("CPUs", "cpus"), ("Memory", "memory"),
           ("srb ctrs", "running"), ("Live/runs", "runs"), ("Address", "url"),
           ("Last error", "error"))
FOOTER_FIRST = ("nodes.refresh", "app.runs", "app.tasks")
KIND_TEXT = {
    "local": "local: srb's one engine (DOCKER_HOST or the default socket)",
    "engines": "engines: a pool from state/config.toml",
    "swarm": "swarm: the manager's ready, active nodes",
}


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at)) if at else "—"


class NodesScreen(Screen[None]):
    """Every engine of the backend, refreshed every few seconds."""

    AUTO_FOCUS = "#nodes-table"
    DEFAULT_CSS = """
    #nodes-body { height: 1fr; }
    #nodes-summary { padding: 0 1; height: auto; }
    #nodes-table { height: auto; max-height: 60%; }
    #nodes-detail { padding: 0 1; height: auto; }
    """
    BINDINGS = [
        Binding("ctrl+r", "refresh", "Refresh", id="nodes.refresh",
                tooltip="Ask every engine again now (the screen also asks every 5 s)"),
    ]

    def __init__(self, run_host: ConsoleService) -> None:
        super().__init__()
        self.run_host = run_host
        self.view: NodesView | None = None
        self.loading = False
        self.loads = 0  # finished loads (tests wait on it)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="nodes-body"):
            yield Static("Asking the engines…", id="nodes-summary")
            yield DataTable(id="nodes-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="nodes-detail")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Nodes"
        table = self.query_one("#nodes-table", DataTable)
        for label, key in COLUMNS:
            table.add_column(label, key=key)
        table.focus()  # the cursor keys move along the engines from the start
        self.action_refresh()
        self.set_interval(REFRESH_SEC, self._tick)

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def _tick(self) -> None:
        if self.is_current:  # another screen shown: ask again when this one is (resume)
            self.action_refresh()

    def action_refresh(self) -> None:
        if not self.loading:  # else the last load still waits on a silent engine
            self.loading = True
            self._load()

    @work(group="nodes-load", exit_on_error=False)
    async def _load(self) -> None:
        try:
            view = await load_nodes(self.run_host.core)
        except Exception as exc:  # load_nodes says what is wrong; this is a last resort
            view = NodesView("", problem=f"{type(exc).__name__}: {exc}", checked_at=time.time())
        finally:
            self.loading = False
        self.view = view
        self._show(view)
        self.loads += 1

    # -- drawing ----------------------------------------------------------------------------

    def _show(self, view: NodesView) -> None:
        self.query_one("#nodes-summary", Static).update(self._summary(view))
        table = self.query_one("#nodes-table", DataTable)
        keep = table.cursor_row
        table.clear()
        for row in view.rows:
            table.add_row(*self._cells(row), key=row.name)
        if view.rows:
            table.move_cursor(row=min(max(keep, 0), len(view.rows) - 1))
        self._detail()

    def _summary(self, view: NodesView) -> Text:
        text = Text(justify="left")
        if view.kind:
            text.append(KIND_TEXT.get(view.kind, view.kind), style=tone(self.app, "accent"))
        if view.rows:
            text.append(f" · {view.up} of {len(view.rows)} engine(s) answer",
                        style=tone(self.app, "ok" if view.up == len(view.rows) else "warn"))
        if view.registry:
            text.append(f" · registry {view.registry}")
        text.append(f" · asked {_clock(view.checked_at)}, every {REFRESH_SEC:g} s",
                    style=tone(self.app, "muted"))
        if view.own is not None:
            text.append("\nsrb's engine (base image source) ")
            text.append(f"{view.own.url}: ")
            text.append(view.own.detail if view.own.up else f"down: {view.own.detail}",
                        style=tone(self.app, "ok" if view.own.up else "bad"))
        if view.problem:
            text.append(f"\n{view.problem}", style=tone(self.app, "bad"))
        return text

    def _cells(self, row: NodeRow) -> list[str | Text]:
        state = Text("up" if row.up else "down",
                     style=tone(self.app, "ok" if row.up else "bad", bold=not row.up))
        error = row.error or row.last_error or "—"
        if len(error) > ERROR_CELL:
            error = error[:ERROR_CELL - 1] + "…"
        return [
            Text(row.name, style=tone(self.app, "accent", bold=True)), state, row.cpus_text,
            row.memory_text, str(row.srb_running) if row.up else "—",
            f"{row.live}/{row.placed}", row.url,
            Text(error, style=tone(self.app, "bad" if row.error else "muted")),
        ]

    def selected(self) -> NodeRow | None:
        """The node under the table's cursor."""
        if self.view is None or not self.view.rows:
            return None
        index = self.query_one("#nodes-table", DataTable).cursor_row
        return self.view.rows[index] if 0 <= index < len(self.view.rows) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "nodes-table":
            self._detail()

    def _detail(self) -> None:
        row = self.selected()
        pane = self.query_one("#nodes-detail", Static)
        if row is None:
            pane.update("")
            return
        text = Text(justify="left")
        text.append(row.name, style=tone(self.app, "accent", bold=True))
        text.append(f" · {row.url}")
        if row.up:
            text.append(f" · server {row.version} · {row.cpus_text} CPUs · {row.memory_text}")
            text.append(f"\nsrb containers running: {row.srb_running} (any store's)")
        else:
            text.append(" · does not answer", style=tone(self.app, "bad"))
        if row.held:
            text.append(f" · this console drives {row.held} run(s) there")
        text.append(f"\nruns of this store placed here: {row.placed}, live: {row.live}")
        if row.live_runs:
            more = row.live - len(row.live_runs)
            text.append(" (" + ", ".join(row.live_runs) + (f", +{more}" if more > 0 else "")
                        + ")")
        if row.error or row.last_error:
            text.append("\nlast error: ", style=tone(self.app, "bad"))
            text.append(row.error or row.last_error)
        pane.update(text)


__all__ = ["NodesScreen"]
