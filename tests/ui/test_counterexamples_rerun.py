"""Re-running a stored counterexample against the real engine, from the service and from
the console. The demo's verification image is built once for the module."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from textual.widgets import Static

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool, build_image
from srb_tui.service.grading.rerun import rerun_counterexample
from srb_tui.store import Store
from srb_tui.ui.app import create_app
from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
from tests.conftest import DEMO_TASK
from tests.ui.test_counterexamples_screen import RUN_ID, seed_counterexamples

pytestmark = pytest.mark.docker
TAG = "srb-test/demo01-verification:rerun"


@pytest.fixture(scope="module")
def verification_image() -> Iterator[str]:
    async def build() -> None:
        engine = DockerEngine(RunnerPool(2))
        try:
            await build_image(engine, DEMO_TASK / "tests" / "verification", TAG,
                              base_image="srb/base:bookworm")
        finally:
            engine.close()

    asyncio.run(build())
    yield TAG


def _leftovers() -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=srb.run={RUN_ID}", "--format", "{{.Names}}"],
        capture_output=True, text=True, check=True,
    ).stdout
    return out.split()


async def _seed(settings: Settings, image: str, submission: str) -> int:
    await seed_counterexamples(settings)
    shutil.copytree(DEMO_TASK / "submissions" / submission,
                    settings.runs_dir / RUN_ID / "submission")
    async with await Store.open(settings.db_path) as store:
        await store.infra.record_image(RUN_ID, "verification", tag=image)
        records = await store.grading.counterexamples(RUN_ID)
    return next(r.id for r in records if r.verdict == "upheld")


async def test_rerun_upholds_a_real_break(builtin_settings: Settings,
                                          verification_image: str) -> None:
    cid = await _seed(builtin_settings, verification_image, "subtle")
    steps: list[str] = []
    engine = DockerEngine(RunnerPool(2))
    try:
        async with await Store.open(builtin_settings.db_path) as store:
            result = await rerun_counterexample(builtin_settings, store, engine, RUN_ID, cid,
                                                progress=steps.append)
    finally:
        engine.close()
    assert result.outcome == "upheld", result.reason
    assert "reproduced 3 times" in result.reason
    assert [(r.role, r.exit_code == 0) for r in result.runs].count(("original", True)) == 3
    assert all(r.exit_code != 0 for r in result.runs if r.role == "submission")
    assert len(result.runs) == 6
    assert steps[0].startswith("creating a container") and steps[-1] == "verdict: upheld"
    # each of the six executions is told as it ends, before the verdict
    told = [s for s in steps if s.startswith("attempt ")]
    assert [t.split(" · ")[0] for t in told] == [f"attempt {n}/3" for n in (1, 1, 2, 2, 3, 3)]
    assert sum(1 for t in told if "original: exit 0 in" in t) == 3, told
    assert all("exit 0 " not in t for t in told if "submission:" in t), told
    assert _leftovers() == []


async def test_rerun_against_the_reference_is_not_a_break(builtin_settings: Settings,
                                                          verification_image: str) -> None:
    cid = await _seed(builtin_settings, verification_image, "reference")
    engine = DockerEngine(RunnerPool(2))
    try:
        async with await Store.open(builtin_settings.db_path) as store:
            result = await rerun_counterexample(builtin_settings, store, engine, RUN_ID, cid)
    finally:
        engine.close()
    assert result.outcome == "invalid"
    assert "passes on the submission too" in result.reason


async def test_rerun_from_the_console_shows_live_results(builtin_settings: Settings,
                                                         verification_image: str) -> None:
    cid = await _seed(builtin_settings, verification_image, "subtle")
    app = create_app(builtin_settings)
    app.run_host.recover_on_start = False
    async with app.run_test(size=(140, 45)) as pilot:
        screen = CounterexamplesScreen(app.run_host, RUN_ID)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.selected == cid
        await pilot.press("R")
        await pilot.pause()
        assert cid in screen.running
        panel = screen.query_one("#cx-rerun", Static)
        seen_progress = False
        attempts_before_result: set[str] = set()
        deadline = time.monotonic() + 180
        while cid not in screen.rerun_results:
            assert time.monotonic() < deadline, str(panel.render())
            seen_progress = seen_progress or "copying" in str(panel.render())
            attempts_before_result |= {line.strip().split(" · ")[0] for line in
                                       str(panel.render()).splitlines()
                                       if line.strip().startswith("attempt ")}
            assert not any(line.startswith("failed") for line in screen.rerun_log.get(cid, [])), \
                screen.rerun_log[cid]
            await pilot.pause(0.05)
        await pilot.pause()
        text = str(panel.render())
        assert seen_progress
        assert "attempt 1/3" in attempts_before_result, "no execution shown before the verdict"
        assert "upheld" in text and "attempt 3" in text
        attempts = [line.split() for line in text.splitlines() if line.startswith("  attempt")]
        assert len(attempts) == 6
        assert sorted((a[3], a[4], a[5]) for a in attempts if a[2] == "State") == [
            ("A", "exit", "0")] * 3
        assert all(a[3:5] == ["exit", "1"] for a in attempts if a[2] == "submission")


def teardown_module(_module: Any) -> None:
    subprocess.run(["docker", "rmi", "-f", TAG], capture_output=True, check=False)
