"""The Run screen: one run, live. Header with phase, elapsed vs budget and the lifecycle
timeline; tabs for the agent log and the three grading stages plus the score.

Everything shown comes from the store (``run_detail``, the log by page) and from the
console's event bus; a worker subscribes to the bus, log lines go straight into the log
view's queue, and any other event marks the detail stale so a one-second tick reloads it
and the panes update their rows in place.
"""

from __future__ import annotations

import asyncio
import gc
from datetime import UTC, datetime
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Header, Input, Static, TabbedContent, TabPane

from srb_tui.schema import Task, load_task
from srb_tui.service.agent_events import AgentRoundFinished, AgentRoundStarted, AgentTranscript
from srb_tui.service.events import LogLines, Progress, RunFinished, StageFinished, StatusChanged
from srb_tui.service.verification_events import AdversaryRoundEnded
from srb_tui.store import FINAL_STATUSES, RunDetail, RunNotFound, StoreError
from srb_tui.ui.console_service import (
    NO_GRADING,
    ConsoleError,
    ConsoleService,
    grading_available,
)
from srb_tui.ui.palette import tone
from srb_tui.ui.screens.run_dialogs import ConfirmDialog, EvidenceTrees, StagePicker
from srb_tui.ui.widgets.audit_pane import AuditPane
from srb_tui.ui.widgets.behavioural_pane import BehaviouralPane
from srb_tui.ui.widgets.footer import PriorityFooter
from srb_tui.ui.widgets.log_view import LogView
from srb_tui.ui.widgets.run_header import TAB_TITLES, header_text, tab_labels, timeline_text
from srb_tui.ui.widgets.run_pane import EvidenceChosen, RunPane
from srb_tui.ui.widgets.score_pane import ScorePane
from srb_tui.ui.widgets.transcript import TranscriptView, no_transcript
from srb_tui.ui.widgets.verification_pane import VerificationPane

TICK_SEC = 1.0
RELOAD_SEC = 3.0  # a live run is read again at least this often


# The keys the footer shows first when it has no room for all (by binding id).
FOOTER_FIRST = ("run.back", "run.diff", "run.counterexamples", "run.behav.failing",
                "run.cancel", "run.regrade", "run.follow", "run.search")


