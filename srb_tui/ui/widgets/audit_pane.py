"""Stage I pane of the Run screen: gates, each sample's vote and reasoning, the evidence
they cite (Enter on a citation shows it in both trees), and the places where the submission
addressed its judge (issue 37; shown only when there are some)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from srb_tui.store.record_extra import outcome_overruled, vote_tainted
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.run_format import (
    Citation,
    evidence_items,
    imported_from,
    parse_citation,
)
from srb_tui.ui.widgets.run_pane import EvidenceChosen, RunPane, checks_where, pane_table
from srb_tui.ui.widgets.run_tables import Row, add_columns, selected_key, sync_rows

JUDGE_MODULE = "judge-addressed"  # the audit's checks module of judge-addressed findings
JUDGE_SHOWN = 8


class AuditPane(RunPane):
    """Stage I: gates, each sample's vote and reasoning, the evidence they cite."""

    def compose(self) -> ComposeResult:
        yield Static(id="audit-summary", classes="pane-summary")
        yield Static(id="audit-judge", classes="pane-text")
        yield pane_table("audit-gates")
        yield Static(id="audit-votes-title", classes="pane-subtitle")
        yield pane_table("audit-votes")
        yield Static(id="audit-reasoning", classes="pane-text")
        yield Static(id="audit-evidence-title", classes="pane-subtitle")
        yield pane_table("audit-evidence")

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
        if not outcomes and not detail.gate_votes and imported_from(detail.run) is not None:
            summary.append("\nImported run: the published harness's per-gate votes are not "
                           "part of an import; its Stage I result counts in the score.",
                           style=tone(self.app, "muted"))
        elif not outcomes and not detail.gate_votes:
            summary.append("\nNo votes recorded yet. The audit runs after the agent's "
                           "submission is collected; its gates are listed below.",
                           style=tone(self.app, "muted"))
        self.query_one("#audit-summary", Static).update(summary)
        self._show_judge_findings()
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
            verdict = self.paint(o.verdict, o.verdict)
            if outcome_overruled(o):
                verdict.append(" (overruled)")
            rows.append((gate_id, [
                gate_id, "yes" if o.required else "no", verdict,
                str(o.votes_pass), str(o.votes_fail), str(o.votes_error),
                "tie" if o.tie else "", o.title or (plan.title if plan else ""),
            ]))
        sync_rows(gates, rows)
        self._show_gate(selected_key(gates))

    def _show_judge_findings(self) -> None:
        """Where the submission addressed its judge (the audit's judge-addressed checks)."""
        box = self.query_one("#audit-judge", Static)
        found = checks_where(self.detail, "audit", module_id=JUDGE_MODULE) \
            if self.detail is not None else []
        box.display = bool(found)
        if not found:
            return
        text = Text(f"The submission addressed its judge in {len(found)} place(s); each is "
                    "a finding, and answers that followed it count as fails:",
                    style=tone(self.app, "bad", bold=True))
        for check in found[:JUDGE_SHOWN]:
            text.append(f"\n  {(check.summary or check.check_id)[:110]}")
        if len(found) > JUDGE_SHOWN:
            text.append(f"\n  (+{len(found) - JUDGE_SHOWN} more)", style=tone(self.app, "muted"))
        box.update(text)

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
            if vote_tainted(v):
                note = "followed injected text"
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
