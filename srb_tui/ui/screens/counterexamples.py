"""Counterexamples screen: every Stage III candidate of a run, its code and its outputs.

The table lists every candidate of every adversary round (verdict, reason, exit codes and
durations on State A and on the submission). Below it: the highlighted code of the
selected candidate beside its output on each tree. ``R`` re-runs the candidate in the
run's verification image (the grader's ``candidate`` subcommand, three times on each
tree) and shows each step as it happens; ``e`` exports it as a standalone folder.
"""

from __future__ import annotations

from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from srb_tui.schema import load_task
from srb_tui.service.grading.rerun import (
    RerunError,
    RerunResult,
    export_candidate,
    output_text,
)
from srb_tui.service.views.diff import task_dir_of
from srb_tui.service.views.display import display_path
from srb_tui.store import CounterexampleRecord, RunRecord
from srb_tui.ui.console_service import ConsoleError, ConsoleService
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.diff_view import visible_text
from srb_tui.ui.widgets.footer import PriorityFooter

VERDICT_TONE: dict[str, Tone] = {"upheld": "bad", "invalid": "muted", "rejected": "warn",
                                 "error": "warn", "nondeterministic": "bad"}
# Fixed widths: the table does not re-measure its columns after the rows arrive.
COLUMNS = (("#", "id", 4), ("Adversary", "adversary", 26), ("Verdict", "verdict", 9),
           ("Reason", "reason", 56), ("Exit A", "exit_a", 6), ("Exit B", "exit_b", 6),
           ("Time A", "time_a", 8), ("Time B", "time_b", 8))
OUTPUT_LIMIT = 20_000
ATTEMPT = "attempt "  # progress lines of single executions (service.rerun.attempt_line)


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("cx.back", "cx.rerun", "cx.export", "app.runs")


class RerunProgress(Message):
    def __init__(self, counterexample_id: int, text: str) -> None:
        super().__init__()
        self.counterexample_id = counterexample_id
        self.text = text


class RerunDone(Message):
    def __init__(
        self, counterexample_id: int, result: RerunResult | None, problem: str = ""
    ) -> None:
        super().__init__()
        self.counterexample_id = counterexample_id
        self.result = result
        self.problem = problem


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _exit(value: int | None) -> str:
    return "—" if value is None else str(value)


