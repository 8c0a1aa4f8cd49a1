"""A strength campaign killed with SIGKILL resumes (issue 36 item 4): ``srb tasks strength``
is killed as soon as its first mutant's Stage II outcome is printed; the same command again
grades only the mutants without an outcome, leaves the first one's stored outcome as it
was, and removes the stage container the killed process left on the engine."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from srb_tui.runner import DockerEngine, RunnerPool, list_managed
from tests.conftest import BUILTIN_TASKS, DEMO_TASK

REPO = Path(__file__).resolve().parents[2]
COMMAND = ["tasks", "strength", DEMO_TASK.name, "--mutants", "3", "--seed", "5",
           "--no-stage-iii"]


def _srb(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS), "--state",
            str(state), *args]


def _outcomes(state: Path) -> dict[str, tuple[str | None, str]]:
    con = sqlite3.connect(state / "srb.sqlite3")
    try:
        rows = con.execute("SELECT mutant_id, stage_ii, updated_at FROM strength_mutants")
        return {mid: (outcome, at) for mid, outcome, at in rows}
    finally:
        con.close()


async def _leftovers(prefix: str) -> list[str]:
    engine = DockerEngine(RunnerPool(1))
    try:
        return [c.handle.run_id for c in await list_managed(engine)
                if c.handle.run_id.startswith(prefix)]
    finally:
        engine.close()


async def _until_left(prefix: str, timeout: float = 120.0) -> None:
    """Until a stage container of the campaign exists (polled on the engine's state)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await _leftovers(prefix):
        assert loop.time() < deadline, "no stage container of the campaign appeared"
        await asyncio.sleep(0.2)


@pytest.mark.docker
def test_a_killed_campaign_resumes_without_regrading_and_sweeps_its_container(
        tmp_path: Path) -> None:
    import hashlib

    from srb_tui.service.strength import campaign_id_for

    state = tmp_path / "state"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SRB_")},
           "PYTHONPATH": str(REPO)}
    first = subprocess.Popen(_srb(state, *COMMAND), cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    assert first.stderr is not None
    campaign = campaign_id_for(DEMO_TASK.name, "state-a", 3, 5)
    prefix = "st" + hashlib.sha1(campaign.encode()).hexdigest()[:10] + "-"
    for line in first.stderr:
        seen.append(line)
        if line.startswith("m001 "):  # its outcome is stored before it is printed
            # kill it while m002's stage container is up (a SIGKILL skips every cleanup)
            asyncio.run(_until_left(prefix))
            first.send_signal(signal.SIGKILL)
            break
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, "".join(seen)
    before = _outcomes(state)
    assert before["m001"][0] in ("killed", "survived", "invalid")
    assert [before[m][0] for m in ("m002", "m003")] == [None, None]
    assert asyncio.run(_leftovers(prefix)), "the killed sitting left no container"

    again = subprocess.run(_srb(state, *COMMAND, "--json"), cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert (doc["campaign"], doc["planned_now"], doc["graded_now"]) == (campaign, 0, 2)
    after = _outcomes(state)
    assert after["m001"] == before["m001"]  # not graded again
    assert all(after[m][0] is not None for m in ("m002", "m003"))
    # what the killed process left on the engine is gone (the resumed sitting's sweep)
    assert asyncio.run(_leftovers(prefix)) == []
