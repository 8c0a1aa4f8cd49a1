"""Score pane of the Run screen: the score with its formula and the adversaries behind it,
why it is invalid, every stage's envelope status, and the run's provenance (srb's commit,
grader fingerprint, task digest, client, models, node, image digests)."""

from __future__ import annotations

import dataclasses

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from srb_tui.schema.scoring_policy import ScoringPolicy
from srb_tui.service.views.provenance_view import provenance_lines
from srb_tui.service.views.score_explain import explain_score
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.run_format import clock, invalid_because, score_text, validity
from srb_tui.ui.widgets.run_pane import RunPane, pane_table
from srb_tui.ui.widgets.run_tables import add_columns, sync_rows


class ScorePane(RunPane):
    """The score, why it is blocked or invalid, and every stage's envelope status."""

    def compose(self) -> ComposeResult:
        yield Static(id="score-summary", classes="pane-summary")
        yield pane_table("score-stages")
        yield Static(id="score-notes", classes="pane-text")
        yield Static(id="score-provenance", classes="pane-text")

    def on_mount(self) -> None:
        add_columns(self.query_one("#score-stages", DataTable), [
            ("Stage", "stage"), ("Status", "status"), ("Duration", "duration"),
            ("Fingerprint", "fingerprint")])

    def _policy(self, task_id: str) -> ScoringPolicy | None:
        """The task's scoring policy when the console knows the task (else the published
        defaults are used)."""
        catalog = getattr(self.app, "catalog", None)
        load = catalog.find(task_id) if catalog is not None else None
        task = load.task if load is not None else None
        if task is None or task.evaluation is None:
            return None
        return ScoringPolicy(**dataclasses.asdict(task.evaluation.scoring))

    def redraw(self) -> None:
        detail = self.detail
        if detail is None:
            return
        run = detail.run
        out = Text()
        out.append(f"Score {score_text(run)}", style="bold")
        valid_tone: Tone = "muted" if run.valid is None else "ok" if run.valid else "bad"
        out.append(f"  {validity(run)}", style=tone(self.app, valid_tone))
        explained = explain_score(run, detail.adversary_rounds, self._policy(run.task_id))
        if explained is not None:
            out.append(f"\n{explained.formula}")
            out.append(f"\n{explained.reading}", style=tone(
                self.app, "bad" if explained.errored else "warn" if run.blocked_by else "ok"))
            if explained.broken_by:
                out.append(f"\nbroken by: {', '.join(explained.broken_by)}",
                           style=tone(self.app, "warn"))
            if explained.survived:
                out.append(f"\nsurvived: {', '.join(explained.survived)}",
                           style=tone(self.app, "muted"))
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
        prov = Text("Provenance\n", style="bold")
        lines = provenance_lines(run)
        width = max(len(label) for label, _v in lines) + 1
        for label, value in lines:
            prov.append(f"{label:<{width}}", style=tone(self.app, "muted"))
            prov.append(f"{value}\n")
        self.query_one("#score-provenance", Static).update(prov)