class CounterexamplesScreen(Screen[None]):
    """The candidates of one run (pushed with a run id)."""

    AUTO_FOCUS = "#cx-table"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="cx.back", tooltip="Close"),
        Binding("R", "rerun", "Re-run ×3", id="cx.rerun",
                tooltip="Adjudicate the candidate again on both trees, in the run's "
                        "verification image"),
        Binding("e", "export", "Export", id="cx.export",
                tooltip="Write the candidate as a standalone folder with a README"),
    ]

    def __init__(self, run_host: ConsoleService, run_id: str) -> None:
        super().__init__()
        self.run_host = run_host
        self.run_id = run_id
        self.run: RunRecord | None = None
        self.records: dict[int, CounterexampleRecord] = {}
        self.selected: int | None = None
        self.rerun_log: dict[int, list[str]] = {}
        self.rerun_results: dict[int, RerunResult] = {}
        self.running: set[int] = set()
        self.exported: dict[int, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Counterexamples of {self.run_id} · loading…", id="cx-summary")
        yield DataTable(id="cx-table", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="cx-detail"):
            with VerticalScroll(id="cx-code-box"):
                yield Static(id="cx-code")
            with Vertical(id="cx-outputs"):
                with VerticalScroll(id="cx-output-a-box"):
                    yield Static(id="cx-output-a")
                with VerticalScroll(id="cx-output-b-box"):
                    yield Static(id="cx-output-b")
        yield Static(id="cx-rerun")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = f"Counterexamples · {self.run_id}"
        table = self.query_one("#cx-table", DataTable)
        for label, key, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        self._load()

    @work(exclusive=True, group="cx-load")
    async def _load(self) -> None:
        try:
            store = await self.run_host.store()
            run = await store.runs.require_run(self.run_id)
            records = await store.grading.counterexamples(self.run_id)
            rounds = await store.grading.adversary_rounds(self.run_id)
        except Exception as exc:
            self.query_one("#cx-summary", Static).update(
                Text(str(exc) or type(exc).__name__, style=tone(self.app, "bad"))
            )
            return
        self.run = run
        self._show(records, len(rounds))

    def _show(self, records: list[CounterexampleRecord], rounds: int) -> None:
        self.records = {r.id: r for r in records}
        table = self.query_one("#cx-table", DataTable)
        table.clear()
        counts: dict[str, int] = {}
        for record in records:
            counts[record.verdict] = counts.get(record.verdict, 0) + 1
            table.add_row(
                str(record.id), record.adversary_id,
                Text(record.verdict, style=tone(self.app, VERDICT_TONE.get(record.verdict,
                                                                             "accent"), bold=True)),
                (record.reason or "—")[:56], _exit(record.exit_a), _exit(record.exit_b),
                _seconds(record.duration_a), _seconds(record.duration_b), key=str(record.id),
            )
        summary = Text(f"{self.run_id}  ", style="bold")
        if not records:
            summary.append(f"no candidates recorded ({rounds} adversary rounds)",
                           style=tone(self.app, "muted"))
            self.query_one("#cx-summary", Static).update(summary)
            return
        summary.append(f"{len(records)} candidates from {rounds} adversary rounds: ")
        for n, (verdict, count) in enumerate(sorted(counts.items())):
            if n:
                summary.append(" · ")
            summary.append(f"{count} {verdict}",
                           style=tone(self.app, VERDICT_TONE.get(verdict, "accent")))
        self.query_one("#cx-summary", Static).update(summary)
        self._select(records[0].id)

    @on(DataTable.RowHighlighted, "#cx-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._select(int(event.row_key.value))

    def _select(self, counterexample_id: int) -> None:
        record = self.records.get(counterexample_id)
        if record is None:
            return
        self.selected = counterexample_id
        dark = self.app.current_theme.dark
        code = Syntax(record.code, "bash", theme="monokai" if dark else "friendly",
                      line_numbers=True, word_wrap=False, background_color="default")
        self.query_one("#cx-code", Static).update(code)
        for side, output, exit_code, duration in (
            ("a", record.output_a, record.exit_a, record.duration_a),
            ("b", record.output_b, record.exit_b, record.duration_b),
        ):
            title = "State A" if side == "a" else "submission"
            text = Text(f"{title} · exit {_exit(exit_code)} · {_seconds(duration)}\n",
                        style=tone(self.app, "accent", bold=True))
            body = "\n".join(visible_text(line) for line in output_text(output).split("\n"))
            text.append(body[:OUTPUT_LIMIT] if body else "(no output recorded)",
                        style="" if body else tone(self.app, "muted"))
            self.query_one(f"#cx-output-{side}", Static).update(text)
        self._show_rerun()

    # -- re-run ----------------------------------------------------------------------------

    def action_rerun(self) -> None:
        cid = self.selected
        if cid is None:
            self.notify("No candidate selected", timeout=3)
            return
        if cid in self.running:
            self.notify(f"#{cid} is already being re-run", timeout=3)
            return
        self.running.add(cid)
        self.rerun_log[cid] = ["starting"]
        self.rerun_results.pop(cid, None)
        self._show_rerun()
        self._rerun(cid)

    @work(group="cx-rerun")
    async def _rerun(self, cid: int) -> None:
        try:
            result = await self.run_host.rerun_counterexample(
                self.run_id, cid, lambda text: self._progress(cid, text))
        except ConsoleError as exc:
            self.post_message(RerunDone(cid, None, str(exc)))
            return
        except Exception as exc:
            self.post_message(RerunDone(cid, None, str(exc) or type(exc).__name__))
            return
        self.post_message(RerunDone(cid, result))

    def _progress(self, cid: int, text: str) -> None:
        self.post_message(RerunProgress(cid, text))

    def on_rerun_progress(self, message: RerunProgress) -> None:
        self.rerun_log.setdefault(message.counterexample_id, []).append(message.text)
        if message.counterexample_id == self.selected:
            self._show_rerun()

    def on_rerun_done(self, message: RerunDone) -> None:
        cid = message.counterexample_id
        self.running.discard(cid)
        if message.result is not None:
            self.rerun_results[cid] = message.result
        else:
            self.rerun_log.setdefault(cid, []).append(f"failed: {message.problem}")
        if cid == self.selected:
            self._show_rerun()

    def _show_rerun(self) -> None:
        panel = self.query_one("#cx-rerun", Static)
        cid = self.selected
        if cid is None:
            panel.update("")
            return
        text = Text()
        log = self.rerun_log.get(cid)
        result = self.rerun_results.get(cid)
        if not log and result is None:
            text.append("R re-runs this candidate 3× on each tree · e exports it",
                        style=tone(self.app, "muted"))
            if cid in self.exported:
                text.append(f"\nexported to {self.exported[cid]}", style=tone(self.app, "ok"))
            panel.update(text)
            return
        running = cid in self.running
        steps = [line for line in log or [] if not line.startswith(ATTEMPT)]
        text.append(f"re-run of #{cid}: ", style="bold")
        text.append(" → ".join(steps), style=tone(self.app, "muted"))
        if running:
            text.append(" …", style=tone(self.app, "accent"))
        if result is None:  # the executions so far, one by one (the result lists them all)
            for line in log or []:
                if line.startswith(ATTEMPT):
                    text.append(f"\n  {line}")
        if result is not None:
            text.append("\n")
            text.append(f"{result.outcome}", style=tone(
                self.app, VERDICT_TONE.get(result.outcome, "accent"), bold=True))
            text.append(f": {result.reason}  ({result.elapsed_sec:.1f} s in {result.image})\n")
            for run in result.runs:
                tree = "State A   " if run.role == "original" else "submission"
                state = "timed out" if run.timed_out else f"exit {_exit(run.exit_code)}"
                kind: Tone = "ok" if run.exit_code == 0 and not run.timed_out else "bad"
                text.append(f"  attempt {run.attempt}  {tree}  ")
                text.append(f"{state:<9}", style=tone(self.app, kind))
                text.append(f"  {run.duration_sec:.2f} s\n")
            for finding in result.findings:
                text.append(f"  scope: {finding}\n", style=tone(self.app, "warn"))
        panel.update(text)

    # -- export ----------------------------------------------------------------------------

    def action_export(self) -> None:
        cid = self.selected
        record = self.records.get(cid) if cid is not None else None
        if record is None:
            self.notify("No candidate selected", timeout=3)
            return
        self._export(record)

    @work(thread=True, group="cx-export")
    def _export(self, record: CounterexampleRecord) -> None:
        settings = self.run_host.settings
        task: Any = None
        if self.run is not None:
            try:
                task = load_task(task_dir_of(settings, self.run)).task
            except Exception:
                task = None
        try:
            folder = export_candidate(record, task, settings.exports_dir)
        except (OSError, RerunError) as exc:
            self.app.call_from_thread(self.notify, f"export failed: {exc}", severity="error")
            return
        self.app.call_from_thread(self._exported, record.id, display_path(folder))

    def _exported(self, cid: int, where: str) -> None:
        self.exported[cid] = where
        self.notify(f"exported to {where}", title=f"counterexample #{cid}")
        if cid == self.selected:
            self._show_rerun()
