"""The columns of the Runs table: what each shows, how a run's row is drawn, how a column
maps to the store's sort keys (clicking a header, cycling with ``s``), and the status
line under the table.

Pure drawing and arithmetic over a stored run; the screen owns loading and the table.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App

from srb_tui.service.run.run_node import LOCAL, node_label
from srb_tui.service.views.history import RunRow
from srb_tui.service.views.runs_table import PAGE_SIZE, RunsPage, StageMarks, duration_seconds
from srb_tui.store import RunRecord
from srb_tui.ui.palette import Tone, tone

# (label, column key, store sort key or None when the column cannot be sorted)
COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("Run", "run", "id"),
    ("Task", "task", "task"),
    ("Agent", "agent", "agent"),
    ("Status", "status", "status"),
    ("Score", "score", "score"),  # before the long tail: still shown at 120 columns
    ("Node", "node", None),  # where it ran: right after Score, on screen at 100 columns
    ("I II III", "stages", None),
    ("Valid", "valid", None),
    ("Model", "model", "model"),
    ("Effort", "effort", None),
    ("Stop", "stop", None),
    ("Started", "started", "started_at"),
    ("Duration", "duration", None),
    ("Tokens · cost", "cost", None),
)
NODE_CELL = 12  # a longer node name (a Swarm host name) is cut with "…" in its cell
NARROW_WIDTH = 100  # under this many columns the Task and Agent cells are cut to NARROW_CELL
NARROW_CELL = 14  # so that Run, Task, Agent, Status and Score fit in 80 columns
SORTABLE = [key for _, key, sort in COLUMNS if sort]
STATUS_TONE: dict[str, Tone] = {
    "scored": "ok", "cancelled": "muted", "infra_error": "bad", "pending": "muted",
}
MARK_TONE: dict[str, Tone] = {"✓": "ok", "✗": "bad", "!": "warn", "—": "muted"}
MARKED = "● "  # prefix of the run cell of a run marked for comparison


def clip(text: str, width: int | None) -> str:
    """``text`` cut to ``width`` characters with a final "…" (None: whole)."""
    if width is None or len(text) <= width:
        return text
    return f"{text[:width - 1]}…"


def cell_cap(screen_width: int) -> int | None:
    """How wide the Task and Agent cells may be on a screen ``screen_width`` wide."""
    return NARROW_CELL if screen_width < NARROW_WIDTH else None


def run_cells(app: App[Any], run: RunRecord, marks: StageMarks, cost: str = "—", *,
              marked: bool = False, cap: int | None = None) -> list[str | Text]:
    """One table row for ``run``, in the order of :data:`COLUMNS`; ``cap`` cuts the Task
    and Agent cells (narrow screens: Score stays in view)."""
    row = RunRow(
        run.id, run.task_id, run.agent, run.status, run.stop_reason, run.score,
        run.max_score, run.valid, run.started_at,
        duration_seconds(run.started_at, run.finished_at),
    )
    status = Text(run.status, style=tone(app, STATUS_TONE.get(run.status, "accent")))
    stages = Text()
    for n, glyph in enumerate(marks.text.split()):
        if n:
            stages.append("  ")
        stages.append(glyph, style=tone(app, MARK_TONE[glyph], bold=True))
    run_cell: str | Text = run.id
    if marked:
        run_cell = Text(f"{MARKED}{run.id}", style=tone(app, "accent", bold=True))
    valid_tone: Tone = "muted" if run.valid is None else "ok" if run.valid else "bad"
    node = node_label(run)
    node_cell = Text(clip(node, NODE_CELL), style=tone(app, "muted" if node == LOCAL else "accent"))
    return [
        run_cell, clip(run.task_id, cap), clip(run.agent, cap), status, row.score_text,
        node_cell, stages,
        Text(row.valid_text, style=tone(app, valid_tone)), run.model or "—",
        run.effort or "—", run.stop_reason or "—", row.started_text,
        row.duration_text, cost,
    ]


def run_id_of(cell: Any) -> str:
    """The run id shown in a run cell (marked or not)."""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return text.removeprefix(MARKED)


def sort_for_column(run_sort: str, column: str) -> str | None:
    """The store sort after choosing ``column`` while sorted by ``run_sort`` (the same
    column again reverses it); None when the store cannot sort by that column."""
    sort_key = next((sort for _, key, sort in COLUMNS if key == column), None)
    if sort_key is None:
        return None
    if run_sort.lstrip("-") == sort_key:
        return sort_key if run_sort.startswith("-") else f"-{sort_key}"
    return f"-{sort_key}" if sort_key in ("score", "started_at") else sort_key


def next_sort_column(run_sort: str) -> str:
    """The column after the one ``run_sort`` sorts by, among the sortable ones."""
    current = run_sort.lstrip("-")
    keys = [sort for _, _, sort in COLUMNS if sort]
    following = keys[(keys.index(current) + 1) % len(keys)] if current in keys else keys[0]
    return next(key for _, key, sort in COLUMNS if sort == following)


def reversed_sort(run_sort: str) -> str:
    return run_sort[1:] if run_sort.startswith("-") else f"-{run_sort}"


def page_status(app: App[Any], page: RunsPage, run_sort: str, marked: list[str]) -> Text:
    """``1–50 of 1,234 runs · page 1/25 · sorted by score ↓ · marked: …``"""
    pages = (page.total - 1) // PAGE_SIZE + 1
    first, last = page.offset + 1, page.offset + len(page.runs)
    column, reverse = run_sort.lstrip("-"), run_sort.startswith("-")
    text = Text(
        f"{first}–{last} of {page.total:,} runs · page {page.offset // PAGE_SIZE + 1}/{pages}"
        f" · sorted by {column} {'↓' if reverse else '↑'}",
        style=tone(app, "muted"),
    )
    if marked:
        text.append(f" · marked: {', '.join(marked)}", style=tone(app, "accent"))
    return text
