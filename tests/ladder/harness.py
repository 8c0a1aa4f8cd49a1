"""The demo01 ladder the ladder and integrity tests share: a real engine, the demo's stage
images built once, State A, a private store, and a helper that grades a run of one
submission (each only once).

The ``ladder`` fixture is session-scoped and registered in tests/conftest.py (not in a
conftest of this folder, which would make a second instance for tests/ladder): the honest
`wrong` and `subtle` gradings that tests/integrity compares its hostile trees with are the
same runs tests/ladder/test_ladder.py asserts on, graded once per session, not once per
module. Every test that grades something of its own (``Ladder.grade``) still gets a run of
its own.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import Task, load_task
from srb_tui.scoring import ScoreEnvelope
from srb_tui.service.grading.ladder import LadderContext, grade_run
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

from ..conftest import DEMO_TASK

BASE_IMAGE = "srb/base:bookworm"
ADVERSARY_BUDGET_SEC = 15.0
SUBMISSIONS = DEMO_TASK / "submissions"


@dataclass
class Graded:
    """One graded run: its id, folder, score envelope and the events published."""

    run_id: str
    run_dir: Path
    envelope: ScoreEnvelope
    events: list[object] = field(default_factory=list)


@dataclass
class Ladder:
    engine: DockerEngine
    store: Store
    task: Task
    state_a: Path
    root: Path
    cache: dict[str, Graded] = field(default_factory=dict)

    async def new_run(self, task: Task | None = None) -> str:
        task = task or self.task
        run = await self.store.runs.create_run(
            task_id=task.id, task_path=str(task.dir), agent="replay"
        )
        for status in ("preparing", "agent", "collecting"):
            await self.store.runs.transition(run.id, status)
        return run.id

    async def grade(
        self,
        submission: Path,
        *,
        task: Task | None = None,
        run_id: str | None = None,
        adversary_budget_sec: float = ADVERSARY_BUDGET_SEC,
        **kwargs: Any,
    ) -> Graded:
        run_id = run_id or await self.new_run(task)
        events: list[object] = []
        ctx = LadderContext(
            store=self.store,
            engine=self.engine,
            task=task or self.task,
            run_id=run_id,
            submission_dir=submission,
            original_dir=self.state_a,
            run_dir=self.root / "runs" / run_id,
            base_image=BASE_IMAGE,
            publish=events.append,
            adversary_budget_sec=adversary_budget_sec,
        )
        envelope = await grade_run(ctx, **kwargs)
        return Graded(run_id, ctx.run_dir, envelope, events)

    async def submission(self, name: str) -> Graded:
        """The demo submission ``name`` graded once (later calls reuse the result)."""
        if name not in self.cache:
            self.cache[name] = await self.grade(SUBMISSIONS / name)
        return self.cache[name]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def ladder(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Ladder]:
    root = tmp_path_factory.mktemp("ladder")
    load = load_task(DEMO_TASK)
    assert load.task is not None and load.ok, load.problems
    task = load.task
    state_a = prepare_state_a(DEMO_TASK, task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(4))
    info = await engine.ping()
    assert info.ok, info.error
    images = StageImages(engine, task, BASE_IMAGE, lambda event: None)
    for stage in ("audit", "behavioural", "verification"):
        await images.get(stage)  # built once here; every grading below finds them unchanged
    store = await Store.open(root / "srb.sqlite3")
    try:
        yield Ladder(engine, store, task, state_a, root)
    finally:
        await store.close()
        engine.close()


GradeOnce = Callable[[str], Awaitable[Graded]]


def copy_task(source: Path, dest: Path) -> Path:
    """A private copy of a task folder (without its six submissions)."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("submissions", "__pycache__"))
    return dest
