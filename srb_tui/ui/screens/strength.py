"""Strength screen: how strong each task's instrument is (issue 36).

Top, the strength campaigns of the store (``srb tasks strength``), one row each: task,
mutants, the suite's mutation score, the panel's strength. Under it, the figures of the
highlighted campaign (each adversary's catches and exclusive catches, the retire-k curve),
then its mutants — survivors first (uncaught at the very top: the suite's and the panel's
blind spots, or equivalent mutants), then killed and invalid — with Stage II's outcome and
one column per adversary (✓ caught, · missed, ! error). Enter shows a mutant's diff against
State A; ``o`` opens the run in which the panel graded it (its rounds and counterexamples);
``e`` marks it equivalent (asking why; stored with the user's name, as
``srb tasks equivalent`` does) or takes the mark back, and the figures follow.
"""

from __future__ import annotations

import getpass

from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Header, Input, Static

from srb_tui.reports.strength import CampaignStrength
from srb_tui.service.views.strength import (
    CAUGHT,
    ERRORED,
    MISSED,
    MutantLine,
    load_strength,
    mutant_lines,
)
from srb_tui.strength.present import figures_doc, summary_lines
from srb_tui.ui.console_service import ConsoleService
from srb_tui.ui.palette import Tone, tone
from srb_tui.ui.widgets.footer import PriorityFooter

GLYPH = {CAUGHT: "✓", MISSED: "·", ERRORED: "!"}
OUTCOME_TONE: dict[str, Tone] = {"killed": "ok", "survived": "warn", "invalid": "muted"}
FOOTER_FIRST = ("strength.diff", "strength.open", "strength.refresh", "app.tasks")
CAMPAIGN_COLUMNS = ("Campaign", "Task", "Mutants", "Suite score", "Panel strength", "Status")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


