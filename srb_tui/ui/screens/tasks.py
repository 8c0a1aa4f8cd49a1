"""Tasks screen: every task under the configured roots, its validation state and instruction."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Markdown, Static

from srb_tui.schema import Task, TaskLoad
from srb_tui.service.catalog import TaskSummary, summarise
from srb_tui.service.views.display import display_path
from srb_tui.service.views.state_a_status import state_a_status
from srb_tui.ui.console_service import ConsoleError, ConsoleService, LaunchRequest
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.footer import PriorityFooter

STATUS_TONE: dict[str, Tone] = {"ok": "ok", "incomplete": "warn", "invalid": "bad"}
# Status right after the id: whether a task is valid stays in view at 80 columns
COLUMNS = ("Task", "Status", "Class", "Stacks", "Budget", "G·M·A")
WIDE = 150  # columns from which list and detail sit side by side
HEADING_REFRESH_SEC = 5.0  # the selected task's heading (State A cache) read again
NO_TASKS = """\
# No tasks found

srb looked in: {roots}

Point it at task directories in the published schema with `--tasks DIR`
(repeatable) or `SRB_TASKS=dir1:dir2`, e.g. `srb --tasks tasks`.
"""


def format_budget(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    hours = seconds / 3600
    return f"{hours:.0f} h" if hours >= 1 else f"{seconds / 60:.0f} min"


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("tasks.launch", "tasks.filter", "app.runs",
                "tasks.prepare", "tasks.record", "app.quit")


class TasksScreen(Screen[None]):
    """List of tasks on the left, the selected task's detail on the right."""

    class Launch(Message):
        """The launch dialog was confirmed: the app launches the runs and opens the first."""

        def __init__(self, request: LaunchRequest) -> None:
            super().__init__()
            self.request = request

    AUTO_FOCUS = "#task-table"

    BINDINGS = [
        Binding("/", "focus_filter", "Filter", id="tasks.filter", tooltip="Filter tasks by text"),
        Binding("escape", "clear_filter", "Clear", id="tasks.clear", show=False,
                tooltip="Clear the filter and return to the table"),
        Binding("ctrl+r", "reload", "Reload", id="tasks.reload",
                tooltip="Re-read every task directory from disk"),
        Binding("p", "prepare", "Prepare", id="tasks.prepare",
                tooltip="Fetch, verify and cache the selected task's State A"),
        Binding("R", "record", "Record", id="tasks.record",
                tooltip="Identity run: grade State A against itself; every module must be 1.0"),
        Binding("l", "launch", "Launch", id="tasks.launch",
                tooltip="Run an agent on the selected task"),
    ]

    def __init__(self, run_host: ConsoleService) -> None:
        super().__init__()
        self.run_host = run_host
        self._summaries: list[TaskSummary] = []
        self._selected: str | None = None
        self._heading_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="tasks-body"):
            with Vertical(id="task-list"):
                yield Input(placeholder="filter: id, class, stack…  (press /)", id="task-filter",
                            compact=True)
                yield DataTable(id="task-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="task-detail"):
                yield Static(id="task-heading")
                yield Static(id="task-problems")
                yield Markdown(id="task-instruction")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Tasks"
        table = self.query_one("#task-table", DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label.lower())
        self.set_class(self.size.width >= WIDE, "-wide")
        self._load()
        self.watch(self.app, "theme", self._retheme, init=False)

    def on_resize(self) -> None:
        self.set_class(self.size.width >= WIDE, "-wide")

    def on_screen_resume(self) -> None:
        """Back on Tasks: the selected task's heading read again (a run may have prepared
        its State A meanwhile: "not prepared yet … press p" stayed, issue 35 item 4)."""
        self._refresh_heading()
        if self._heading_timer is None:  # and while it is shown, every few seconds
            self._heading_timer = self.set_interval(HEADING_REFRESH_SEC, self._refresh_heading)

    def on_screen_suspend(self) -> None:
        if self._heading_timer is not None:
            self._heading_timer.stop()
            self._heading_timer = None

    def _refresh_heading(self) -> None:
        load = self.run_host.catalog.find(self._selected) if self._selected else None
        if load is not None:
            self.query_one("#task-heading", Static).update(
                _heading(load, self.app, self.run_host.settings.state_a_cache))

    def _retheme(self) -> None:
        self._fill(self.query_one("#task-filter", Input).value)

    def _load(self) -> None:
        catalog = self.run_host.catalog
        self._summaries = catalog.summaries()
        self._fill(self.query_one("#task-filter", Input).value)
        if catalog.duplicates:  # two roots hold one id: the first root's task is the one shown
            lines = [f"{d.task_id}: using {display_path(d.used)}, ignoring "
                     + ", ".join(display_path(p) for p in d.ignored) for d in catalog.duplicates]
            self.notify("\n".join(lines), title="same task id in two task roots",
                        severity="warning", timeout=15)

    def _fill(self, text: str) -> None:
        table = self.query_one("#task-table", DataTable)
        table.clear()
        needle = text.strip().lower()
        shown = 0
        for s in self._summaries:
            hay = " ".join((s.task_id, s.category, s.state_a, s.state_b, s.title)).lower()
            if needle and needle not in hay:
                continue
            status = Text(s.status, style=tone(self.app, STATUS_TONE[s.status], bold=True))
            if s.errors:
                status.append(f" ({s.errors})")
            table.add_row(
                s.task_id, status, s.category.split("-")[0], s.stacks,
                format_budget(s.budget_sec), f"{s.gates}·{s.modules}·{s.adversaries}",
                key=s.task_id,
            )
            shown += 1
        if shown == 0:
            self._show_empty(needle)
        elif self._selected and self._selected in {str(k.value) for k in table.rows}:
            table.move_cursor(row=table.get_row_index(self._selected))
        else:
            self._show(str(next(iter(table.rows)).value))

    def _show_empty(self, needle: str) -> None:
        roots = ", ".join(display_path(r) for r in self.run_host.settings.task_roots)
        heading = self.query_one("#task-heading", Static)
        self.query_one("#task-problems", Static).update("")
        if needle:
            heading.update(f"No task matches “{needle}”. Press Esc to clear the filter.")
            self.query_one("#task-instruction", Markdown).update("")
        else:
            heading.update("")
            self.query_one("#task-instruction", Markdown).update(NO_TASKS.format(roots=roots))

    @on(DataTable.RowHighlighted, "#task-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show(str(event.row_key.value))

    @on(Input.Changed, "#task-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#task-filter")
    def _filter_done(self) -> None:
        self.query_one("#task-table", DataTable).focus()

    def select_task(self, task_id: str) -> None:
        """Move the cursor to ``task_id`` (used by the command palette)."""
        table = self.query_one("#task-table", DataTable)
        if task_id not in {str(k.value) for k in table.rows}:
            self.query_one("#task-filter", Input).value = ""
            self._fill("")
        table.move_cursor(row=table.get_row_index(task_id))
        table.focus()
        self._show(task_id)

    def _show(self, task_id: str) -> None:
        load = self.run_host.catalog.find(task_id)
        if load is None:
            return
        self._selected = task_id
        self.query_one("#task-heading", Static).update(
            _heading(load, self.app, self.run_host.settings.state_a_cache)
        )
        self.query_one("#task-problems", Static).update(_problems(load, self.app))
        self.query_one("#task-instruction", Markdown).update(_instruction(load))

    def action_focus_filter(self) -> None:
        self.query_one("#task-filter", Input).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#task-filter", Input).value = ""
        self.query_one("#task-table", DataTable).focus()

    def action_reload(self) -> None:
        self.run_host.reload_catalog()
        self._load()
        self.notify(f"{len(self._summaries)} task(s) loaded")

    def _selected_task(self) -> Task | None:
        load = self.run_host.catalog.find(self._selected) if self._selected else None
        if load is None or load.task is None:
            self.notify("Select a task that loads first.", severity="warning")
            return None
        return load.task

    def action_prepare(self) -> None:
        task = self._selected_task()
        if task is not None:
            self.notify(f"preparing State A of {task.id} …", title="prepare")
            self._prepare(task)

    @work(exclusive=True, group="task-prepare")
    async def _prepare(self, task: Task) -> None:
        try:
            ready = await self.run_host.prepare_state_a(task)
        except ConsoleError as exc:
            self.notify(str(exc), title="prepare", severity="error", timeout=12)
            return
        self.notify(f"{task.id}: State A ready, {ready.file_count} files", title="prepare")
        self._refresh_detail()

    def _refresh_detail(self) -> None:
        if self._selected:
            self._show(self._selected)

    def action_record(self) -> None:
        task = self._selected_task()
        if task is not None:
            self.notify(f"identity run of {task.id}: State A against itself …", title="record")
            self._record(task)

    @work(exclusive=True, group="task-record")
    async def _record(self, task: Task) -> None:
        try:
            result = await self.run_host.record_identity(task)
        except ConsoleError as exc:
            self.notify(str(exc), title="record", severity="error", timeout=12)
            return
        if result.ok:
            self.notify(f"{task.id}: every module scores 1.0 on State A", title="record")
        else:
            self.notify(f"{task.id} refused: {', '.join(result.failing)} below 1.0",
                        title="record", severity="error", timeout=12)
        self._refresh_detail()

    def action_launch(self) -> None:
        """Open the launch dialog for the selected task (runs go through the console)."""
        from srb_tui.ui.screens.launch import LaunchDialog, LaunchTarget

        load = self.run_host.catalog.find(self._selected) if self._selected else None
        if load is None:
            self.notify("Select a task first.", title="launch", severity="warning")
            return
        if load.task is None or not load.ok:
            self.notify(f"{load.task_id} does not validate; fix its problems before "
                        "launching.", title="launch", severity="error")
            return
        target = LaunchTarget(load.task_id, load.path, load.task.budget_sec)

        def launched(request: object) -> None:
            if isinstance(request, LaunchRequest):
                self.post_message(self.Launch(request))

        self.app.push_screen(LaunchDialog(target), launched)


def _heading(load: TaskLoad, app: App[object], cache_dir: Path) -> Text:
    s = summarise(load)
    out = Text()
    out.append(s.task_id, style="bold")
    if s.title:
        out.append(f"\n{s.title}")
    out.append(f"\n{s.category or 'uncategorised'} · budget {format_budget(s.budget_sec)}")
    out.append(f" · {s.gates} gates · {s.modules} modules · {s.adversaries} adversaries")
    if s.state_a:
        out.append("\nState A: ", style="bold")
        out.append(s.state_a)
    if s.state_b:
        out.append("\nState B: ", style="bold")
        out.append(s.state_b)
    out.append(f"\n{display_path(load.path)}", style=tone(app, "muted"))
    task = load.task
    if task is None:
        return out
    status = state_a_status(task, cache_dir)
    out.append("\nState A cache: ", style="bold")
    out.append(status.detail, style=tone(app, "ok" if status.prepared else "warn"))
    evaluation = task.evaluation
    if evaluation is not None and evaluation.audit is not None and evaluation.audit.gates:
        out.append("\nGates: ", style="bold")
        out.append(", ".join(g.id + ("" if g.required else " (optional)")
                             for g in evaluation.audit.gates))
    if task.suite is not None:
        out.append("\nModules: ", style="bold")
        out.append(", ".join(m.id for m in task.suite.modules))
    if task.probe is not None:
        out.append("\nAdversaries: ", style="bold")
        out.append(", ".join(f"{a.id} ({a.driver})" for a in task.probe.adversaries))
    return out


def _instruction(load: TaskLoad) -> str:
    """The instruction as Markdown, or why there is none to show."""
    if load.task is None:  # task.toml (or evaluation.toml) did not load: nothing was read
        return ("_The instruction is not shown: this task does not load. "
                "Fix the errors above, then Reload to read it again._")
    return load.task.instruction or "_This task ships no instruction.md._"


def _problems(load: TaskLoad, app: App[object]) -> Text:
    if not load.problems:
        return Text("✓ valid: no problems found", style=tone(app, "ok"))
    out = Text()
    errors = [p for p in load.problems if p.kind == "error"]
    absent = [p for p in load.problems if p.kind == "absent"]
    other = [p for p in load.problems if p.kind not in ("error", "absent")]
    if errors:
        out.append(f"✗ {len(errors)} error(s)\n", style=tone(app, "bad", bold=True))
        for p in errors:
            out.append(f"  {p}\n", style=tone(app, "bad"))
    if absent:
        out.append(f"○ {len(absent)} file(s) absent\n", style=tone(app, "warn", bold=True))
        for p in absent:
            out.append(f"  {p}\n", style=tone(app, "warn"))
    for p in other:
        out.append(f"  {p}\n", style=tone(app, "muted"))
    return out
