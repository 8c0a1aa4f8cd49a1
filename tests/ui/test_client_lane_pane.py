"""The Verification tab shows a client lane's transcript, time to counterexample and cost
(issue 25), from the lane's stored record (the store is real; nothing runs)."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from tests.conftest import DEMO_TASK
from tests.ui import helpers

TAIL = ["Bash: ls /srb/original /workspace/repo", "Bash: try_test caret.sh",
        "try_test #1: original pass, submission fail", "report: control characters differ"]


@pytest.mark.parametrize("status", ["running", "broken"])
async def test_a_client_lane_shows_its_transcript_and_cost(
    builtin_settings: Settings, status: str
) -> None:
    builtin_settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:subtle", budget_sec=60.0)
        extra = {"transcript_tail": TAIL}
        if status == "broken":
            extra |= {"time_to_counterexample_sec": 16.2, "requests": 6, "cost_usd": 0.0123}
        await store.grading.record_adversary_round(
            run.id, "cc-verify", status=status, model="standin-verify", driver="claude-code",
            focus="control characters", started_at="2026-12-02T19:00:00Z",
            duration_sec=None if status == "running" else 16.2, candidates=1, notes=[],
            extra=extra)
    app = helpers.quiet_app(builtin_settings)
    async with app.run_test(size=(150, 45)) as pilot:
        app.open_run(run.id)
        await helpers.until(pilot, lambda: isinstance(app.screen, RunScreen)
                            and app.screen.detail is not None, "the Run screen")
        await pilot.press("5")

        def shown() -> str:
            return str(app.screen.query_one("#verif-candidates-title", Static).render())

        await helpers.until(pilot, lambda: "try_test #1" in shown(), "the lane's transcript")
        text = shown()
        assert all(line in text for line in TAIL), text
        if status == "broken":
            assert "counterexample after" in text and "6 model request(s), $0.0123" in text
        else:
            assert "model request" not in text
