"""Small dialogs of the Run screen: confirm a cancel, pick a stage, show a citation in both
trees side by side (and find those two trees)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from srb_tui.schema import Task
from srb_tui.service.views.safe_read import lines_around
from srb_tui.ui.console_service import ConsoleError, ConsoleService
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.run_format import STAGES, Citation

MAX_FILE_BYTES = 4 * 1024 * 1024
CONTEXT_LINES = 12


class ConfirmDialog(ModalScreen[bool]):
    """Yes or no; dismisses True only on an explicit yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no",
                tooltip="Keep things as they are"),
    ]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="run-dialog"):
            yield Static(Text(self.question, style="bold"), id="confirm-question")
            if self.detail:
                yield Static(self.detail, id="confirm-detail")
            with Horizontal(classes="run-dialog-buttons"):
                yield Button("Yes (y)", variant="error", id="confirm-yes", compact=True)
                yield Button("No (n)", id="confirm-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class StagePicker(ModalScreen[str | None]):
    """Choose the grading stage to run again."""

    BINDINGS = [
        Binding("escape", "close", "Cancel", id="stage.cancel", tooltip="Close without grading"),
    ]

    def __init__(self, note: str = "") -> None:
        super().__init__()
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="stage-dialog", classes="run-dialog"):
            yield Static(Text("Re-grade which stage?", style="bold"))
            if self.note:
                yield Static(Text(self.note, style=tone(self.app, "warn")), id="stage-note")
            yield OptionList(*[Option(s.capitalize(), id=s) for s in STAGES], id="stage-list",
                             compact=True)

    def on_mount(self) -> None:
        self.query_one("#stage-list", OptionList).focus()

    @on(OptionList.OptionSelected, "#stage-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)


def read_window(tree: Path | None, rel: str, line: int | None,
                context: int = CONTEXT_LINES) -> tuple[list[tuple[int, str]], str | None]:
    """Lines around ``line`` of ``tree/rel`` as ``(number, text)``, or a problem; read as
    every host-side read of a submission is (see :mod:`srb_tui.service.views.safe_read`)."""
    return lines_around(tree, rel, line, context=context, cap=MAX_FILE_BYTES)


class EvidenceDialog(ModalScreen[None]):
    """A citation's file at the cited line, State A on the left, the submission right."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="evidence.close", tooltip="Back to the run"),
    ]

    def __init__(self, citation: Citation, original: Path | None, submission: Path | None,
                 *, original_problem: str | None = None) -> None:
        super().__init__()
        self.citation = citation
        self.original = original
        self.submission = submission
        self.original_problem = original_problem

    def compose(self) -> ComposeResult:
        c = self.citation
        head = Text.assemble(("Evidence ", "bold"), (c.label, "bold"))
        if c.grounded is not None:
            head.append("  grounded" if c.grounded else "  not grounded",
                        style=tone(self.app, "ok" if c.grounded else "bad"))
        with Vertical(id="evidence-dialog", classes="run-dialog"):
            yield Static(head, id="evidence-title")
            if c.quote or c.note or c.reason:
                quote = Text()
                if c.quote:
                    quote.append(f"“{c.quote}”")
                if c.note:
                    quote.append(f"  {c.note}", style=tone(self.app, "muted"))
                if c.reason:
                    quote.append(f"  ({c.reason})", style=tone(self.app, "muted"))
                yield Static(quote, id="evidence-quote")
            with Horizontal(id="evidence-sides"):
                for root, tree in (("original", self.original),
                                   ("submission", self.submission)):
                    with VerticalScroll(classes="evidence-side", id=f"evidence-{root}"):
                        yield Static(self._side(root, tree), id=f"evidence-{root}-text")

    def _side(self, root: str, tree: Path | None) -> Text:
        c = self.citation
        title = "State A" if root == "original" else "submission"
        out = Text(f"{title}: {c.path}\n", style="bold")
        if root == "original" and tree is None and self.original_problem:
            out.append(self.original_problem, style=tone(self.app, "bad"))
            return out
        window, problem = read_window(tree, c.path, c.line)
        if problem:
            out.append(problem, style=tone(self.app, "muted"))
            return out
        width = len(str(window[-1][0])) if window else 1
        for number, text in window:
            cited = number == c.line and root == c.root
            style = f"reverse {tone(self.app, 'warn')}" if cited else ""
            mark = "▶" if number == c.line else " "
            out.append(f"{mark}{number:>{width}} ", style=tone(self.app, "muted"))
            out.append(text.expandtabs(4) + "\n", style=style)
        return out

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["ConfirmDialog", "EvidenceDialog", "StagePicker", "read_window"]


class EvidenceTrees:
    """The two trees a citation is shown in: State A from the cache (prepared once per
    Run screen, offline: showing evidence never fetches) and the run's submission."""

    def __init__(self, run_host: ConsoleService, run_id: str) -> None:
        self.run_host = run_host
        self.run_id = run_id
        self._state_a: tuple[Path | None, str | None] | None = None

    async def dialog(self, citation: Citation, task: Task | None) -> EvidenceDialog:
        original, problem = await self.state_a(task)
        submission = self.run_host.settings.submission_dir(self.run_id)
        return EvidenceDialog(citation, original, submission if submission.is_dir() else None,
                              original_problem=problem)

    async def state_a(self, task: Task | None) -> tuple[Path | None, str | None]:
        """State A's tree, or None and why it is not available."""
        if self._state_a is None:
            if task is None:
                self._state_a = (None, "the task of this run no longer loads")
            else:
                try:
                    ready = await self.run_host.prepare_state_a(task, offline=True)
                    self._state_a = (ready.tree, None)
                except ConsoleError as exc:
                    self._state_a = (None, f"State A is not available offline: {exc}")
        return self._state_a
