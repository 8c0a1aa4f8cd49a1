"""The two lines above the Run screen's tabs: who and where the run is (status, elapsed
against the budget, score, validity, the latest progress note), and the lifecycle
timeline with a mark per step; and the tabs' labels (a stage's mark, the score).

Pure drawing over the stored run; the screen decides when to draw.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import App

from srb_tui.service.run.run_node import node_label, run_node
from srb_tui.store import FINAL_STATUSES, RunDetail, RunRecord
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.run_format import (
    GLYPH,
    LIFECYCLE,
    STAGES,
    clock,
    elapsed_sec,
    imported_from,
    lifecycle_state,
    score_text,
    stage_state,
    validity,
)
from srb_tui.ui.widgets.run_pane import STATE_TONE

TAB_TITLES = {"log": "Log", "transcript": "Transcript", "audit": "Audit",
              "behavioural": "Behavioural", "verification": "Verification", "score": "Score"}
NARROW = 110  # below this width the timeline uses short step names
SHORT = {"preparing": "prep", "collecting": "collect", "behavioural": "behav",
         "verification": "verif"}


def header_text(app: App[Any], run: RunRecord, progress: str, now: datetime,
                width: int | None = None) -> Text:
    """The run's identity line, then its state (and the progress note while live).
    ``width``: the header's width; an identity line it would wrap leaves out the local
    node (the default; a placed run's node is always named), then the run id (the title
    bar names the run)."""
    who = f"{run.agent}" + (f" · {run.model}" if run.model else "") + (
        f" ({run.effort})" if run.effort else "")
    node = f" · node {node_label(run)}"
    rest = f"{run.task_id} · {who}"
    show_node = run_node(run) is not None or width is None or (
        len(run.id) + 3 + len(rest) + len(node) <= width)
    shown = len(rest) + (len(node) if show_node else 0)
    head = Text()
    if width is None or len(run.id) + 3 + shown <= width:  # else the title bar names it
        head.append(run.id, style="bold")
        head.append(" · ")
    head.append(rest)
    if show_node:
        head.append(node)
    head.append("\n")
    final = run.status in FINAL_STATUSES
    head.append(run.status, style=tone(app, "ok" if run.status == "scored" else
                                       "bad" if run.status == "infra_error" else
                                       "muted" if final else "accent", bold=True))
    if run.phase and run.phase != run.status:
        head.append(f" (phase {run.phase})")
    elapsed = elapsed_sec(run, now)
    head.append(f" · elapsed {clock(elapsed)}")
    if run.budget_sec:
        head.append(f" / budget {clock(run.budget_sec)}")
        if elapsed is not None and run.status == "agent" and elapsed > run.budget_sec:
            head.append(" over budget", style=tone(app, "warn"))
    head.append(f" · score {score_text(run)} · {validity(run)}")
    if run.stop_reason:
        head.append(f" · stop {run.stop_reason}")
    if progress and not final:
        head.append(f"\n{progress[:160]}", style=tone(app, "muted"))
    return head


def timeline_text(app: App[Any], detail: RunDetail, width: int) -> Text:
    """Every lifecycle step with its mark (short names below :data:`NARROW` columns); an
    imported run has no lifecycle here, so the line says where its results came from."""
    line = Text()
    source = imported_from(detail.run)
    if source is not None:
        line.append("imported", style=tone(app, "accent", bold=True))
        line.append(f" from {source}: graded by the published harness, not run by srb",
                    style=tone(app, "muted"))
        return line
    narrow = width < NARROW
    for index, status in enumerate(LIFECYCLE):
        state = lifecycle_state(detail, status)
        if index:
            line.append(" → ", style=tone(app, "muted"))
        label = SHORT.get(status, status) if narrow else status
        line.append(f"{GLYPH[state]} {label}", style=tone(app, STATE_TONE[state]))
    if detail.run.status in ("cancelled", "infra_error"):
        line.append(f"  ✗ {detail.run.status}", style=tone(app, "bad", bold=True))
    return line


def tab_labels(detail: RunDetail) -> dict[str, str]:
    """Tab id → label for the tabs that carry a mark: each stage's, and the score's once
    there is one."""
    labels = {f"tab-{stage}": f"{GLYPH[stage_state(detail, stage)]} {TAB_TITLES[stage]}"
              for stage in STAGES}
    if detail.run.score is not None:
        labels["tab-score"] = f"Score {score_text(detail.run)}"
    return labels
