"""Stage II of mutants of demo01's State A (issue 36), in the identity run's image on the
real engine: a change of the table's border is killed and names a failing check, a change
of the usage line's wording on stderr (which the suite does not price) survives, and a
mutant that stops every invocation is invalid. The stage images are built once for all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.strength_stage import grade_mutant_stage_ii
from srb_tui.sources import prepare_state_a
from srb_tui.strength.mutate import Mutant

from ..conftest import DEMO_TASK
from ..ladder.harness import BASE_IMAGE


class Setup(NamedTuple):
    engine: DockerEngine
    task: Task
    state_a: Path
    images: StageImages


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    root = tmp_path_factory.mktemp("strength")
    load = load_task(DEMO_TASK)
    assert load.task is not None, load.problems
    state_a = prepare_state_a(DEMO_TASK, load.task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(2))
    try:
        yield Setup(engine, load.task, state_a, StageImages(engine, load.task, BASE_IMAGE,
                                                            lambda event: None))
    finally:
        engine.close()


def _by_hand(state_a: Path, mid: str, path: str, before: str, after: str) -> Mutant:
    """A mutant at the first place ``before`` occurs in ``path`` (hand-chosen, so the
    expected outcome is known)."""
    data = (state_a / path).read_bytes()
    start = data.index(before.encode())
    line = data[:start].count(b"\n") + 1
    return Mutant(mid, f"hand-{mid}", path, line, 1, "string-case", "python", start,
                  start + len(before.encode()), before, after)


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_killed_survived_and_invalid_mutants(setup: Setup) -> None:
    engine, task, state_a, images = setup
    border = _by_hand(state_a, "m001", "csvtab/render.py", '"|")', '"!")')
    usage = _by_hand(state_a, "m002", "csvtab/cli.py", "usage: csvtab", "USAGE: CSVTAB")
    broken = _by_hand(state_a, "m003", "csvtab/cli.py", "import sys", "import sys_")
    got = {m.id: await grade_mutant_stage_ii(engine, task, state_a, m, images,
                                             publish=lambda event: None)
           for m in (border, usage, broken)}
    assert got["m001"].outcome == "killed", got["m001"]
    assert got["m001"].failing and all("::" in name for name in got["m001"].failing)
    assert got["m002"].outcome == "survived", got["m002"]
    assert got["m002"].passed == got["m002"].scored > 0
    assert got["m003"].outcome == "invalid", got["m003"]
    # State A itself is untouched by the mutants' copies
    assert b'"|")' in (state_a / "csvtab/render.py").read_bytes()


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_campaign_grades_once_resumes_without_regrading_and_scores(
        setup: Setup, tmp_path: Path) -> None:
    from srb_tui.service import strength
    from srb_tui.store import Store

    engine, task, state_a, _images = setup
    hand = [_by_hand(state_a, "m001", "csvtab/render.py", '"|")', '"!")'),
            _by_hand(state_a, "m002", "csvtab/cli.py", "usage: csvtab", "USAGE: CSVTAB")]
    store = await Store.open(tmp_path / "srb.sqlite3")
    try:
        campaign, added = await strength.plan(store, task, state_a, asked=2, seed=0,
                                              mutants=hand)
        assert added == 2 and len(campaign.panel) == 6
        seen: list[tuple[str, str]] = []
        graded = await strength.grade_stage_ii(
            store, engine, task, state_a, campaign.id, base_image=BASE_IMAGE,
            on_mutant=lambda row, outcome: seen.append((row.mutant_id, outcome)))
        assert graded == 2 and seen == [("m001", "killed"), ("m002", "survived")]
        # resumed: the plan is there whole and nothing finished is graded again
        again, added = await strength.plan(store, task, state_a, asked=2, seed=0, mutants=hand)
        assert added == 0 and again.id == campaign.id
        assert await strength.grade_stage_ii(store, engine, task, state_a, campaign.id,
                                             base_image=BASE_IMAGE) == 0
        got = await strength.campaign_figures(store, campaign.id)
        assert (got.valid, got.killed, got.suite_score, got.survivors) == (2, 1, 0.5, ["m002"])
        # the author marks the survivor equivalent: the suite score counts only m001
        await store.strength.mark_equivalent(task.id, hand[1].key, by="test",
                                             reason="stderr wording is out of scope")
        got = await strength.campaign_figures(store, campaign.id)
        assert (got.equivalent, got.valid, got.suite_score) == (1, 1, 1.0)
        assert (await store.strength.campaign(campaign.id)).status == "done"  # type: ignore[union-attr]
    finally:
        await store.close()
