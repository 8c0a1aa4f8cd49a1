"""Stage II pane of the Run screen: the module table and the failing checks with expected
vs actual."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from srb_tui.store import CheckRecord, RunDetail
from srb_tui.store.run_extra_more import ModuleProgress
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.run_format import clock, detail_text, expected_actual, parse_time
from srb_tui.ui.widgets.run_pane import RunPane, checks_where, pane_table
from srb_tui.ui.widgets.run_tables import Row, add_columns, selected_key, sync_rows

AT_ONCE = 12  # failing checks shown in the cursor's own frame (the checks table's height)


class BehaviouralPane(RunPane):
    """Stage II: the module table and the failing checks with expected vs actual.

    ``F`` (failing only) keeps the modules with a failing check and puts the cursor on the
    first failing check, its expected vs actual below: one key from the tab to the check
    that failed, however many thousands passed. ``F`` again shows every module."""

    BINDINGS = [
        Binding("F", "failing_only", "Failing only", id="run.behav.failing",
                tooltip="Only the modules with failing checks, the cursor on the first "
                        "failing check (again: every module)"),
    ]

    failing_only = False

    _failing_of: tuple[RunDetail, dict[str, list[CheckRecord]]] | None = None
    # What the check box shows now (detail, check key): the checks table highlights the
    # row _show_module already showed, and a second update cost another layout pass.
    _check_shown: tuple[RunDetail | None, str | None] | None = None
    # The module whose checks show (detail, module key): the table's cursor shows it as it
    # moves (FollowedTable), and the RowHighlighted message that follows has nothing to do.
    _module_shown: tuple[RunDetail | None, str | None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="behav-summary", classes="pane-summary")
        yield pane_table("behav-modules", follow=self._follow_module)
        yield Static(id="behav-checks-title", classes="pane-subtitle")
        yield pane_table("behav-checks", follow=self._show_check)
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
        live = ModuleProgress.read_all(detail.run.extra) if not modules else {}
        if modules:
            passed = sum(m.passed for m in modules)
            scored = sum(m.passed + m.failed + m.errors for m in modules)
            summary.append(f" · {passed}/{scored} checks pass")
        elif live:
            summary.append("\n" + live_summary(live.values(), now_utc()),
                           style=tone(self.app, "accent"))
        else:
            summary.append("\nNo module results yet. The suite runs after the audit.",
                           style=tone(self.app, "muted"))
        if self.failing_only:
            summary.append(" · failing only (F: every module)", style=tone(self.app, "accent"))
        self.query_one("#behav-summary", Static).update(summary)
        rows: list[Row] = []
        seen = set()
        for m in modules:
            seen.add(m.module_id)
            if self.failing_only and not self._is_failing(m.module_id, m.failed + m.errors):
                continue
            rows.append((m.module_id, [
                m.module_id, "—" if m.rate is None else f"{m.rate:.0%}", str(m.passed),
                str(m.failed), str(m.errors), str(m.skipped), self.paint(m.status, m.status),
                _module_notes(m.detail),
            ]))
        if self.task_def is not None and not self.failing_only:
            for module_id in self.task_def.module_ids:
                if module_id not in seen:
                    rec = live.get(module_id)
                    rows.append((module_id, [
                        module_id, "—", "" if rec is None or rec.passed is None
                        else str(rec.passed), "", "", "",
                        self.unrecorded() if rec is None else self._live_cell(rec), ""]))
        table = self.query_one("#behav-modules", DataTable)
        sync_rows(table, rows)
        self._show_module(selected_key(table))

    def _is_failing(self, module_id: str, counted: int) -> bool:
        return counted > 0 or bool(self._failing(module_id))

    def action_failing_only(self) -> None:
        """Toggle the failing-only view; turned on, the cursor lands on the first failing
        check (the checks table takes the focus); turned off, every module shows again
        with the cursor on the module it was on."""
        if self.detail is None:
            return
        modules = self.query_one("#behav-modules", DataTable)
        if self.failing_only:
            self.failing_only = False
            was = selected_key(modules)
            modules.clear()  # the modules come back in their order, not after the failing
            self.redraw()
            if was is not None and was in {str(k.value) for k in modules.rows}:
                modules.move_cursor(row=modules.get_row_index(was))
            modules.focus()
            return
        failing = [m.module_id for m in self.detail.module_results
                   if m.stage == "behavioural"
                   and self._is_failing(m.module_id, m.failed + m.errors)]
        if not failing:
            self.notify("No failing checks in Stage II.", timeout=3)
            return
        self.failing_only = True
        self.redraw()
        modules.move_cursor(row=0)
        self._show_module(failing[0])
        checks = self.query_one("#behav-checks", DataTable)
        if checks.row_count:
            checks.move_cursor(row=0)
            checks.focus()

    def _live_cell(self, rec: ModuleProgress) -> Text:
        """A module the grader reported while the stage runs: running (for how long), or
        its ending, waiting for the stage's results to be recorded."""
        if rec.state == "running":
            since = seconds_since(rec.at, now_utc())
            return self.paint(f"running {clock(since)}" if since is not None else "running",
                              "running")
        return self.paint(f"{rec.state} (ended)", rec.state)

    def _follow_module(self, module_id: str | None) -> None:
        """The cursor moved onto ``module_id``: a few failing checks are shown in the same
        frame as the cursor; a longer list after it (the cursor answers the key first)."""
        if self.detail is None or module_id is None or \
                len(self._failing(module_id)) <= AT_ONCE:
            self._show_module(module_id)

    @on(DataTable.RowHighlighted, "#behav-modules")
    def _module_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = None if event.row_key.value is None else str(event.row_key.value)
        if not self._shown(self._module_shown, key):  # the cursor's move showed it already
            self._show_module(key)

    def _shown(self, shown: tuple[RunDetail | None, str | None] | None, key: str | None
               ) -> bool:
        """``shown`` is this detail's ``key``: the detail by identity (a live run's next
        read is another object, and comparing two of 25,000 checks cost ~200 ms)."""
        return shown is not None and shown[0] is self.detail and shown[1] == key

    def _failing(self, module_id: str) -> list[CheckRecord]:
        return self._failing_index().get(module_id, [])

    def _failing_index(self) -> dict[str, list[CheckRecord]]:
        """The failing checks of each module, gathered once per detail: a run holds up to
        25,000 checks, and every module key would otherwise walk all of them."""
        assert self.detail is not None
        cached = self._failing_of
        if cached is not None and cached[0] is self.detail:
            return cached[1]
        index: dict[str, list[CheckRecord]] = {}
        for c in checks_where(self.detail, "behavioural", verdicts=("fail", "error")):
            index.setdefault(c.module_id, []).append(c)
        self._failing_of = (self.detail, index)
        return index

    def _show_module(self, module_id: str | None) -> None:
        self._module_shown = (self.detail, module_id)
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
        if self._shown(self._check_shown, key):
            return
        self._check_shown = (self.detail, key)
        if self.detail is None or key is None:
            self._put_detail("")
            return
        module_id, _, position = key.rpartition(":")
        check = next((c for c in self._failing(module_id) if str(c.position) == position),
                     None)
        if check is None:
            self._put_detail("")
            return
        pair = expected_actual(check.detail)
        if pair is None:
            self._put_detail(Text(detail_text(check.detail) or "(no detail recorded)"))
            return
        grid = Table(expand=True, show_edge=False, pad_edge=False)
        grid.add_column("expected", ratio=1, style=tone(self.app, "ok"))
        grid.add_column("actual", ratio=1, style=tone(self.app, "bad"))
        grid.add_row(pair[0], pair[1])
        self._put_detail(grid)

    def _put_detail(self, content: str | Text | Table) -> None:
        """Show ``content`` in the check box; a repaint alone when its height stays (most
        keys through the failing checks: a layout pass of the screen would cost more than
        the rest of the key)."""
        box = self.query_one("#behav-check-detail", Static)
        before = box.content_region
        box.update(content, layout=False)
        if before.width <= 0 or box.get_content_height(
                self.size, self.app.size, before.width) != before.height:
            box.refresh(layout=True)


