"""The detail panes of the Run screen, one per grading stage plus the score.

Each pane is told the run's current :class:`RunDetail` (and the task, for what is planned
but not recorded yet) and updates its tables in place by row key. Choosing an evidence row
posts :class:`EvidenceChosen` up to the screen, which opens the side-by-side view.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from srb_tui.schema import Task
from srb_tui.store import CheckRecord, RunDetail
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.run_format import (
    GLYPH,
    Citation,
    clock,
    detail_text,
    evidence_items,
    expected_actual,
    invalid_because,
    parse_citation,
    parse_time,
    score_text,
    stage_state,
    validity,
)
from srb_tui.ui.widgets.run_tables import Row, add_columns, selected_key, sync_rows

VERDICT_TONE: dict[str, Tone] = {
    "pass": "ok", "ok": "ok", "survived": "ok", "rejected": "ok", "invalid": "muted",
    "fail": "bad", "error": "bad", "broken": "bad", "upheld": "bad", "timeout": "bad",
    "skip": "muted", "unreached": "muted", "pending": "muted", "running": "accent",
    "waiting": "muted",
}
STATE_TONE: dict[str, Tone] = {
    "done": "ok", "failed": "bad", "running": "accent", "waiting": "muted", "skipped": "muted",
}


class EvidenceChosen(Message):
    """The operator asked to see a citation in both trees."""

    def __init__(self, citation: Citation) -> None:
        super().__init__()
        self.citation = citation


class RunPane(VerticalScroll):
    """Base: holds the last detail and task; subclasses draw them."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="run-pane")
        self.detail: RunDetail | None = None
        self.task_def: Task | None = None

    def paint(self, text: str, kind: str) -> Text:
        return Text(text, style=tone(self.app, VERDICT_TONE.get(kind, "accent")))

    def show(self, detail: RunDetail, task: Task | None) -> None:
        self.detail = detail
        self.task_def = task
        self.redraw()

    def redraw(self) -> None:
        raise NotImplementedError

    def unrecorded(self) -> Text:
        """The cell for something planned that has no record: waiting, or not run."""
        final = self.detail is not None and self.detail.run.status in (
            "scored", "cancelled", "infra_error")
        return self.paint("not run", "skip") if final else self.paint("waiting", "waiting")

    def stage_heading(self, stage: str, title: str) -> Text:
        assert self.detail is not None
        state = stage_state(self.detail, stage)
        out = Text(f"{GLYPH[state]} {title}: {state}",
                   style=tone(self.app, STATE_TONE[state], bold=True))
        result = next((r for r in self.detail.stage_results if r.stage == stage), None)
        if result is not None and result.duration_sec is not None:
            out.append(f" · {clock(result.duration_sec)}", style=tone(self.app, "muted"))
        return out


def _table(id: str) -> DataTable[Any]:
    return DataTable(id=id, cursor_type="row", zebra_stripes=True, classes="run-table")


# ----------------------------------------------------------------------------- audit


