"""Toasts show srb's text as written (issue 35, item 6): a config error names the table in
brackets, and console markup used to eat it ("config.toml: : unknown table (did you mean
?)")."""

from __future__ import annotations

from textual.content import Content

from srb_tui.config import Settings
from tests.ui.helpers import quiet_app

PROBLEM = "config.toml: [gatway]: unknown table (did you mean [gateway]?)"


def shown(message: str, markup: bool) -> str:
    """The text a Toast renders for a notification (textual's Toast.render)."""
    return (Content.from_markup(message) if markup else Content(message)).plain


async def test_a_toast_keeps_bracketed_names(builtin_settings: Settings) -> None:
    assert "[gatway]" not in shown(PROBLEM, True), "console markup eats the table's name"
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        app.screen.notify(PROBLEM, title="gateway", severity="error")  # markup=True default
        app.notify("a[0] and [b]bold[/b]", title="[runs]")
        await pilot.pause()
        told = list(app._notifications)
        assert [shown(n.message, n.markup) for n in told] == [PROBLEM, "a[0] and [b]bold[/b]"]
        assert [n.title for n in told] == ["gateway", "[runs]"]
