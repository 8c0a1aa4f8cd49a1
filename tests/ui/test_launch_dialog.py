"""The launch dialog: its agent list, inline validation, and what it dismisses with."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList, Static

from srb_tui.config import Settings
from srb_tui.ui.app import SrbApp, create_app
from srb_tui.ui.console_service import LaunchRequest
from srb_tui.ui.screens.launch import (
    COMMAND,
    LaunchDialog,
    LaunchTarget,
    agent_choices,
    build_request,
)
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

TARGET = LaunchTarget(DEMO_TASK.name, DEMO_TASK, 1800.0)


def test_agent_choices_list_builtins_then_the_real_clients() -> None:
    options = agent_choices(TARGET)
    ids = [o.id for o in options]
    submissions = sorted(p.name for p in (DEMO_TASK / "submissions").iterdir() if p.is_dir())
    assert ids[0] == "untouched"
    assert [i for i in ids if i and i.startswith("replay:")] == [
        f"replay:{name}" for name in submissions]
    assert COMMAND in ids
    clients = [o for o in options if o.id in ("claude-code", "codex", "mini-swe-agent")]
    assert len(clients) == 3 and not any(o.disabled for o in options)
    assert ids[-3:] == ["claude-code", "codex", "mini-swe-agent"]


def test_build_request_validates_every_field() -> None:
    ok = build_request(TARGET, "replay:reference", "", " m ", "", "90", "3")
    assert ok == LaunchRequest(DEMO_TASK.name, "replay:reference", 90.0, 3, "m", None)
    assert build_request(TARGET, None, "", "", "", "90", "1") == \
        "Agent: choose one from the list."
    assert "Command:" in str(build_request(TARGET, COMMAND, "  ", "", "", "90", "1"))
    bad_quote = build_request(TARGET, COMMAND, "echo 'open", "", "", "90", "1")
    assert isinstance(bad_quote, str) and bad_quote.startswith("Agent:")
    missing = build_request(TARGET, "replay:nope", "", "", "", "90", "1")
    assert isinstance(missing, str) and "this task has" in missing
    assert build_request(TARGET, "untouched", "", "", "", "0", "1") == \
        "Budget: must be more than 0 seconds."
    assert build_request(TARGET, "untouched", "", "", "", "-5", "1") == \
        "Budget: must be more than 0 seconds."
    assert "not a number" in str(build_request(TARGET, "untouched", "", "", "", "soon", "1"))
    assert build_request(TARGET, "untouched", "", "", "", "60", "0") == \
        "Repeats: between 1 and 20."
    assert "Model:" in str(build_request(TARGET, "claude-code", "", " ", "", "60", "1"))
    assert "Effort:" in str(build_request(TARGET, "codex", "", "m", "ultra", "60", "1"))
    real = build_request(TARGET, "claude-code", "", " sonnet ", "max", "60", "1")
    assert real == LaunchRequest(DEMO_TASK.name, "claude-code:sonnet", 60.0, 1, "sonnet", "max")
    command = build_request(TARGET, COMMAND, "make migrate", "", "high", "60", "1")
    assert isinstance(command, LaunchRequest)
    assert command.agent == "command:make migrate" and command.effort == "high"


def _app(settings: Settings, launched: list[LaunchRequest]) -> SrbApp:
    app = quiet_app(settings)
    app.launch = launched.append  # type: ignore[method-assign]  # record, do not run
    return app


async def _open_dialog(app: SrbApp, pilot: object) -> LaunchDialog:
    table = app.screen.query_one("#task-table")
    await until(pilot, lambda: table.row_count > 0, "the task table")  # type: ignore[attr-defined]
    await pilot.press("l")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, LaunchDialog), "the dialog")
    assert isinstance(app.screen, LaunchDialog)
    return app.screen


async def test_dialog_refuses_bad_input_inline_then_dismisses_with_request(
        builtin_settings: Settings) -> None:
    launched: list[LaunchRequest] = []
    app = _app(builtin_settings, launched)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await _open_dialog(app, pilot)
        assert dialog.target.task_id == DEMO_TASK.name
        budget = dialog.query_one("#launch-budget", Input)
        assert budget.value == "1800"  # the task's [agent].timeout_sec
        message = dialog.query_one("#launch-message", Static)
        assert not message.display

        dialog.select_agent(COMMAND)
        await pilot.pause()
        command = dialog.query_one("#launch-command", Input)
        assert command.display
        await pilot.press("ctrl+s")
        assert message.display and "Command:" in str(message.render())
        assert isinstance(app.screen, LaunchDialog)

        command.value = "bash -c 'echo hi'"
        budget.value = "0"
        await pilot.press("ctrl+s")
        assert "Budget: must be more than 0" in str(message.render())
        assert isinstance(app.screen, LaunchDialog) and launched == []

        budget.value = "45"
        dialog.query_one("#launch-repeats", Input).value = "2"
        dialog.query_one("#launch-model", Input).value = "none"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, LaunchDialog), "dismissal")
    assert launched == [LaunchRequest(DEMO_TASK.name, "command:bash -c 'echo hi'", 45.0, 2,
                                      "none", None)]


async def test_a_real_client_can_be_chosen_and_escape_launches_nothing(
        builtin_settings: Settings) -> None:
    launched: list[LaunchRequest] = []
    app = _app(builtin_settings, launched)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _open_dialog(app, pilot)
        agents = dialog.query_one("#launch-agent", OptionList)
        assert not agents.get_option("codex").disabled
        await pilot.press("end")
        assert dialog.chosen_agent == "mini-swe-agent"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, LaunchDialog), "dismissal")
    assert launched == []


async def test_launch_without_a_task_is_explained(tmp_path: Path) -> None:
    empty = tmp_path / "no-tasks"
    empty.mkdir()
    settings = Settings(task_roots=(empty,), state_dir=tmp_path / "state")
    app = create_app(settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        await pilot.pause()
        assert not isinstance(app.screen, LaunchDialog)
        assert any("Select a task" in n.message for n in app._notifications)