class AuditPane(RunPane):
    """Stage I: gates, each sample's vote and reasoning, the evidence they cite."""

    def compose(self) -> ComposeResult:
        yield Static(id="audit-summary", classes="pane-summary")
        yield _table("audit-gates")
        yield Static(id="audit-votes-title", classes="pane-subtitle")
        yield _table("audit-votes")
        yield Static(id="audit-reasoning", classes="pane-text")
        yield Static(id="audit-evidence-title", classes="pane-subtitle")
        yield _table("audit-evidence")

    def on_mount(self) -> None:
        add_columns(self.query_one("#audit-gates", DataTable), [
            ("Gate", "gate"), ("Req", "required"), ("Verdict", "verdict"), ("Pass", "pass"),
            ("Fail", "fail"), ("Err", "error"), ("Tie", "tie"), ("Title", "title")])
        add_columns(self.query_one("#audit-votes", DataTable), [
            ("Sample", "sample"), ("Vote", "verdict"), ("Conf", "confidence"),
            ("Note", "note"), ("Reasoning", "reasoning")])
        add_columns(self.query_one("#audit-evidence", DataTable), [
            ("Sample", "sample"), ("Citation", "citation"), ("Grounded", "grounded"),
            ("Quote", "quote")])

    def _gate_ids(self) -> list[str]:
        assert self.detail is not None
        ids = [o.gate_id for o in self.detail.gate_outcomes]
        ids += sorted({v.gate_id for v in self.detail.gate_votes} - set(ids))
        if not ids and self.task_def is not None and self.task_def.evaluation is not None:
            ids = [g.id for g in self.task_def.evaluation.gates]
        return ids

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        gates = self.query_one("#audit-gates", DataTable)
        outcomes = {o.gate_id: o for o in detail.gate_outcomes}
        planned = {}
        if self.task_def is not None and self.task_def.evaluation is not None:
            planned = {g.id: g for g in self.task_def.evaluation.gates}
        summary = self.stage_heading("audit", "Stage I audit")
        samples = sorted({v.sample for v in detail.gate_votes})
        if samples:
            summary.append(f" · {len(samples)} sample(s)")
        if not outcomes and not detail.gate_votes:
            summary.append("\nNo votes recorded yet. The audit runs after the agent's "
                           "submission is collected; its gates are listed below.",
                           style=tone(self.app, "muted"))
        self.query_one("#audit-summary", Static).update(summary)
        rows: list[Row] = []
        for gate_id in self._gate_ids():
            o = outcomes.get(gate_id)
            plan = planned.get(gate_id)
            if o is None:
                required = plan.required if plan else True
                rows.append((gate_id, [gate_id, "yes" if required else "no",
                                       self.unrecorded(), "", "", "", "",
                                       plan.title if plan else ""]))
                continue
            rows.append((gate_id, [
                gate_id, "yes" if o.required else "no", self.paint(o.verdict, o.verdict),
                str(o.votes_pass), str(o.votes_fail), str(o.votes_error),
                "tie" if o.tie else "", o.title or (plan.title if plan else ""),
            ]))
        sync_rows(gates, rows)
        self._show_gate(selected_key(gates))

    @on(DataTable.RowHighlighted, "#audit-gates")
    def _gate_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_gate(None if event.row_key.value is None else str(event.row_key.value))

    def _show_gate(self, gate_id: str | None) -> None:
        detail = self.detail
        votes_table = self.query_one("#audit-votes", DataTable)
        evidence_table = self.query_one("#audit-evidence", DataTable)
        if detail is None or gate_id is None:
            sync_rows(votes_table, [])
            sync_rows(evidence_table, [])
            return
        votes = [v for v in detail.gate_votes if v.gate_id == gate_id]
        self.query_one("#audit-votes-title", Static).update(
            Text(f"Votes on {gate_id}", style="bold") if votes
            else Text(f"No votes on {gate_id} yet", style=tone(self.app, "muted")))
        vote_rows: list[Row] = []
        evidence_rows: list[Row] = []
        for v in votes:
            note = "downgraded: unproven fail" if v.downgraded else ""
            first = (v.reasoning or "").strip().splitlines()
            vote_rows.append((f"{gate_id}:{v.sample}", [
                str(v.sample), self.paint(v.verdict, v.verdict),
                "—" if v.confidence is None else f"{v.confidence:.2f}", note,
                first[0][:120] if first else "",
            ]))
            for index, item in enumerate(evidence_items(v.evidence)):
                citation = parse_citation(item)
                if citation is None:
                    continue
                grounded = {True: self.paint("yes", "pass"), False: self.paint("no", "fail"),
                            None: Text("—")}[citation.grounded]
                evidence_rows.append((f"{gate_id}:{v.sample}:{index}", [
                    str(v.sample), citation.label, grounded, citation.quote[:80],
                ]))
        sync_rows(votes_table, vote_rows)
        sync_rows(evidence_table, evidence_rows)
        votes_table.display = bool(vote_rows)
        evidence_table.display = bool(evidence_rows)
        self.query_one("#audit-evidence-title", Static).update(
            Text("Evidence (Enter: show in both trees)", style="bold") if evidence_rows
            else Text("No evidence cited for this gate", style=tone(self.app, "muted")))
        self._show_vote(selected_key(votes_table))

    @on(DataTable.RowHighlighted, "#audit-votes")
    def _vote_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_vote(None if event.row_key.value is None else str(event.row_key.value))

    def _show_vote(self, key: str | None) -> None:
        box = self.query_one("#audit-reasoning", Static)
        if self.detail is None or key is None:
            box.update("")
            return
        gate_id, _, sample = key.rpartition(":")
        vote = next((v for v in self.detail.gate_votes
                     if v.gate_id == gate_id and str(v.sample) == sample), None)
        if vote is None:
            box.update("")
            return
        text = Text(f"Sample {vote.sample} reasoning: ", style="bold")
        text.append(vote.reasoning or "(none recorded)")
        box.update(text)

    @on(DataTable.RowSelected, "#audit-evidence")
    def _evidence_selected(self, event: DataTable.RowSelected) -> None:
        citation = self.citation_for(None if event.row_key.value is None
                                     else str(event.row_key.value))
        if citation is not None:
            self.post_message(EvidenceChosen(citation))

    def citation_for(self, key: str | None) -> Citation | None:
        if self.detail is None or key is None:
            return None
        gate_id, sample, index = key.rsplit(":", 2)
        vote = next((v for v in self.detail.gate_votes
                     if v.gate_id == gate_id and str(v.sample) == sample), None)
        if vote is None:
            return None
        items = evidence_items(vote.evidence)
        return parse_citation(items[int(index)]) if int(index) < len(items) else None