def _module_notes(detail: Any) -> str:
    if isinstance(detail, dict):
        notes = detail.get("notes")
        if isinstance(notes, list):
            return "; ".join(str(n) for n in notes)[:120]
        if isinstance(detail.get("error"), str):
            return str(detail["error"])[:120]
        return ""
    return str(detail)[:120] if detail else ""


def now_utc() -> datetime:
    return datetime.now(UTC)


def seconds_since(stamp: str, now: datetime) -> float | None:
    """Seconds from an ISO stamp (the grader's ``utc_iso``) to ``now``; None if unreadable."""
    at = parse_time(stamp)
    return None if at is None else max(0.0, (now - at).total_seconds())


def live_summary(records: Iterable[ModuleProgress], now: datetime) -> str:
    """``Module 2 of 4 running: cli (1m 05s); 1 ended.`` while the suite runs."""
    recs = list(records)
    ended = sum(1 for r in recs if r.state != "running")
    running = [r for r in recs if r.state == "running"]
    if not running:
        return f"{ended} of {recs[0].total} modules ended; recording the results."
    r = max(running, key=lambda x: x.index)
    since = seconds_since(r.at, now)
    took = f" ({clock(since)})" if since is not None else ""
    return f"Module {r.index} of {r.total} running: {r.module}{took}; {ended} ended."
