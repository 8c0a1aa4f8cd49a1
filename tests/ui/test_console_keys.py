"""The keys an operator reaches for while watching a run: `d` and `x` on the Run screen
(footer, palette, user keymap), a footer that shows the keys that matter first at 80
columns, and empty states that name the console's own keys. Real store, real Textual."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from srb_tui.config import Settings
from srb_tui.ui.app import KEYMAP_FILE, SrbApp
from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
from srb_tui.ui.screens.diff import DiffScreen
from srb_tui.ui.screens.run import FOOTER_FIRST as RUN_FIRST
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.runs import RunsScreen
from srb_tui.ui.widgets.footer import fit_bindings
from tests.ui.helpers import quiet_app, until
from tests.ui.test_run_screen import RUN_ID, seed_run


async def _open_run(app: SrbApp, pilot: object) -> RunScreen:
    app.open_run(RUN_ID)
    await until(pilot, lambda: isinstance(app.screen, RunScreen)
                and app.screen.detail is not None, "the Run screen")
    assert isinstance(app.screen, RunScreen)
    return app.screen


def _footer(app: SrbApp) -> list[tuple[str, str]]:
    return [(k.key_display, k.description) for k in app.screen.query(FooterKey)
            if not k.has_class("-command-palette")]


async def test_d_and_x_open_this_runs_diff_and_counterexamples(
    builtin_settings: Settings,
) -> None:
    await seed_run(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 34)) as pilot:
        run_screen = await _open_run(app, pilot)
        await until(pilot, lambda: ("d", "Diff") in _footer(app), "d in the footer")
        assert ("x", "Counterexamples") in _footer(app)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the Diff screen")
        assert app.screen.run_id == RUN_ID
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is run_screen, "back on the Run screen")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, CounterexamplesScreen),
                    "the Counterexamples screen")
        assert app.screen.run_id == RUN_ID
        await until(pilot, lambda: app.screen.records, "the run's candidates listed")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is run_screen, "back on the Run screen")
        # the palette lists the screen's own bindings: "Counterexamples" runs `x`
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"Counterexamples")
        await until(pilot, lambda: "Counterexamples" in str(
            app.screen.query_one("CommandList").get_option_at_index(0).prompt),
            "the binding offered")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CounterexamplesScreen),
                    "Counterexamples from the palette")


async def test_d_is_rebindable_by_id(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    (builtin_settings.state_dir / KEYMAP_FILE).write_text('"run.diff" = "D"\n')
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 34)) as pilot:
        run_screen = await _open_run(app, pilot)
        await until(pilot, lambda: ("D", "Diff") in _footer(app), "D in the footer")
        await pilot.press("d")  # the old key does nothing now
        await pilot.pause()
        assert app.screen is run_screen
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the Diff screen")


async def test_at_80_columns_the_footer_shows_the_run_keys_first_and_whole(
    builtin_settings: Settings,
) -> None:
    await seed_run(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_run(app, pilot)
        await until(pilot, lambda: _footer(app), "the footer")
        shown = [d for _, d in _footer(app)]
        assert shown[:4] == ["Back", "Diff", "Keys", "Counterexamples"], shown  # ? third
        keys = list(app.screen.query(FooterKey))
        palette = next(k for k in keys if k.has_class("-command-palette"))
        for key in keys:
            if key is not palette:  # every key whole, left of the palette key
                assert key.region.right <= palette.region.x, (key.description, key.region)
        # wide enough, every key shows in the screen's own order
        await pilot.resize_terminal(200, 24)
        await until(pilot, lambda: ("q", "Quit") in _footer(app), "the full footer")
        assert [d for _, d in _footer(app)][:3] == ["Back", "Follow", "Search"]
    assert RUN_FIRST[:3] == ("run.back", "run.diff", "run.counterexamples")


def test_fit_bindings_keeps_order_when_all_fit_and_priority_when_not() -> None:
    entries = [("a", 10), ("b", 10), ("c", 30), ("d", 10)]
    assert fit_bindings(entries, ("c",), 60) == [0, 1, 2, 3]
    assert fit_bindings(entries, ("c", "d"), 50) == [2, 3, 0]
    assert fit_bindings(entries, ("c",), 25) == [0, 1]  # c cannot fit: the small ones do


async def test_empty_runs_screen_names_the_keys_that_start_a_run(
    builtin_settings: Settings,
) -> None:
    builtin_settings.state_dir.mkdir(parents=True, exist_ok=True)
    (builtin_settings.state_dir / KEYMAP_FILE).write_text('"tasks.launch" = "L"\n')
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen)
                    and "No runs yet" in str(app.screen.query_one("#runs-message",
                                                                  Static).render()),
                    "the empty state")
        message = str(app.screen.query_one("#runs-message", Static).render())
        assert "press t for the task list" in message
        assert "press L to launch it" in message  # the keymap's key, not the default
        await pilot.press("t", "L")
        await until(pilot, lambda: type(app.screen).__name__ == "LaunchDialog",
                    "the launch dialog from the keys the empty state names")