# ------------------------------------------------------------------------- behavioural


class BehaviouralPane(RunPane):
    """Stage II: the module table and the failing checks with expected vs actual."""

    def compose(self) -> ComposeResult:
        yield Static(id="behav-summary", classes="pane-summary")
        yield _table("behav-modules")
        yield Static(id="behav-checks-title", classes="pane-subtitle")
        yield _table("behav-checks")
        yield Static(id="behav-check-detail", classes="pane-text")

    def on_mount(self) -> None:
        add_columns(self.query_one("#behav-modules", DataTable), [
            ("Module", "module"), ("Rate", "rate"), ("Pass", "passed"), ("Fail", "failed"),
            ("Err", "errors"), ("Skip", "skipped"), ("Status", "status"), ("Notes", "notes")])
        add_columns(self.query_one("#behav-checks", DataTable), [
            ("Check", "check"), ("Verdict", "verdict"), ("Summary", "summary")])

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        modules = [m for m in detail.module_results if m.stage == "behavioural"]
        summary = self.stage_heading("behavioural", "Stage II behavioural suite")
        if modules:
            passed = sum(m.passed for m in modules)
            scored = sum(m.passed + m.failed + m.errors for m in modules)
            summary.append(f" · {passed}/{scored} checks pass")
        else:
            summary.append("\nNo module results yet. The suite runs after the audit.",
                           style=tone(self.app, "muted"))
        self.query_one("#behav-summary", Static).update(summary)
        rows: list[Row] = []
        seen = set()
        for m in modules:
            seen.add(m.module_id)
            rows.append((m.module_id, [
                m.module_id, "—" if m.rate is None else f"{m.rate:.0%}", str(m.passed),
                str(m.failed), str(m.errors), str(m.skipped), self.paint(m.status, m.status),
                _module_notes(m.detail),
            ]))
        if self.task_def is not None:
            for module_id in self.task_def.module_ids:
                if module_id not in seen:
                    rows.append((module_id, [module_id, "—", "", "", "", "",
                                             self.unrecorded(), ""]))
        table = self.query_one("#behav-modules", DataTable)
        sync_rows(table, rows)
        self._show_module(selected_key(table))

    @on(DataTable.RowHighlighted, "#behav-modules")
    def _module_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_module(None if event.row_key.value is None else str(event.row_key.value))

    def _failing(self, module_id: str) -> list[CheckRecord]:
        assert self.detail is not None
        return [c for c in self.detail.checks
                if c.stage == "behavioural" and c.module_id == module_id
                and c.verdict in ("fail", "error")]

    def _show_module(self, module_id: str | None) -> None:
        table = self.query_one("#behav-checks", DataTable)
        title = self.query_one("#behav-checks-title", Static)
        if self.detail is None or module_id is None:
            sync_rows(table, [])
            title.update("")
            self._show_check(None)
            return
        failing = self._failing(module_id)
        title.update(Text(f"Failing checks of {module_id} ({len(failing)})", style="bold")
                     if failing else
                     Text(f"No failing checks in {module_id}", style=tone(self.app, "muted")))
        sync_rows(table, [
            (f"{module_id}:{c.position}", [c.check_id, self.paint(c.verdict, c.verdict),
                                           (c.summary or "")[:100]])
            for c in failing
        ])
        table.display = bool(failing)
        self._show_check(selected_key(table))

    @on(DataTable.RowHighlighted, "#behav-checks")
    def _check_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_check(None if event.row_key.value is None else str(event.row_key.value))

    def _show_check(self, key: str | None) -> None:
        box = self.query_one("#behav-check-detail", Static)
        if self.detail is None or key is None:
            box.update("")
            return
        module_id, _, position = key.rpartition(":")
        check = next((c for c in self.detail.checks if c.stage == "behavioural"
                      and c.module_id == module_id and str(c.position) == position), None)
        if check is None:
            box.update("")
            return
        pair = expected_actual(check.detail)
        if pair is None:
            box.update(Text(detail_text(check.detail) or "(no detail recorded)"))
            return
        grid = Table(expand=True, show_edge=False, pad_edge=False)
        grid.add_column("expected", ratio=1, style=tone(self.app, "ok"))
        grid.add_column("actual", ratio=1, style=tone(self.app, "bad"))
        grid.add_row(pair[0], pair[1])
        box.update(grid)