class StrengthScreen(Screen[None]):
    """Strength campaigns, one campaign's figures and its mutants."""

    AUTO_FOCUS = "#strength-mutants"
    DEFAULT_CSS = """
    #strength-body { height: 1fr; }
    #strength-campaigns { height: auto; max-height: 8; }
    #strength-figures { padding: 0 1; height: auto; max-height: 14; }
    #strength-mutants { height: 1fr; min-height: 6; }
    #strength-diff-box { height: auto; max-height: 45%; border-top: solid $primary; }
    #strength-diff-box.-hidden { display: none; }
    #strength-message { padding: 0 1; height: auto; }
    """
    BINDINGS = [
        Binding("enter", "diff", "Diff", id="strength.diff",
                tooltip="Show the highlighted mutant's change against State A"),
        Binding("o", "open_run", "Open run", id="strength.open",
                tooltip="Open the run in which the panel graded this mutant"),
        Binding("e", "equivalent", "Equivalent", id="strength.equivalent",
                tooltip="Mark the highlighted mutant equivalent (asks why), or take the "
                        "mark back"),
        Binding("ctrl+r", "refresh", "Refresh", id="strength.refresh",
                tooltip="Read the strength campaigns again"),
        Binding("escape", "hide_diff", "Hide diff", id="strength.hide", show=False),
    ]

    def __init__(self, run_host: ConsoleService) -> None:
        super().__init__()
        self.run_host = run_host
        self.campaigns: list[CampaignStrength] = []
        self.lines: list[MutantLine] = []
        self.loads = 0  # finished loads (tests wait on it)
        self.diff_text = ""  # what the diff pane shows ("" while hidden)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="strength-body"):
            yield Static("Reading the strength campaigns…", id="strength-message")
            yield DataTable(id="strength-campaigns", cursor_type="row", zebra_stripes=True)
            yield Static(id="strength-figures")
            yield DataTable(id="strength-mutants", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="strength-diff-box", classes="-hidden"):
                yield Static(id="strength-diff")
        yield PriorityFooter(first=FOOTER_FIRST)

    def on_mount(self) -> None:
        self.sub_title = "Strength"
        table = self.query_one("#strength-campaigns", DataTable)
        for label in CAMPAIGN_COLUMNS:
            table.add_column(label, key=label)
        self.action_refresh()

    def on_screen_resume(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        self._load()

    @work(exclusive=True, group="strength-load", exit_on_error=False)
    async def _load(self) -> None:
        message = self.query_one("#strength-message", Static)
        if not self.run_host.settings.db_path.exists():
            message.update("No store yet. Measure a task's instrument with "
                           "`srb tasks strength ID --mutants N --seed S`.")
            self.loads += 1
            return
        try:
            view = await load_strength(await self.run_host.store())
        except Exception as exc:  # the store says what is wrong; shown, never raised
            message.update(Text(f"{type(exc).__name__}: {exc}", style=tone(self.app, "bad")))
            self.loads += 1
            return
        self.campaigns = view.campaigns
        if not self.campaigns:
            message.update("No strength campaign yet. Measure a task's instrument with "
                           "`srb tasks strength ID --mutants N --seed S`: its mutants of "
                           "State A graded by Stage II and the adversary panel.")
        else:
            message.update(f"{len(self.campaigns)} strength campaign(s) · Enter: a "
                           "mutant's diff · o: the run its panel ran in")
        table = self.query_one("#strength-campaigns", DataTable)
        keep = table.cursor_row
        table.clear()
        for item in self.campaigns:
            f = item.figures
            table.add_row(item.campaign.id, item.campaign.task_id, str(f.mutants),
                          f"{_pct(f.suite_score)} ({f.killed}/{f.valid})",
                          f"{_pct(f.panel_strength)} ({f.caught}/{f.graded_survivors})",
                          item.campaign.status, key=item.campaign.id)
        if self.campaigns:
            table.move_cursor(row=min(max(keep, 0), len(self.campaigns) - 1))
        self._show_campaign()
        self.loads += 1

    def current(self) -> CampaignStrength | None:
        if not self.campaigns:
            return None
        index = self.query_one("#strength-campaigns", DataTable).cursor_row
        return self.campaigns[index] if 0 <= index < len(self.campaigns) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "strength-campaigns":
            self._show_campaign()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a mutant (the table takes Enter itself): its diff."""
        if event.data_table.id == "strength-mutants":
            self.action_diff()

    def _show_campaign(self) -> None:
        item = self.current()
        figures = self.query_one("#strength-figures", Static)
        table = self.query_one("#strength-mutants", DataTable)
        table.clear(columns=True)
        self.lines = []
        if item is None:
            figures.update("")
            return
        panel = list(item.campaign.panel)
        lines = summary_lines(figures_doc(item.figures), compact=True)
        if panel and not item.figures.graded_survivors:  # no adversary table: say the columns
            lines.append("panel: " + " · ".join(f"A{i + 1} {n}" for i, n in enumerate(panel)))
        figures.update("\n".join(lines))
        table.add_column("Mutant", key="mutant")
        table.add_column("Stage II", key="stage_ii")
        for index, name in enumerate(panel):
            table.add_column(f"A{index + 1}", key=name)
        table.add_column("Where", key="where")
        table.add_column("Operator", key="operator")
        table.add_column("Equivalent", key="equivalent")
        self.lines = mutant_lines(item)
        for line in self.lines:
            table.add_row(*self._cells(line, panel), key=line.row.mutant_id)

    def _cells(self, line: MutantLine, panel: list[str]) -> list[str | Text]:
        row = line.row
        outcome = row.stage_ii or "—"
        kind: Tone = OUTCOME_TONE.get(outcome, "muted")
        cells: list[str | Text] = [Text(row.mutant_id, style=tone(self.app, "accent")),
                                   Text(outcome, style=tone(self.app, kind))]
        for name in panel:
            cell = line.panel.get(name, "")
            cells.append(Text(GLYPH.get(cell, ""), style=tone(
                self.app, "ok" if cell == CAUGHT else "bad" if cell == ERRORED else "muted")))
        mark = row.equivalent
        cells += [line.where, row.operator,
                  "—" if mark is None else f"{mark.marked_by}: {mark.reason}"]
        return cells

    def selected(self) -> MutantLine | None:
        if not self.lines:
            return None
        index = self.query_one("#strength-mutants", DataTable).cursor_row
        return self.lines[index] if 0 <= index < len(self.lines) else None

    def action_diff(self) -> None:
        line = self.selected()
        if line is None:
            return
        box = self.query_one("#strength-diff-box")
        text = line.diff or f"(no diff stored) {line.row.doc.get('before')!r} → " \
                            f"{line.row.doc.get('after')!r}"
        head = f"{line.row.mutant_id} · {line.where} · {line.row.operator}"
        reason = (line.row.stage_ii_doc or {}).get("reason")
        if reason:
            head += f" · Stage II: {reason}"
        self.diff_text = f"# {head}\n{text}"
        self.query_one("#strength-diff", Static).update(
            Syntax(self.diff_text, "diff", word_wrap=True))
        box.remove_class("-hidden")

    def action_hide_diff(self) -> None:
        self.diff_text = ""
        self.query_one("#strength-diff-box").add_class("-hidden")

    def action_equivalent(self) -> None:
        line = self.selected()
        item = self.current()
        if line is None or item is None:
            return
        task_id, key = item.campaign.task_id, line.row.key
        if line.row.equivalent is not None:
            self._unmark(task_id, key)
            return

        def done(reason: str | None) -> None:
            if reason:
                self._mark(task_id, key, reason)

        self.app.push_screen(ReasonDialog(f"{line.row.mutant_id} · {line.where} · "
                                          f"{line.row.operator}"), done)

    @work(group="strength-mark", exit_on_error=False)
    async def _mark(self, task_id: str, key: str, reason: str) -> None:
        try:
            by = getpass.getuser()
        except (OSError, KeyError):
            by = "unknown"
        store = await self.run_host.store()
        await store.strength.mark_equivalent(task_id, key, by=by, reason=reason)
        self.notify(f"marked equivalent by {by}; the scores leave it out")
        self._load()

    @work(group="strength-mark", exit_on_error=False)
    async def _unmark(self, task_id: str, key: str) -> None:
        store = await self.run_host.store()
        await store.strength.unmark_equivalent(task_id, key)
        self.notify("equivalent mark taken back")
        self._load()

    def action_open_run(self) -> None:
        line = self.selected()
        if line is None or not line.row.stage_iii_run:
            self.notify("This mutant has no panel run (only Stage II survivors are graded "
                        "by the panel)", severity="warning")
            return
        open_run = getattr(self.app, "open_run", None)
        if callable(open_run):
            open_run(line.row.stage_iii_run)


class ReasonDialog(ModalScreen[str | None]):
    """Why a mutant is equivalent: one line; Enter marks, Esc leaves it unmarked."""

    BINDINGS = [Binding("escape", "close", "Cancel", id="strength.reason_cancel",
                        tooltip="Leave the mutant unmarked")]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="strength-reason", classes="run-dialog"):
            yield Static(Text(f"Mark {self.what} equivalent", style="bold"))
            yield Static("Why can no user see this change? (Enter marks, Esc cancels)")
            yield Input(placeholder="e.g. the module is never run: bin/csvtab is the entry",
                        id="strength-reason-input")

    def on_mount(self) -> None:
        self.query_one("#strength-reason-input", Input).focus()

    @on(Input.Submitted, "#strength-reason-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["ReasonDialog", "StrengthScreen"]
