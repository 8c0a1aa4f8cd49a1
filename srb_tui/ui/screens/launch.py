"""The launch dialog: which agent, model, effort, budget and how many repeats, for one task.

A ``ModalScreen[LaunchRequest | None]``: it validates everything (the agent spec as the run
service will parse it, a positive budget, 1..MAX_REPEATS repeats) and shows the problem
inline; it dismisses with a request only when the request can be launched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from srb_tui.service.run.agent_specs import CLIENT_KINDS, CLIENT_LINES, check_agent
from srb_tui.ui.console_service import LaunchRequest
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.footer import PriorityFooter

MAX_REPEATS = 20
COMMAND = "command:"


@dataclass(frozen=True)
class LaunchTarget:
    """The task the dialog launches: its id, folder and default budget."""

    task_id: str
    task_dir: Path
    budget_sec: float | None

    def submissions(self) -> list[str]:
        folder = self.task_dir / "submissions"
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir())


def agent_choices(target: LaunchTarget) -> list[Option]:
    """Built-ins first (untouched, one replay per submission, command), then the real
    clients (the model is typed in the Model field; the version is the task's pin or
    srb's default)."""
    options = [Option("untouched — hand State A back unchanged", id="untouched")]
    for name in target.submissions():
        options.append(Option(f"replay:{name} — the recorded submission", id=f"replay:{name}"))
    options.append(Option("command:… — run a command in the workspace", id=COMMAND))
    for kind in CLIENT_KINDS:
        options.append(Option(f"{kind}:MODEL — {CLIENT_LINES[kind]}", id=kind))
    return options


def build_request(
    target: LaunchTarget, agent: str | None, command: str, model: str, effort: str,
    budget: str, repeats: str,
) -> LaunchRequest | str:
    """The request, or the first problem as a sentence naming the field."""
    if agent is None:
        return "Agent: choose one from the list."
    spec_text = f"command:{command.strip()}" if agent == COMMAND else agent
    if agent == COMMAND and not command.strip():
        return "Command: type the command to run, e.g. make migrate"
    if agent in CLIENT_KINDS:
        if not model.strip():
            return f"Model: {agent} needs the model name, e.g. claude-sonnet-5"
        spec_text = f"{agent}:{model.strip()}"
    checked = check_agent(spec_text, target.task_dir, effort=effort.strip() or None)
    if checked.text is None:
        return f"{checked.field}: {checked.problem}"
    try:
        budget_sec = float(budget.strip())
    except ValueError:
        return f"Budget: {budget.strip() or 'nothing'} is not a number of seconds."
    if not math.isfinite(budget_sec) or budget_sec <= 0:
        return "Budget: must be more than 0 seconds."
    try:
        count = int(repeats.strip())
    except ValueError:
        return f"Repeats: {repeats.strip() or 'nothing'} is not a whole number."
    if not 1 <= count <= MAX_REPEATS:
        return f"Repeats: between 1 and {MAX_REPEATS}."
    return LaunchRequest(
        task_id=target.task_id, agent=checked.text, budget_sec=budget_sec, repeats=count,
        model=model.strip() or None, effort=effort.strip() or None,
    )


class LaunchDialog(ModalScreen[LaunchRequest | None]):
    """Ask how to run an agent on one task."""

    BINDINGS = [
        Binding("ctrl+s", "submit", "Launch", id="launch.submit",
                tooltip="Check the fields and launch the run(s)"),
        Binding("escape", "cancel", "Cancel", id="launch.cancel",
                tooltip="Close the dialog without launching"),
        # a modal screen does not see the app's keys: `?` again here, by the app's id
        Binding("question_mark", "app.toggle_keys", "Keys", id="app.keys",
                tooltip="Show or hide the dialog's keys (Esc hides them too)"),
    ]

    def __init__(self, target: LaunchTarget) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        budget = "" if self.target.budget_sec is None else f"{self.target.budget_sec:g}"
        with Vertical(id="launch-dialog"):
            yield Static(Text.assemble(("Launch ", "bold"), (self.target.task_id, "bold")),
                         id="launch-title")
            yield Label("Agent", classes="launch-label")
            yield OptionList(*agent_choices(self.target), id="launch-agent", compact=True)
            yield Input(placeholder="command, e.g. make migrate", id="launch-command",
                        compact=True)
            with Horizontal(classes="launch-row"):
                yield Label("Model", classes="launch-label")
                yield Input(placeholder="model (needed by a real client)", id="launch-model",
                            compact=True)
                yield Label("Effort", classes="launch-label")
                yield Input(placeholder="low | medium | high | xhigh", id="launch-effort",
                            compact=True)
            with Horizontal(classes="launch-row"):
                yield Label("Budget s", classes="launch-label")
                yield Input(budget, placeholder="seconds", id="launch-budget", compact=True,
                            type="number")
                yield Label("Repeats", classes="launch-label")
                yield Input("1", id="launch-repeats", compact=True, type="integer")
            yield Static(id="launch-message")
            with Horizontal(id="launch-buttons"):
                yield Button("Launch", variant="primary", id="launch-ok", compact=True,
                             tooltip="Launch (ctrl+s)")
                yield Button("Cancel", id="launch-cancel", compact=True,
                             tooltip="Close (escape)")
        # the dialog's own keys, over the footer of the screen behind it
        yield PriorityFooter(first=("launch.submit", "launch.cancel", "app.keys"))

    def on_mount(self) -> None:
        agents = self.query_one("#launch-agent", OptionList)
        agents.highlighted = 0
        agents.border_title = "agent"
        self.query_one("#launch-command", Input).display = False
        self.query_one("#launch-message", Static).display = False
        agents.focus()

    @property
    def chosen_agent(self) -> str | None:
        agents = self.query_one("#launch-agent", OptionList)
        if agents.highlighted is None:
            return None
        option = agents.get_option_at_index(agents.highlighted)
        return None if option.disabled else option.id

    def select_agent(self, agent_id: str) -> None:
        """Highlight the agent with this option id (tests and callers use it)."""
        agents = self.query_one("#launch-agent", OptionList)
        agents.highlighted = agents.get_option_index(agent_id)

    @on(OptionList.OptionHighlighted, "#launch-agent")
    def _agent_changed(self, event: OptionList.OptionHighlighted) -> None:
        command = self.query_one("#launch-command", Input)
        command.display = event.option.id == COMMAND

    @on(OptionList.OptionSelected, "#launch-agent")
    def _agent_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == COMMAND:
            self.query_one("#launch-command", Input).focus()
        else:
            self.query_one("#launch-budget", Input).focus()

    @on(Input.Submitted)
    def _input_submitted(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#launch-ok")
    def _ok(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#launch-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        value = build_request(
            self.target,
            self.chosen_agent,
            self.query_one("#launch-command", Input).value,
            self.query_one("#launch-model", Input).value,
            self.query_one("#launch-effort", Input).value,
            self.query_one("#launch-budget", Input).value,
            self.query_one("#launch-repeats", Input).value,
        )
        if isinstance(value, str):
            message = self.query_one("#launch-message", Static)
            message.update(Text(value, style=tone(self.app, "bad")))
            message.display = True
            return
        self.dismiss(value)


__all__ = ["MAX_REPEATS", "LaunchDialog", "LaunchTarget", "agent_choices", "build_request"]
