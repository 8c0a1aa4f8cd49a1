"""The one grading path end to end on a real Docker engine: the composition root builds
the service, ``drive(grade=True)`` takes the demo's faithful rewrite from launch to a
score, and ``regrade`` grades one stage of the stored run again (Stage I; the others are
read back from their stored results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.config import Settings
from srb_tui.runner import list_managed
from srb_tui.service.app import open_service
from srb_tui.service.events import RunFinished, StageFinished
from srb_tui.service.views.runs_table import RunFilter, funnel_over, stage_marks
from tests.conftest import BUILTIN_TASKS, DEMO_TASK

pytestmark = pytest.mark.docker

ADVERSARY_BUDGET_SEC = 10.0  # a quick look: the faithful rewrite survives it either way


async def test_drive_grades_the_reference_to_100_and_regrade_keeps_it(tmp_path: Path) -> None:
    settings = Settings(task_roots=(BUILTIN_TASKS,), state_dir=tmp_path / "state")
    async with open_service(settings) as core:
        service = await core.runs()
        run = await service.launch(DEMO_TASK.name, "replay:reference", budget_sec=300)
        async with core.bus.subscribe() as queue:
            done = await service.drive(run.id, grade=True,
                                       adversary_budget_sec=ADVERSARY_BUDGET_SEC)
            events = []
            while not queue.empty():
                events.append(queue.get_nowait())
        assert done.status == "scored", done.harness_error
        assert done.valid is True
        assert (done.score, done.max_score) == (100.0, 100.0)
        stages = [e.stage for e in events if isinstance(e, StageFinished)]
        assert stages == ["audit", "behavioural", "verification"]
        finished = [e for e in events if isinstance(e, RunFinished)]
        assert [(e.status, e.score) for e in finished] == [("scored", 100.0)]

        store = await core.store()
        detail = await store.run_detail(run.id)
        assert {s.stage: s.status for s in detail.stage_results} == {
            "audit": "ok", "behavioural": "ok", "verification": "ok"}
        assert (settings.run_dir(run.id) / "score.json").is_file()

        # Stage I again (the quick stage: Stage II again would add its two minutes and no
        # other path); Stages II and III are read back from their stored results
        first = {s.stage: s.started_at for s in detail.stage_results}
        graded = await service.regrade(run.id, ["audit"])
        assert graded.run.status == "scored" and graded.run.score == 100.0
        assert graded.envelope.score == 100.0
        again = {s.stage: s.started_at for s in (await store.run_detail(run.id)).stage_results}
        assert again["audit"] != first["audit"]  # re-run, not re-read
        assert again["behavioural"] == first["behavioural"]
        assert again["verification"] == first["verification"]
        # the Runs screen's marks and funnel come from the store, not from score.json
        (settings.run_dir(run.id) / "score.json").unlink()
        marks = await stage_marks(store, [graded.run])
        assert marks[run.id].text == "✓ ✓ ✓"
        summary = await funnel_over(store, RunFilter())
        f = summary.funnel
        assert (f.runs, f.valid, f.migrated, f.all_tests_pass, f.blindness) == (1, 1, 1, 1, 0)
        assert await list_managed(core.engine, run.id) == []
