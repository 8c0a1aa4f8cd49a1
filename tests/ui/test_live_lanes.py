"""Live Stage III lanes on the Run screen, on the real engine and the real store.

The demo's `subtle` submission is graded again (Stage III only, forced, a short adversary
budget): fuzzers that find the break stop early while the survivors fuzz to their budget,
so a lane that ended must show its outcome, elapsed time and candidates while the others
still say ``running`` — each round is stored as it ends, not after all six.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest
from rich.text import Text
from textual.widgets import DataTable

from srb_tui.config import Settings
from srb_tui.service.verification_events import AdversaryRoundEnded
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from tests.conftest import DEMO_TASK
from tests.ui import helpers

pytestmark = pytest.mark.docker
BUDGET_SEC = 20.0


async def _collected_run(settings: Settings, submission: str) -> str:
    """A run of the demo task whose submission is collected (as after the agent phase)."""
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with await Store.open(settings.db_path) as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent=f"replay:{submission}", budget_sec=60.0)
        for status in ("preparing", "agent", "collecting"):
            await store.runs.transition(run.id, status)
    shutil.copytree(DEMO_TASK / "submissions" / submission, settings.submission_dir(run.id))
    return run.id


def _lanes(app: object) -> dict[str, tuple[str, str, str]]:
    """adversary id -> (outcome, elapsed, candidates) as the Verification tab shows them."""
    screen = getattr(app, "screen", None)
    if not isinstance(screen, RunScreen):
        return {}
    table = screen.query_one("#verif-lanes", DataTable)
    lanes = {}
    for row in table.ordered_rows:
        cells = [c.plain if isinstance(c, Text) else str(c) for c in table.get_row(row.key)]
        lanes[str(row.key.value)] = (cells[1], cells[3], cells[2])
    return lanes


async def test_a_lane_that_ends_first_shows_broken_while_the_others_run(
    builtin_settings: Settings,
) -> None:
    run_id = await _collected_run(builtin_settings, "subtle")
    app = helpers.quiet_app(builtin_settings)
    async with app.run_test(size=(150, 45)) as pilot:
        app.open_run(run_id)
        await helpers.until(pilot, lambda: isinstance(app.screen, RunScreen)
                            and app.screen.detail is not None, "the Run screen")
        await pilot.press("5")
        service = await app.run_host.service()
        ended: list[AdversaryRoundEnded] = []

        async def watch() -> None:
            async with app.run_host.bus.subscribe() as queue:
                while True:
                    event = await queue.get()
                    if isinstance(event, AdversaryRoundEnded) and event.run_id == run_id:
                        ended.append(event)

        watcher = asyncio.create_task(watch())
        grading = asyncio.create_task(service.regrade(
            run_id, ("verification",), force=True, adversary_budget_sec=BUDGET_SEC))
        seen: dict[str, tuple[str, str, str]] = {}

        def one_broken_others_running() -> bool:
            nonlocal seen
            seen = _lanes(app)
            outcomes = [lane[0] for lane in seen.values()]
            return "broken" in outcomes and "running" in outcomes

        await helpers.until(pilot, one_broken_others_running,
                            "a broken lane beside running ones", timeout=240)
        broken = {k: v for k, v in seen.items() if v[0] == "broken"}
        running = {k: v for k, v in seen.items() if v[0] == "running"}
        assert len(seen) == 6 and running, seen
        for _outcome, elapsed, candidates in broken.values():
            assert elapsed not in ("", "—") and int(candidates) >= 1, seen
        # the event came with the store's record: the lane's counterexample is there too
        assert {e.adversary_id for e in ended} >= set(broken), (ended, broken)
        store = await app.run_host.store()
        recorded = {c.adversary_id for c in await store.grading.counterexamples(run_id)}
        assert set(broken) <= recorded
        await helpers.until(pilot, grading.done, "the re-grade to end", timeout=240)
        grading.result()
        await helpers.until(pilot, lambda: all(v[0] in ("broken", "survived")
                                               for v in _lanes(app).values()),
                            "every lane to end on screen")
        assert len(ended) == 6
        watcher.cancel()
