"""Stage III pane of the Run screen: the adversary lanes and what each one handed in."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from srb_tui.store import CounterexampleRecord
from srb_tui.store.record_extra import (
    CandidateRun,
    LaneTranscript,
    candidate_runs,
    counts_as_break,
)
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.run_format import clock, detail_text, parse_time
from srb_tui.ui.widgets.run_pane import RunPane, pane_table
from srb_tui.ui.widgets.run_tables import Row, add_columns, selected_key, sync_rows


class VerificationPane(RunPane):
    """Stage III: the adversary lanes and what each one handed in."""

    def compose(self) -> ComposeResult:
        yield Static(id="verif-summary", classes="pane-summary")
        yield pane_table("verif-lanes")
        yield Static(id="verif-candidates-title", classes="pane-subtitle")
        yield pane_table("verif-candidates")
        yield Static(id="verif-candidate-detail", classes="pane-text")

    def on_mount(self) -> None:
        add_columns(self.query_one("#verif-lanes", DataTable), [
            # What decides the score first; the long Focus text last, where a narrow
            # terminal cuts it (issue 35 item 2: at 100 columns it pushed Outcome off).
            ("Adversary", "adversary"), ("Outcome", "outcome"), ("Candidates", "candidates"),
            ("Elapsed", "elapsed"), ("Focus", "focus")])
        add_columns(self.query_one("#verif-candidates", DataTable), [
            ("#", "id"), ("Verdict", "verdict"), ("Reason", "reason")])

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        summary = self.stage_heading("verification", "Stage III verification")
        lanes = list(detail.adversary_rounds)
        broken = sum(1 for a in lanes if a.status == "broken")
        moved = [c for c in detail.counterexamples if c.verdict == "nondeterministic"]
        if lanes:
            summary.append(f" · {broken} of {len(lanes)} lane(s) broke the submission")
        if moved:
            summary.append(f" · {len(moved)} candidate(s) nondeterministic on the submission",
                           style=tone(self.app, "bad"))
        if not lanes:
            summary.append("\nNo adversary has run yet. Verification runs when the audit "
                           "passes and the suite is complete.", style=tone(self.app, "muted"))
        self.query_one("#verif-summary", Static).update(summary)
        now = datetime.now(UTC)
        rows: list[Row] = []
        seen = set()
        for a in lanes:
            seen.add(a.adversary_id)
            elapsed = a.duration_sec
            if elapsed is None and a.status == "running":
                start = parse_time(a.started_at)
                elapsed = None if start is None else (now - start).total_seconds()
            rows.append((a.adversary_id, [
                a.adversary_id, self.paint(a.status, a.status),
                "—" if a.candidates is None else str(a.candidates), clock(elapsed),
                (a.focus or "")[:60],
            ]))
        if self.task_def is not None and self.task_def.probe is not None:
            for adv in self.task_def.probe.adversaries:
                if adv.id not in seen:
                    rows.append((adv.id, [adv.id, self.unrecorded(), "—", "—",
                                          adv.focus[:60]]))
        table = self.query_one("#verif-lanes", DataTable)
        sync_rows(table, rows)
        self._show_lane(selected_key(table))

    @on(DataTable.RowHighlighted, "#verif-lanes")
    def _lane_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_lane(None if event.row_key.value is None else str(event.row_key.value))

    def _show_lane(self, lane: str | None) -> None:
        table = self.query_one("#verif-candidates", DataTable)
        title = self.query_one("#verif-candidates-title", Static)
        if self.detail is None or lane is None:
            sync_rows(table, [])
            title.update("")
            self._show_candidate(None)
            return
        found = [c for c in self.detail.counterexamples if c.adversary_id == lane]
        heading = (Text(f"Candidates of {lane} ({len(found)})", style="bold") if found
                   else Text(f"No candidates from {lane}", style=tone(self.app, "muted")))
        record = next((a for a in self.detail.adversary_rounds if a.adversary_id == lane), None)
        transcript = LaneTranscript.read(record) if record else None
        title.update(self._lane_transcript(transcript, heading) if transcript else heading)
        sync_rows(table, [(str(c.id), [str(c.id), self._verdict(c),
                                       (c.reason or "")[:100]]) for c in found])
        table.display = bool(found)
        self._show_candidate(selected_key(table))

    def _lane_transcript(self, lane: LaneTranscript, heading: Text) -> Text:
        """A client lane's transcript tail (live while it runs), its time to a
        counterexample or survival, and its cost, above its candidates."""
        text = Text("Transcript (latest last)\n", style="bold")
        for line in lane.tail:
            text.append(f"  {line}\n")
        facts = []
        if lane.time_to_counterexample_sec is not None:
            facts.append(f"counterexample after {clock(lane.time_to_counterexample_sec)}")
        if lane.requests is not None:
            cost = lane.cost_usd
            facts.append(f"{lane.requests} model request(s), "
                         + (f"${cost:.4f}" if cost is not None else "unpriced"))
        if facts:
            text.append(" · ".join(facts) + "\n", style=tone(self.app, "muted"))
        return text.append_text(heading)

    def _verdict(self, record: CounterexampleRecord) -> Text:
        """The verdict cell; a nondeterministic one says whether the task counted it."""
        if record.verdict != "nondeterministic":
            return self.paint(record.verdict, record.verdict)
        if counts_as_break(record):
            return self.paint("nondeterministic · break", "nondeterministic")
        return self.paint("nondeterministic · not counted", "nondeterministic-uncounted")

    @on(DataTable.RowHighlighted, "#verif-candidates")
    def _candidate_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_candidate(None if event.row_key.value is None else str(event.row_key.value))

    def _show_candidate(self, key: str | None) -> None:
        box = self.query_one("#verif-candidate-detail", Static)
        found = None if self.detail is None or key is None else next(
            (c for c in self.detail.counterexamples if str(c.id) == key), None)
        if found is None:
            box.update("")
            return
        grid = Table(expand=True, show_edge=False, pad_edge=False)
        grid.add_column(f"State A (exit {found.exit_a})", ratio=1)
        grid.add_column(f"submission (exit {found.exit_b})", ratio=1)
        grid.add_row(detail_text(found.output_a)[:2000], detail_text(found.output_b)[:2000])
        text = Text(f"{found.verdict}: ", style="bold").append(found.reason or "")
        text.append("\n")
        attempts = attempts_line(candidate_runs(found))
        if attempts is not None:
            text.append_text(attempts).append("\n")
        text.append("Candidate:\n", style="bold")
        text.append(found.code[:2000])
        from rich.console import Group

        box.update(Group(text, grid))


def attempts_line(runs: Sequence[CandidateRun]) -> Text | None:
    """Each attempt's outcome on both trees (``A pass · B fail``), from the stored runs:
    where a nondeterministic verdict shows which reruns the submission moved on."""
    if not runs:
        return None
    by_attempt: dict[int, dict[str, str]] = {}
    for run in runs:
        if run.attempt is not None:
            by_attempt.setdefault(run.attempt, {})[run.role] = "pass" if run.passed else "fail"
    text = Text("Attempts: ", style="bold")
    for n, attempt in enumerate(sorted(by_attempt)):
        sides = by_attempt[attempt]
        text.append(("  " if n else "") + f"{attempt}: A {sides.get('original', '—')} · "
                    f"B {sides.get('submission', '—')}")
    return text