def _module_notes(detail: Any) -> str:
    if isinstance(detail, dict):
        notes = detail.get("notes")
        if isinstance(notes, list):
            return "; ".join(str(n) for n in notes)[:120]
        if isinstance(detail.get("error"), str):
            return str(detail["error"])[:120]
        return ""
    return str(detail)[:120] if detail else ""


# ------------------------------------------------------------------------ verification


class VerificationPane(RunPane):
    """Stage III: the adversary lanes and what each one handed in."""

    def compose(self) -> ComposeResult:
        yield Static(id="verif-summary", classes="pane-summary")
        yield _table("verif-lanes")
        yield Static(id="verif-candidates-title", classes="pane-subtitle")
        yield _table("verif-candidates")
        yield Static(id="verif-candidate-detail", classes="pane-text")

    def on_mount(self) -> None:
        add_columns(self.query_one("#verif-lanes", DataTable), [
            ("Adversary", "adversary"), ("Focus", "focus"), ("Elapsed", "elapsed"),
            ("Outcome", "outcome"), ("Candidates", "candidates")])
        add_columns(self.query_one("#verif-candidates", DataTable), [
            ("#", "id"), ("Verdict", "verdict"), ("Reason", "reason")])

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        summary = self.stage_heading("verification", "Stage III verification")
        lanes = list(detail.adversary_rounds)
        broken = sum(1 for a in lanes if a.status == "broken")
        if lanes:
            summary.append(f" · {broken} of {len(lanes)} lane(s) broke the submission")
        else:
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
                a.adversary_id, (a.focus or "")[:60], clock(elapsed),
                self.paint(a.status, a.status), "—" if a.candidates is None else str(a.candidates),
            ]))
        if self.task_def is not None and self.task_def.probe is not None:
            for adv in self.task_def.probe.adversaries:
                if adv.id not in seen:
                    rows.append((adv.id, [adv.id, adv.focus[:60], "—",
                                          self.unrecorded(), "—"]))
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
        title.update(Text(f"Candidates of {lane} ({len(found)})", style="bold") if found
                     else Text(f"No candidates from {lane}", style=tone(self.app, "muted")))
        sync_rows(table, [(str(c.id), [str(c.id), self.paint(c.verdict, c.verdict),
                                       (c.reason or "")[:100]]) for c in found])
        table.display = bool(found)
        self._show_candidate(selected_key(table))

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
        text = Text("Candidate:\n", style="bold")
        text.append(found.code[:2000])
        from rich.console import Group

        box.update(Group(text, grid))


# ------------------------------------------------------------------------------- score


class ScorePane(RunPane):
    """The score, why it is blocked or invalid, and every stage's envelope status."""

    def compose(self) -> ComposeResult:
        yield Static(id="score-summary", classes="pane-summary")
        yield _table("score-stages")
        yield Static(id="score-notes", classes="pane-text")

    def on_mount(self) -> None:
        add_columns(self.query_one("#score-stages", DataTable), [
            ("Stage", "stage"), ("Status", "status"), ("Duration", "duration"),
            ("Fingerprint", "fingerprint")])

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        run = detail.run
        out = Text()
        out.append(f"Score {score_text(run)}", style="bold")
        valid_tone: Tone = "muted" if run.valid is None else "ok" if run.valid else "bad"
        out.append(f"  {validity(run)}", style=tone(self.app, valid_tone))
        if run.blocked_by:
            out.append(f"\nblocked by: {run.blocked_by}", style=tone(self.app, "warn"))
        because = invalid_because(run)
        if because:
            out.append(f"\ninvalid because: {because}", style=tone(self.app, "bad"))
        if run.stop_reason:
            out.append(f"\nagent stopped: {run.stop_reason}")
        if run.score is None and run.status not in ("scored",):
            out.append(f"\nNo score yet: the run is {run.status}.", style=tone(self.app, "muted"))
        if run.grader_fingerprint:
            out.append(f"\ngrader {run.grader_fingerprint}", style=tone(self.app, "muted"))
        self.query_one("#score-summary", Static).update(out)
        sync_rows(self.query_one("#score-stages", DataTable), [
            (r.stage, [r.stage, self.paint(r.status, r.status), clock(r.duration_sec),
                       (r.fingerprint or "")[:24]])
            for r in detail.stage_results
        ])
        notes = Text()
        for note in run.notes:
            notes.append(f"• {note}\n")
        self.query_one("#score-notes", Static).update(notes)


__all__ = [
    "AuditPane",
    "BehaviouralPane",
    "EvidenceChosen",
    "RunPane",
    "ScorePane",
    "VerificationPane",
]
