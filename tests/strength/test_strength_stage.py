"""Stage II of mutants of demo01's State A (issue 36), in the identity run's image on the
real engine: a change of the table's border is killed and names a failing check, control
characters printed raw (no fixed check carries one) survives, and a
mutant that stops every invocation is invalid. The stage images are built once for all."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.strength_baseline import grade_baseline
from srb_tui.service.grading.strength_stage import grade_mutant_stage_ii
from srb_tui.sources import prepare_state_a
from srb_tui.store.provenance import Provenance
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


def _control(state_a: Path, mid: str) -> Mutant:
    """demo01's known weak spot: C0 control characters printed raw instead of in caret
    notation. No fixed check carries such a byte (the built-in `subtle` submission makes
    the same change and passes Stage II); a fuzz adversary finds it in a few flips."""
    return _by_hand(state_a, mid, "csvtab/width.py", 'elif char < " " or char == "\\x7f":',
                    "elif False:")


def _stderr_wording(state_a: Path, mid: str) -> Mutant:
    """A change no stage sees: the wording of an error line on stderr, which neither the
    suite nor the adversaries compare (stderr is unpriced in demo01)."""
    return _by_hand(state_a, mid, "csvtab/cli.py", 'sys.stderr.write(f"csvtab: ',
                    'sys.stderr.write(f"CSVTAB: ')


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_killed_survived_and_invalid_mutants(setup: Setup) -> None:
    engine, task, state_a, images = setup
    baseline = await grade_baseline(engine, task, state_a, images,
                                    publish=lambda event: None)
    # State A passes its own suite here; a State A that cannot start still passes the
    # checks of an error exit (exit 1, nothing on stdout), and no others
    assert not baseline.state_a_failing and baseline.state_a_sec > 0
    assert baseline.dead_passes and all("::" in name for name in baseline.dead_passes)
    border = _by_hand(state_a, "m001", "csvtab/render.py", '"|")', '"!")')
    control = _control(state_a, "m002")
    broken = _by_hand(state_a, "m003", "csvtab/cli.py", "import sys", "import sys_")
    got = {m.id: await grade_mutant_stage_ii(engine, task, state_a, m, images,
                                             publish=lambda event: None, baseline=baseline)
           for m in (border, control, broken)}
    assert got["m001"].outcome == "killed", got["m001"]
    assert got["m001"].failing and all("::" in name for name in got["m001"].failing)
    assert got["m002"].outcome == "survived", got["m002"]
    assert got["m002"].passed == got["m002"].scored > 0
    # it passes some checks (error exits), but none a dead State A does not pass
    assert got["m003"].outcome == "invalid", got["m003"]
    assert got["m003"].passed > 0 and "cannot start" in got["m003"].reason
    # without the baseline the same run would read as killed: the baseline decides
    assert got["m003"].passed < got["m001"].passed
    # State A itself is untouched by the mutants' copies
    assert b'"|")' in (state_a / "csvtab/render.py").read_bytes()


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_mutant_that_hangs_is_stopped_at_the_time_limit_and_counted_killed(
        setup: Setup) -> None:
    engine, task, state_a, images = setup
    hang = _by_hand(state_a, "m009", "csvtab/cli.py", "import sys",
                    "import sys\nwhile True:\n    pass")
    got = await grade_mutant_stage_ii(engine, task, state_a, hang, images,
                                      publish=lambda event: None, time_limit_sec=12.0)
    assert got.outcome == "killed" and "timed out" in got.reason, got
    assert got.duration_sec is not None and got.duration_sec < 40


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_campaign_lands_each_mutant_where_expected_and_resumes(
        setup: Setup, tmp_path: Path) -> None:
    """Killed by Stage II; surviving Stage II and caught by the panel (the weak spot a fuzz
    adversary probes); surviving both. A resumed campaign grades nothing twice, and a
    Stage III run a SIGKILL left behind is ended and its survivor graded afresh."""
    from srb_tui.service import strength
    from srb_tui.service.strength_grade import StrengthGrader, mutant_agent
    from srb_tui.store import Store

    engine, task, state_a, _images = setup
    hand = [_by_hand(state_a, "m001", "csvtab/render.py", '"|")', '"!")'),
            _control(state_a, "m002"), _stderr_wording(state_a, "m003")]
    store = await Store.open(tmp_path / "srb.sqlite3")
    seen: list[tuple[str, str]] = []

    def grader() -> StrengthGrader:
        return StrengthGrader(store, engine, task, state_a, campaign.id, tmp_path / "runs",
                              base_image=BASE_IMAGE, budget_sec=20.0)

    try:
        campaign, added = await strength.plan(store, task, state_a, asked=3, seed=0,
                                              mutants=hand)
        assert added == 3 and len(campaign.panel) == 6
        first = grader()
        try:
            graded = await first.stage_ii(lambda row, o: seen.append((row.mutant_id, o)))
        finally:
            await first.close()
        assert graded == 3 and seen == [("m001", "killed"), ("m002", "survived"),
                                        ("m003", "survived")]
        # a Stage III run of m002 that a SIGKILL left in flight
        stale = await store.runs.create_run(task_id=task.id, task_path=str(task.dir),
                                            agent=mutant_agent(campaign.id, "m002"))
        await store.strength.start_stage_iii(campaign.id, "m002", stale.id)
        await store.runs.transition(stale.id, "verification", "the killed sitting")
        # resumed: the plan is whole, Stage II grades nothing again, Stage III the two
        again, added = await strength.plan(store, task, state_a, asked=3, seed=0,
                                           mutants=hand)
        assert added == 0 and again.id == campaign.id
        second = grader()
        seen.clear()
        try:
            assert await second.stage_ii() == 0
            assert await second.stage_iii(lambda row, o: seen.append((row.mutant_id, o))) == 2
        finally:
            await second.close()
        assert (await second.finish()) == "done"
        assert (await store.runs.require_run(stale.id)).status == "infra_error"
        rows = {r.mutant_id: r for r in await store.strength.mutants(campaign.id)}
        caught = {a for a, o in rows["m002"].catches.items() if o == "broken"}
        assert caught, rows["m002"].catches
        assert not {a for a, o in rows["m003"].catches.items() if o == "broken"}
        assert set(rows["m002"].catches) == set(campaign.panel)
        # each survivor's panel ran in a fresh run, scored, left out of the run list
        for mid in ("m002", "m003"):
            run = await store.runs.require_run(rows[mid].stage_iii_run or "")
            assert run.status == "scored" and run.id != stale.id
            assert [t.to_status for t in await store.runs.transitions(run.id)] == [
                "pending", "verification", "scored"]
            # its provenance: the launch record of srb's own mutant run, then the panel's stamp
            found = Provenance.read(run.extra)
            assert found is not None and found.client == "mutant" and found.backend == "local"
            assert set(found.stages) == {"launch", "verification"}
            assert found.stages["verification"].grader_fingerprint == found.grader_fingerprint
        m002_run = rows["m002"].stage_iii_run or ""
        upheld = [c for c in await store.grading.counterexamples(m002_run) if c.verdict == "upheld"]
        assert {c.adversary_id for c in upheld} == caught
        listed = {r.id for r in await store.runs.list_runs(limit=None)}
        assert not listed & {stale.id, m002_run}
        assert {r.id for r in await store.runs.list_runs(agent=mutant_agent(campaign.id, "m002"),
                                                         limit=None)} == {stale.id, m002_run}
        assert not await store.runs.live_runs()
        got = await strength.campaign_figures(store, campaign.id)
        assert (got.valid, got.killed, got.suite_score) == (3, 1, 1 / 3)
        assert (got.graded_survivors, got.caught, got.uncaught) == (2, 1, ["m003"])
        assert got.panel_strength == 0.5
        assert {a.adversary for a in got.adversaries if a.caught} == caught
        assert got.retire[0].let_through_strongest == 1
        assert got.retire[-1].let_through_strongest == 2
        # the author marks the uncaught one equivalent: both scores exclude it, saying so
        await store.strength.mark_equivalent(task.id, hand[2].key, by="test",
                                             reason="stderr wording is unpriced")
        got = await strength.campaign_figures(store, campaign.id)
        assert (got.equivalent, got.valid, got.suite_score) == (1, 2, 0.5)
        assert (got.graded_survivors, got.panel_strength) == (1, 1.0)
    finally:
        await store.close()


@pytest.mark.docker
@pytest.mark.asyncio(loop_scope="module")
async def test_a_fault_in_a_mutant_surfaces_as_itself_not_as_a_group(
        setup: Setup, tmp_path: Path) -> None:
    """A mutant that no longer fits State A stops the sitting with MutantStale (which the
    CLI turns into a message naming the task), not an ExceptionGroup of the task group."""
    from srb_tui.service import strength
    from srb_tui.service.grading.strength_baseline import Baseline
    from srb_tui.service.strength_grade import StrengthGrader
    from srb_tui.store import Store
    from srb_tui.strength.mutate import MutantStale

    engine, task, state_a, _images = setup
    hand = [_by_hand(state_a, "m001", "csvtab/render.py", '"|")', '"!")'),
            _control(state_a, "m002")]
    # the tree graded differs from the one planned on where m001 sits
    changed = tmp_path / "changed"
    shutil.copytree(state_a, changed, symlinks=True)
    render = changed / "csvtab/render.py"
    render.write_bytes(render.read_bytes().replace(b'"|")', b'"#")'))
    store = await Store.open(tmp_path / "srb.sqlite3")
    try:
        campaign, _ = await strength.plan(store, task, state_a, asked=2, seed=0,
                                          mutants=hand)
        # a baseline already stored: the sitting goes straight to the mutants
        await store.strength.set_baseline(campaign.id, Baseline(10.0, frozenset(),
                                                                frozenset()).to_json())
        grader = StrengthGrader(store, engine, task, state_a, campaign.id, tmp_path / "runs",
                                base_image=BASE_IMAGE, jobs=2, tree=changed)
        with pytest.raises(MutantStale):
            try:
                await grader.stage_ii()
            finally:
                await grader.close()
    finally:
        await store.close()
