"""The Run screen's Transcript tab (Pilot, real store): stored rounds and events of a real
client's session, then live events from the console's bus."""

from __future__ import annotations

import time

from textual.widgets import TabbedContent

from srb_tui.config import Settings
from srb_tui.service.agent_events import AgentRoundFinished, AgentRoundStarted, AgentTranscript
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.widgets.transcript import TranscriptView
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app

RUN_ID = "r-20261201-100000-cc01"
TS = "2026-12-01T10:00:00.000000000Z"


async def _seed(settings: Settings) -> None:
    async with await Store.open(settings.db_path) as store:
        await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                    agent="claude-code:standin-migrate", budget_sec=600.0,
                                    run_id=RUN_ID, model="standin-migrate")
        await store.runs.transition(RUN_ID, "preparing")
        await store.runs.transition(RUN_ID, "agent")
        await store.agent.start_agent_round(RUN_ID, 1, prompt_kind="instruction", first_log_seq=0)
        await store.agent.append_agent_events(RUN_ID, 1, [
            (TS, "session", {"session_id": "sess-1"}),
            (TS, "tool_call", {"id": "t1", "name": "Bash", "input": {"command": "ls -la"}}),
            (TS, "tool_result", {"id": "t1", "output": "README.md\nbin\ncsvtab",
                                       "is_error": False}),
            (TS, "message", {"text": "Porting now."}),
            (TS, "tool_call", {"id": "t2", "name": "Bash", "input": {"command": "seq 250"}}),
            (TS, "tool_result", {"id": "t2", "output": "\n".join(map(str, range(1, 251))),
                                       "is_error": False}),
        ])
        await store.agent.finish_agent_round(RUN_ID, 1, exit_code=0, verdict="changed the tree",
                                             input_tokens=1200, output_tokens=80,
                                             client_cost_usd=0.0123)


def _labels(view: TranscriptView) -> list[str]:
    out: list[str] = []

    def walk(node: object) -> None:
        for child in node.children:  # type: ignore[attr-defined]
            out.append(str(child.label))
            walk(child)

    walk(view.root)
    return out


async def test_transcript_tab_shows_stored_rounds_then_live_events(
        builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    app = quiet_app(builtin_settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(120, 36)) as pilot:
        app.open_run(RUN_ID)
        deadline = time.monotonic() + 10
        while not (isinstance(app.screen, RunScreen) and app.screen.detail is not None):
            assert time.monotonic() < deadline, "the run never loaded"
            await pilot.pause(0.02)
        await pilot.press("2")
        screen = app.screen
        assert screen.query_one("#run-tabs", TabbedContent).active == "tab-transcript"
        view = screen.query_one("#run-transcript", TranscriptView)
        labels = _labels(view)
        assert any("Round 1" in lb and "1,280 tokens" in lb and "changed the tree" in lb
                   for lb in labels)
        assert any("Bash ls -la" in lb for lb in labels)
        assert any("3 line(s) of output" in lb for lb in labels)
        assert any("250 line(s) of output" in lb for lb in labels)
        assert "200" in labels and "201" not in labels  # the first 200 lines shown…
        assert any(lb.startswith("… 50 more line(s)") for lb in labels)  # …and the rest named
        tool = next(n for n in view.root.children[0].children if "Bash" in str(n.label))
        assert not tool.is_expanded  # output folded under the call
        bus = app.run_host.bus
        bus.publish(AgentRoundStarted(RUN_ID, 2, "continue"))
        bus.publish(AgentTranscript(RUN_ID, 2, (
            (1, TS, "message", {"text": "Done.\nSRB_TASK_COMPLETE"}),)))
        bus.publish(AgentRoundFinished(RUN_ID, 2, "idle", 0, {"input": 500, "output": 5},
                                       0.001))
        deadline = time.monotonic() + 10
        while view.rounds < 2 or not any("505 tokens" in lb for lb in _labels(view)):
            assert time.monotonic() < deadline, f"live events not shown: {_labels(view)}"
            await pilot.pause(0.02)
        assert any("SRB_TASK_COMPLETE" in lb for lb in _labels(view))


async def test_a_run_without_transcript_says_why_until_a_round_starts(
        builtin_settings: Settings) -> None:
    from textual.widgets import Static

    from tests.ui.helpers import quiet_app, until

    async with await Store.open(builtin_settings.db_path) as store:
        await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                    agent="replay:subtle", budget_sec=600.0, run_id=RUN_ID)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 36)) as pilot:
        app.open_run(RUN_ID)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run")
        await pilot.press("2")
        note = app.screen.query_one("#run-transcript-empty", Static)
        assert note.display and "No transcript for replay:subtle" in str(note.render())
        app.run_host.bus.publish(AgentRoundStarted(RUN_ID, 1, "instruction"))
        await until(pilot, lambda: not note.display, "the note to give way to the rounds")
