"""The srb console: one Textual app whose screens are modes (Tasks, Runs).

``create_app`` is the single factory used by the CLI, the tests and the screenshot
script, so all three see the same application.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from srb_tui.config import Settings
from srb_tui.service.catalog import Catalog
from srb_tui.ui.commands import BindingsProvider, GoToProvider
from srb_tui.ui.console_service import ConsoleService, LaunchRequest
from srb_tui.ui.keymap import read_keymap
from srb_tui.ui.screens.campaign import CampaignScreen  # reports branch
from srb_tui.ui.screens.nodes import NodesScreen
from srb_tui.ui.screens.reports import ReportsScreen  # reports branch
from srb_tui.ui.screens.runs import RunsScreen
from srb_tui.ui.screens.strength import StrengthScreen
from srb_tui.ui.screens.tasks import TasksScreen

KEYMAP_FILE = "keymap.toml"


class SrbApp(App[None]):
    """Operator console for SWE Refactor Bench-style runs."""

    TITLE = "srb"
    SUB_TITLE = "SWE Refactor Bench console"
    CSS_PATH = "srb.tcss"
    DEFAULT_MODE = "tasks"
    COMMANDS = App.COMMANDS | {GoToProvider, BindingsProvider}
    BINDINGS = [
        Binding("t", "go('tasks')", "Tasks", id="app.tasks", tooltip="Show the task list"),
        Binding("r", "go('runs')", "Runs", id="app.runs", tooltip="Show run history"),
        Binding("m", "go('campaign')", "Campaign", id="app.campaign",
                tooltip="Show a campaign's matrix of tasks × configurations"),
        Binding("b", "go('reports')", "Reports", id="app.reports",
                tooltip="Show the paper's tables over a campaign or any runs"),
        Binding("h", "go('nodes')", "Nodes", id="app.nodes", show=False,
                tooltip="Show the engines (nodes) runs are placed on: health, capacity, runs"),
        Binding("i", "go('strength')", "Strength", id="app.strength", show=False,
                tooltip="Show how strong each task's instrument is: mutants of State A "
                        "against the suite and the adversary panel"),
        Binding("question_mark", "toggle_keys", "Keys", id="app.keys",
                tooltip="Show or hide this screen's keys (Esc hides them too)"),
        # Esc hides the keys panel first; with no panel open it falls through to the
        # screen's own Esc (check_action says no), so Back and Clear keep working.
        Binding("escape", "hide_keys", "Hide keys", id="app.keys_hide", show=False,
                priority=True),
        Binding(
            "ctrl+t", "toggle_theme", "Theme", id="app.theme", show=False,
            tooltip="Switch between the light and dark theme",
        ),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Leave the console"),
    ]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast, its text always shown as written (``markup`` is ignored: screens and
        widgets pass True by default): srb's messages quote config tables, paths and
        program output (``[gatway]``, ``a[0]``), which console markup would eat
        ("config.toml: : unknown table (did you mean ?)"); none of them is markup."""
        del markup
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def __init__(self, settings: Settings, catalog: Catalog | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.keymap_problem: str | None = None
        self.user_keymap: dict[str, str] = {}
        self.run_host = ConsoleService(self, settings, catalog=catalog)
        # The modes' screens get what they use, instead of reaching back into the app.
        host = self.run_host
        self.add_mode("tasks", lambda: TasksScreen(host))
        self.add_mode("runs", lambda: RunsScreen(host, self.key_of))
        self.add_mode("campaign", lambda: CampaignScreen(host))
        self.add_mode("reports", lambda: ReportsScreen(host, self.key_of))
        self.add_mode("nodes", lambda: NodesScreen(host))
        self.add_mode("strength", lambda: StrengthScreen(host))

    @property
    def catalog(self) -> Catalog:
        return self.run_host.catalog

    def reload_catalog(self) -> Catalog:
        return self.run_host.reload_catalog()

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        self._apply_user_keymap()
        self.run_host.start()

    async def on_unmount(self) -> None:
        await self.run_host.close()

    def action_go(self, mode: str) -> None:
        """The place a key names, from anywhere: its mode, at the place's own screen (Tasks,
        Runs, ...), never at a Run or Counterexamples screen left open in that mode earlier
        (``t`` on Runs used to show an old Counterexamples screen, and ``t`` there did
        nothing). The mode being left is popped back to its place too, so no Run screen
        lingers (following its run) where nobody sees it. The pops are not awaited: this
        runs inside the key's dispatch, which the popped screen's removal would wait for."""
        for _ in range(len(self.screen_stack) - 1):
            self.pop_screen()
        if self.current_mode != mode:
            self.switch_mode(mode)
            for _ in range(len(self.screen_stack) - 1):
                self.pop_screen()

    def open_run(self, run_id: str) -> None:
        """Show the Run screen of ``run_id`` on top of the current screen."""
        from srb_tui.ui.screens.run import RunScreen

        self.push_screen(RunScreen(self.run_host, run_id))

    def launch(self, request: LaunchRequest) -> None:
        """Launch the request's run(s) in workers and open the first one."""
        self.run_host.launch(request, lambda runs: self.open_run(runs[0].id))

    def on_tasks_screen_launch(self, message: TasksScreen.Launch) -> None:
        self.launch(message.request)

    def _apply_user_keymap(self) -> None:
        """Rebind keys from ``<state>/keymap.toml`` (``binding-id = "key[,key]"``)."""
        path = self.settings.state_dir / KEYMAP_FILE
        keymap, problem = read_keymap(path)
        self.keymap_problem = problem
        self.user_keymap = keymap
        if problem:
            self.notify(problem, title="keymap", severity="warning", timeout=8)
        if keymap:
            self.set_keymap(keymap)

    def key_of(self, binding_id: str, default: str) -> str:
        """The key shown for a binding, after the user keymap (its first key)."""
        keys = self.user_keymap.get(binding_id, default).split(",")[0].strip() or default
        return self.get_key_display(Binding(keys, ""))

    def keys_shown(self) -> bool:
        """Whether the keys panel (Textual's help panel) is open on the current screen."""
        return bool(self.screen.query("HelpPanel"))

    def action_toggle_keys(self) -> None:
        if self.keys_shown():
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_show_help_panel(self) -> None:
        """srb's keys panel (the screen's own keys first: ``widgets/keys_panel.py``)."""
        from srb_tui.ui.widgets.keys_panel import KeysPanel

        if not self.keys_shown():
            self.screen.mount(KeysPanel())

    def action_hide_keys(self) -> None:
        self.action_hide_help_panel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "hide_keys":
            return self.keys_shown()
        return True

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands (its "Keys" replaced by srb's, which "help" finds too), then
        the console's places, each with its key."""
        for command in super().get_system_commands(screen):
            if command.title != "Keys":
                yield command

        def keyed(binding_id: str, default: str, text: str) -> str:
            return f"{self.key_of(binding_id, default)} · {text}"

        shown = bool(screen.query("HelpPanel"))
        yield SystemCommand(
            "Keys · help",
            keyed("app.keys", "?", "Hide the keys panel" if shown
                  else "Show this screen's keys and what the focused part does"),
            self.action_toggle_keys)
        yield SystemCommand("Tasks", keyed("app.tasks", "t", "Go to the task list"),
                            lambda: self.action_go("tasks"))
        yield SystemCommand("Runs", keyed("app.runs", "r", "Go to the run history"),
                            lambda: self.action_go("runs"))
        yield SystemCommand("Campaign", keyed("app.campaign", "m", "Go to the campaign matrix"),
                            lambda: self.action_go("campaign"))
        yield SystemCommand("Reports", keyed("app.reports", "b", "Go to the paper's tables"),
                            lambda: self.action_go("reports"))
        yield SystemCommand("Nodes", keyed("app.nodes", "h", "Go to the engines runs run on"),
                            lambda: self.action_go("nodes"))
        yield SystemCommand("Strength", keyed("app.strength", "i", "Go to the instrument "
                                              "strength of tasks (mutants × suite × panel)"),
                            lambda: self.action_go("strength"))
        yield SystemCommand("Toggle theme", keyed("app.theme", "ctrl+t", "Light or dark"),
                            self.action_toggle_theme)


def create_app(settings: Settings, catalog: Catalog | None = None) -> SrbApp:
    """Build the console for these settings (shared by CLI, tests, screenshots)."""
    return SrbApp(settings, catalog)
