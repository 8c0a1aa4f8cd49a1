"""A strength survivor's Stage III is recorded as the ladder records its stages: through
``stage_record.persist_stage`` (the envelope in the run folder, the stage row with the
grader fingerprint, the run's provenance stamp, a ``stage_finished`` event, StageFinished on
the bus). The panel itself is a stand-in here (no engine): what is pinned is the path from
``grade_survivor`` to the record, and that the panel grades the mutated copy.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, cast

import pytest

from srb_tui.grader.fingerprint import fingerprint
from srb_tui.runner import DockerEngine
from srb_tui.schema import load_task
from srb_tui.service.events import StageFinished
from srb_tui.service.grading import stage_record, strength_stage_iii
from srb_tui.service.grading.stages.common import StageImages, StageOutcome
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.service.provenance import record_launch
from srb_tui.store import Store
from srb_tui.store.provenance import Provenance
from srb_tui.strength.mutate import Mutant

from ..conftest import DEMO_TASK

PATH, BEFORE, AFTER = "csvtab/cli.py", 'sys.stderr.write(f"csvtab: ', 'sys.stderr.write(f"CSVTAB: '


class _Panel:
    """Stands in for Stage III: notes the trees it was given and answers an ok outcome."""

    name = "verification"

    def __init__(self) -> None:
        self.seen: list[tuple[Path, str]] = []

    async def run(self, ctx: StageContext) -> StageOutcome:
        self.seen.append((ctx.original, (ctx.submission / PATH).read_text()))
        return StageOutcome(
            stage="verification", status="ok", adversaries={"fuzz": "broken", "m": "survived"},
            envelope={"stage": "verification", "status": "ok", "duration_sec": 2.5,
                      "started_at": "2026-12-06T20:00:00Z",
                      "harness": {"fingerprint": fingerprint()}})  # fmt: skip


async def test_a_survivors_stage_iii_is_recorded_through_persist_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load = load_task(DEMO_TASK)
    assert load.task is not None, load.problems
    task = load.task
    state_a = tmp_path / "state-a"
    shutil.copytree(DEMO_TASK / "submissions" / "untouched", state_a)
    text = (state_a / PATH).read_text()
    start = text.encode().index(BEFORE.encode())
    mutant = Mutant("m001", "hand-m001", PATH, text[:start].count("\n") + 1, 1, "string-case",
                    "python", start, start + len(BEFORE.encode()), BEFORE, AFTER)
    panel = _Panel()
    monkeypatch.setattr(strength_stage_iii, "VERIFICATION", panel)
    persisted: list[str] = []
    persist = stage_record.persist_stage

    async def spy(ctx: StageContext, outcome: StageOutcome, path: Path) -> None:
        persisted.append(outcome.stage)
        await persist(ctx, outcome, path)

    monkeypatch.setattr(strength_stage_iii, "persist_stage", spy)
    heard: list[object] = []
    engine = cast(DockerEngine, None)  # the stand-in panel never reaches an engine
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id=task.id, task_path=str(task.dir),
                                          agent="mutant:c1/m001")
        await record_launch(store, run, task, client=None, client_version=None,
                            backend="local")
        ctx = StageContext(
            engine=engine, store=store, run_id=run.id, task=task, original=state_a,
            submission=state_a, images=StageImages(engine, task, "unused", heard.append),
            publish=heard.append, run_dir=tmp_path / "runs" / run.id)  # fmt: skip
        catches = await strength_stage_iii.grade_survivor(ctx, mutant)

        assert catches == {"fuzz": ("broken", None), "m": ("survived", None)}
        # the panel graded a mutated copy; State A itself is untouched
        assert panel.seen == [(state_a, text.replace(BEFORE, AFTER, 1))]
        assert (state_a / PATH).read_text() == text
        assert persisted == ["verification"]
        assert (tmp_path / "runs" / run.id / "verification.json").is_file()
        rows = await store.grading.stage_results(run.id)
        assert [(r.stage, r.status, r.fingerprint, r.duration_sec) for r in rows] == [
            ("verification", "ok", fingerprint(), 2.5)]
        found = Provenance.read((await store.runs.require_run(run.id)).extra)
        assert found is not None
        assert found.stages["verification"].grader_fingerprint == fingerprint()
        events = [e for e in await store.infra.events(run.id) if e.kind == "stage_finished"]
        payload: dict[str, Any] = events[0].payload
        assert len(events) == 1 and payload["stage"] == "verification"
        assert payload["adversaries"] == {"fuzz": "broken", "m": "survived"}
        finished = [e for e in heard if isinstance(e, StageFinished)]
        assert [(e.stage, e.status) for e in finished] == [("verification", "ok")]
        assert [t.to_status for t in await store.runs.transitions(run.id)] == [
            "pending", "verification", "scored"]
