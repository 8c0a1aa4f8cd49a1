"""The Run screen's log renders the colours tools write (npm, pytest, cargo), shows other
control characters as U+FFFD, and searches the text as shown, not the escapes."""

from __future__ import annotations

from rich.color import Color

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.widgets.log_view import LogView, render_body
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

RUN_ID = "r-20261129-120000-c010"
LINES = [
    ("stdout", "\x1b[1m\x1b[31mFAIL\x1b[0m tests/width.test.js"),
    ("stdout", "plain line"),
    ("stdout", "\x1b[32m✓\x1b[39m parses quotes \x07"),
    ("stderr", "\x1b[33mwarning\x1b[0m: unused import"),
]


def test_render_body_decodes_sgr_and_replaces_other_controls() -> None:
    fail = render_body(LINES[0][1])
    assert fail.plain == "FAIL tests/width.test.js"
    red = [s for s in fail.spans if not isinstance(s.style, str) and s.style.color]
    assert [(s.start, s.end) for s in red] == [(0, 4)]
    assert red[0].style.color.number == Color.parse("red").number  # type: ignore[union-attr]
    assert render_body(LINES[2][1]).plain == "✓ parses quotes \ufffd"
    # an escape the decoder does not know is shown, never passed to the terminal
    assert render_body("a\x1b!b").plain == "a\ufffd!b"
    assert render_body("no escapes", "red").plain == "no escapes"


async def _seed(settings: Settings) -> None:
    async with await Store.open(settings.db_path) as store:
        await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                    agent="replay:reference", budget_sec=60.0, run_id=RUN_ID)
        await store.runs.transition(RUN_ID, "preparing")
        await store.runs.transition(RUN_ID, "agent")
        await store.logs.append_log_lines(RUN_ID, [
            (f"2026-11-29T12:00:00.00000{n}000Z", stream, text)
            for n, (stream, text) in enumerate(LINES)
        ])
        await store.runs.transition(RUN_ID, "cancelled", "operator")


async def test_log_view_shows_colour_and_searches_shown_text(builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_run(RUN_ID)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run")
        log = app.screen.query_one("#run-log", LogView)
        await until(pilot, lambda: log.line_text(len(LINES)) is not None, "the log lines")
        row = log.visible_seqs().index(1)
        segments = list(log.render_line(row))
        text = "".join(s.text for s in segments)
        assert "FAIL tests/width.test.js" in text
        assert "\ufffd" not in text and "[31m" not in text
        fail = next(s for s in segments if s.text == "FAIL")
        assert fail.style is not None and fail.style.bold and fail.style.color is not None
        # "FAIL tests" spans a colour change in the stored text: found all the same
        log.search("FAIL tests")
        await until(pilot, lambda: log.cursor_seq == 1, "the search hit")
        log.search("warning: unused")
        await until(pilot, lambda: log.cursor_seq == 4, "the stderr hit")


async def test_store_search_matches_the_text_without_escapes(builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    async with await Store.open(builtin_settings.db_path) as store:
        hits = await store.logs.search_log(RUN_ID, "fail tests/")
        assert [h.seq for h in hits] == [1]
        assert hits[0].text == LINES[0][1]  # stored as written
        assert [h.seq for h in await store.logs.search_log(RUN_ID, "[31m")] == []
        back = await store.logs.search_log_backwards(RUN_ID, "warning: unused", before_seq=10)
        assert [h.seq for h in back] == [4]
        assert [h.seq for h in await store.logs.search_log(RUN_ID, "plain")] == [2]
