"""What every detail pane of the Run screen shares (one pane per tab: audit, behavioural,
verification, score, each in its own module).

Each pane is told the run's current :class:`RunDetail` (and the task, for what is planned
but not recorded yet) and updates its tables in place by row key. Choosing an evidence row
posts :class:`EvidenceChosen` up to the screen, which opens the side-by-side view.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from srb_tui.schema import Task
from srb_tui.store import CheckRecord, RunDetail
from srb_tui.store.grading_records import CheckRows
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.run_format import GLYPH, Citation, clock, stage_state
from srb_tui.ui.widgets.run_tables import selected_key

VERDICT_TONE: dict[str, Tone] = {
    "pass": "ok", "ok": "ok", "survived": "ok", "rejected": "ok", "invalid": "muted",
    "fail": "bad", "error": "bad", "broken": "bad", "upheld": "bad", "timeout": "bad",
    "nondeterministic": "bad", "nondeterministic-uncounted": "warn",
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


def checks_where(detail: RunDetail, stage: str, *, verdicts: Collection[str] | None = None,
                 module_id: str | None = None) -> list[CheckRecord]:
    """The run's checks of ``stage`` (with one of ``verdicts``, of ``module_id``): a run
    read from the store holds its checks as rows, and only these become records."""
    if isinstance(detail.checks, CheckRows):
        return detail.checks.where(stage, verdicts=verdicts, module_id=module_id)
    return [c for c in detail.checks if c.stage == stage
            and (verdicts is None or c.verdict in verdicts)
            and (module_id is None or c.module_id == module_id)]


def pane_table(id: str, follow: Callable[[str | None], None] | None = None
               ) -> DataTable[Any]:
    """A pane's table; with ``follow``, a :class:`FollowedTable` calling it."""
    if follow is not None:
        return FollowedTable(follow, id=id, cursor_type="row", zebra_stripes=True,
                             classes="run-table")
    return DataTable(id=id, cursor_type="row", zebra_stripes=True, classes="run-table")


class FollowedTable(DataTable[Any]):
    """A table whose pane shows what the cursor's row points at in the same frame as the
    cursor: ``follow(row key)`` runs as the cursor moves, not when the ``RowHighlighted``
    message it posts comes round (a frame later, with a layout pass of its own)."""

    def __init__(self, follow: Callable[[str | None], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._follow = follow

    def watch_cursor_coordinate(self, old_coordinate: Coordinate,
                                new_coordinate: Coordinate) -> None:
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)
        if old_coordinate != new_coordinate and self.row_count:
            self._follow(selected_key(self))


__all__ = ["STATE_TONE", "VERDICT_TONE", "EvidenceChosen", "FollowedTable", "RunPane",
           "checks_where", "pane_table"]