class RunScreen(Screen[None]):
    """One run: its log and its grading, updated as it happens."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="run.back", tooltip="Back to the previous screen"),
        Binding("f", "follow", "Follow", id="run.follow",
                tooltip="Follow the end of the log, or pause where you are"),
        Binding("/", "search", "Search", id="run.search", tooltip="Search the log"),
        Binding("n", "search_next", "Next", id="run.search_next", show=False,
                tooltip="Next search match"),
        Binding("N", "search_previous", "Previous", id="run.search_previous", show=False,
                tooltip="Previous search match"),
        Binding("s", "streams", "Streams", id="run.streams",
                tooltip="Show all lines, stdout, stderr or srb's own lines (its steps and stages)"),
        Binding("e", "first_error", "Error", id="run.error",
                tooltip="Jump to the first stderr line or error/Traceback/FAIL"),
        Binding("c", "cancel_run", "Cancel", id="run.cancel",
                tooltip="Cancel the run (asks first)"),
        Binding("g", "regrade", "Re-grade", id="run.regrade",
                tooltip="Grade one stage of the run again"),
        Binding("d", "diff", "Diff", id="run.diff",
                tooltip="State A against this run's submission"),
        Binding("x", "counterexamples", "Counterexamples", id="run.counterexamples",
                tooltip="This run's Stage III candidates: outputs, re-run, export"),
        # 1–6 in the tabs' order, left to right
        Binding("1", "tab('log')", "Log", id="run.tab.log", show=False,
                tooltip="Show the agent log"),
        Binding("2", "tab('transcript')", "Transcript", id="run.tab.transcript", show=False,
                tooltip="Show the agent's transcript: rounds, messages, tool calls"),
        Binding("3", "tab('audit')", "Audit", id="run.tab.audit", show=False,
                tooltip="Show Stage I: gates, votes, evidence"),
        Binding("4", "tab('behavioural')", "Behavioural", id="run.tab.behavioural", show=False,
                tooltip="Show Stage II: modules and failing checks"),
        Binding("5", "tab('verification')", "Verification", id="run.tab.verification",
                show=False, tooltip="Show Stage III: adversary lanes"),
        Binding("6", "tab('score')", "Score", id="run.tab.score", show=False,
                tooltip="Show the score and why it is blocked or invalid"),
        Binding("ctrl+r", "reload", "Reload", id="run.reload", show=False,
                tooltip="Read the run from the store again"),
    ]

    def __init__(self, run_host: ConsoleService, run_id: str) -> None:
        super().__init__()
        self.run_host = run_host
        self.run_id = run_id
        self.detail: RunDetail | None = None
        self.task_def: Task | None = None
        self.progress = ""
        self.problem: str | None = None
        self._stale = False
        self._loaded_at = 0.0
        self._listening = asyncio.Event()
        self._evidence = EvidenceTrees(run_host, run_id)

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="run-body"):
            yield Static(id="run-header")
            yield Static(id="run-timeline")
            with TabbedContent(id="run-tabs", initial="tab-log"):
                with TabPane(TAB_TITLES["log"], id="tab-log"):
                    yield LogView(id="run-log")
                    yield Input(placeholder="search the log (Enter: find, Esc: close)",
                                id="run-search", compact=True)
                    yield Static(id="run-log-status")
                with TabPane(TAB_TITLES["transcript"], id="tab-transcript"):
                    yield Static(id="run-transcript-empty", classes="pane-text")
                    yield TranscriptView(id="run-transcript")
                with TabPane(TAB_TITLES["audit"], id="tab-audit"):
                    yield AuditPane(id="pane-audit")
                with TabPane(TAB_TITLES["behavioural"], id="tab-behavioural"):
                    yield BehaviouralPane(id="pane-behavioural")
                with TabPane(TAB_TITLES["verification"], id="tab-verification"):
                    yield VerificationPane(id="pane-verification")
                with TabPane(TAB_TITLES["score"], id="tab-score"):
                    yield ScorePane(id="pane-score")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = f"Run {self.run_id}"
        self.query_one("#run-search", Input).display = False
        self.query_one("#run-header", Static).update(
            Text(f"{self.run_id} · loading…", style=tone(self.app, "muted")))
        self.query_one("#run-log", LogView).focus()
        self.set_interval(TICK_SEC, self._tick, name="run-tick")
        self._listen()
        # A full collection rescans every long-lived object (the whole DOM, the imported
        # modules) and took 100-200 ms while a log streamed at 50k lines/s. Freeze what
        # exists now so collections only look at new objects; thaw when the screen goes.
        gc.freeze()

    def on_unmount(self) -> None:
        gc.unfreeze()

    # -- data ---------------------------------------------------------------------------

    @work(group="run-events", exclusive=True)
    async def _listen(self) -> None:
        """Subscribe first, then read the store, so nothing falls between the two."""
        log = self.query_one("#run-log", LogView)
        transcript = self.query_one("#run-transcript", TranscriptView)
        async with self.run_host.bus.subscribe() as queue:
            self._listening.set()
            await self._load(attach=True)
            while True:
                events = [await queue.get()]
                while not queue.empty():
                    events.append(queue.get_nowait())
                for event in events:
                    if event.run_id != self.run_id:
                        continue
                    if isinstance(event, LogLines):
                        log.feed(event.last_seq, event.lines)
                    elif isinstance(event, AgentTranscript):
                        for seq, _ts, kind, data in event.events:
                            transcript.add_event(event.round, seq, kind, data)
                    elif isinstance(event, AgentRoundStarted):
                        transcript.round_started(event.round, event.prompt_kind)
                        self._show_transcript_state()
                    elif isinstance(event, AgentRoundFinished):
                        transcript.round_finished(event.round, event.verdict,
                                                  sum(event.tokens.values()),
                                                  event.client_cost_usd)
                    elif isinstance(event, Progress):
                        self.progress = event.message
                        self._stale = True
                    elif isinstance(event, StatusChanged | StageFinished | RunFinished
                                    | AdversaryRoundEnded):
                        self._stale = True
                        if isinstance(event, StatusChanged | RunFinished | AdversaryRoundEnded):
                            await self._load(attach=False)

    async def _load(self, *, attach: bool) -> None:
        self._stale = False
        self._loaded_at = asyncio.get_running_loop().time()
        try:
            store = await self.run_host.store()
            detail = await store.run_detail(self.run_id)
        except RunNotFound:
            self._show_problem(f"No run {self.run_id} in {self.run_host.settings.db_path}.")
            return
        except (StoreError, ConsoleError) as exc:
            self._show_problem(str(exc))
            return
        if self.task_def is None:
            self.task_def = await asyncio.to_thread(_load_task, detail.run.task_path)
        self.problem = None
        self.detail = detail
        if not self.is_attached:
            return  # the screen was closed while the store answered
        try:
            log = self.query_one("#run-log", LogView)
            if attach:
                log.attach(store.logs, self.run_id, detail.log_lines)
                await self.query_one("#run-transcript", TranscriptView).load(store, self.run_id)
            elif detail.log_lines > log.buffer.total:  # stored by a process driving it elsewhere
                log.attach(store.logs, self.run_id, detail.log_lines)
            self._paint()
            self._show_transcript_state()
        except NoMatches:
            return  # the screen is being taken down (app exit) while an event reloaded it

    def _show_transcript_state(self) -> None:
        """Without rounds the tab says why, instead of an empty tree."""
        empty = self.query_one("#run-transcript", TranscriptView).rounds == 0
        note = self.query_one("#run-transcript-empty", Static)
        note.display = empty
        if empty and self.detail is not None:
            note.update(Text(no_transcript(self.detail.run.agent), style=tone(self.app, "muted")))

    def _show_problem(self, text: str) -> None:
        self.problem = text
        if not self.is_attached:
            return
        self.query_one("#run-header", Static).update(Text(text, style=tone(self.app, "bad")))

    def on_resize(self) -> None:
        if self.detail is not None:
            self._paint_header()

    def _tick(self) -> None:
        if self.detail is None:
            return
        live = self.detail.run.status not in FINAL_STATUSES
        if self._stale or (live and asyncio.get_running_loop().time() - self._loaded_at
                           > RELOAD_SEC):
            # A run another process drives sends this one no events: read it again now
            # and then (Stage II's modules, the stage moving on).
            self._reload()
        elif live:
            self._paint_header()
            if self.detail.run.status == "verification":  # running lanes' elapsed time
                self.query_one("#pane-verification", VerificationPane).redraw()

    @work(group="run-reload", exclusive=True)
    async def _reload(self) -> None:
        await self._load(attach=False)

    # -- drawing --------------------------------------------------------------------------

    def _paint(self) -> None:
        detail = self.detail
        if detail is None:
            return
        self._paint_header()
        for pane in self.query(RunPane):
            pane.show(detail, self.task_def)
        tabs = self.query_one("#run-tabs", TabbedContent)
        for tab_id, label in tab_labels(detail).items():
            tabs.get_tab(tab_id).label = label

    def _paint_header(self) -> None:
        detail = self.detail
        assert detail is not None
        self.query_one("#run-header", Static).update(
            header_text(self.app, detail.run, self.progress, datetime.now(UTC),
                        self.query_one("#run-header", Static).content_size.width or None))
        self.query_one("#run-timeline", Static).update(
            timeline_text(self.app, detail, self.size.width))

    @on(LogView.Changed)
    def _log_changed(self, event: LogView.Changed) -> None:
        self.query_one("#run-log-status", Static).update(
            Text(event.view.describe(), style=tone(self.app, "muted")))

    @on(LogView.Notice)
    def _log_notice(self, event: LogView.Notice) -> None:
        log = self.query_one("#run-log", LogView)
        text = Text(log.describe(), style=tone(self.app, "muted"))
        text.append(f" · {event.text}", style=tone(self.app, "bad" if event.bad else "accent"))
        self.query_one("#run-log-status", Static).update(text)

    # -- actions ----------------------------------------------------------------------

    def _log_tab(self) -> LogView:
        self.query_one("#run-tabs", TabbedContent).active = "tab-log"
        return self.query_one("#run-log", LogView)

    def action_tab(self, name: str) -> None:
        self.query_one("#run-tabs", TabbedContent).active = f"tab-{name}"
        if name == "log":
            self.query_one("#run-log", LogView).focus()
        elif name == "transcript":
            self.query_one("#run-transcript", TranscriptView).focus()
        else:
            pane = self.query_one(f"#pane-{name}", RunPane)
            tables = pane.query("DataTable")
            if tables:
                tables.first().focus()

    def action_back(self) -> None:
        search = self.query_one("#run-search", Input)
        if search.display:
            search.display = False
            self.query_one("#run-log", LogView).focus()
            return
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_follow(self) -> None:
        self._log_tab().toggle_follow()

    def action_streams(self) -> None:
        self._log_tab().cycle_stream()

    def action_first_error(self) -> None:
        self._log_tab().jump_to_error()

    def action_search(self) -> None:
        self._log_tab()
        search = self.query_one("#run-search", Input)
        search.display = True
        search.focus()

    @on(Input.Submitted, "#run-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        search = self.query_one("#run-search", Input)
        search.display = False
        log = self.query_one("#run-log", LogView)
        log.focus()
        log.search(event.value.strip())

    def action_search_next(self) -> None:
        self._log_tab().search_again(True)

    def action_search_previous(self) -> None:
        self._log_tab().search_again(False)

    def action_reload(self) -> None:
        self._reload()

    def action_cancel_run(self) -> None:
        run = self.detail.run if self.detail else None
        if run is None:
            return
        if run.status in FINAL_STATUSES:
            self.notify(f"run {run.id} is {run.status}; nothing to cancel", title="cancel")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_host.cancel(self.run_id)

        self.app.push_screen(
            ConfirmDialog(f"Cancel run {run.id}?",
                          "The agent container gets TERM, then KILL after the grace "
                          "period. The run ends as cancelled, without a score."),
            answered,
        )

    def action_diff(self) -> None:
        from srb_tui.ui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(self.run_id, settings=self.run_host.settings))

    def action_counterexamples(self) -> None:
        from srb_tui.ui.screens.counterexamples import CounterexamplesScreen

        self.app.push_screen(CounterexamplesScreen(self.run_host, self.run_id))

    def action_regrade(self) -> None:
        if not grading_available():
            self.notify(NO_GRADING, title="re-grade", severity="warning")
            return

        def chosen(stage: str | None) -> None:
            if stage:
                self.run_host.regrade(self.run_id, stage)

        note = ""
        if self.detail and self.detail.run.status not in FINAL_STATUSES:
            note = f"The run is {self.detail.run.status}; re-grade it when it has ended."
        self.app.push_screen(StagePicker(note), chosen)

    @on(EvidenceChosen)
    def _evidence_chosen(self, event: EvidenceChosen) -> None:
        self._open_evidence(event)

    @work(group="run-evidence", exclusive=True)
    async def _open_evidence(self, event: EvidenceChosen) -> None:
        await self.app.push_screen(await self._evidence.dialog(event.citation, self.task_def))


def _load_task(task_path: str) -> Task | None:
    try:
        return load_task(Path(task_path)).task
    except (OSError, ValueError):
        return None


__all__ = ["RunScreen"]
