"""dockerd stopped under a run and started again: the run ends ``infra_error`` (or, for a
stage, invalid), never a score; nothing recorded before the fault is lost; the store's
engine-state report says the engine is down while it is; once the engine is back the
run's leftovers are reaped and the run can be graded again.

The engine stopped is the one serving ``DOCKER_HOST`` (see tests/faults/engine.py); the
fixture restarts it with its own command line whatever happens. The default suite stops
it during the agent phase; collection and a stage follow with ``SRB_FULL_FAULTS=1``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.service.engine_state import engine_state
from tests.faults.engine import EngineControl
from tests.faults.harness import (
    FULL,
    Outcome,
    env,
    line_damage,
    managed,
    only_run,
    q,
    remove_run_containers,
    run_argv,
    run_row,
    srb,
    srb_argv,
    stdout_lines,
    wait_for,
)
from tests.faults.test_sigkill import GRADING_AGENT

pytestmark = pytest.mark.docker
READY_LINES = [f"line-{i}" for i in range(1, 41)] + ["ready"]
TALKER = ("command:bash -c 'for i in $(seq 1 40); do echo line-$i; done; echo ready; "
          "sleep 600'")


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


def _state_now() -> str:
    async def probe() -> str:
        engine = DockerEngine(RunnerPool(1))
        try:
            return (await engine_state(engine, timeout_sec=5)).status
        finally:
            engine.close()

    return asyncio.run(probe())


def _finish(proc: subprocess.Popen[bytes], what: str) -> int:
    try:
        return proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError(f"srb did not give up after the engine stopped ({what})") from None


def _judge_infra(state: Path, run_id: str, point: str, expected_lines: list[str]) -> Outcome:
    row = run_row(state, run_id)
    lost, dup = line_damage(stdout_lines(state, run_id), expected_lines)
    invalid = row["status"] == "infra_error" or (row["status"] == "scored" and not row["valid"])
    # reward.json is always written (the published contract): an invalid run publishes
    # valid 0; a wrong score is one published as valid.
    reward_file = state / "runs" / run_id / "reward.json"
    published = json.loads(reward_file.read_text()) if reward_file.exists() else {}
    result = "invalid" if invalid and not published.get("valid") else "wrong"
    return Outcome("dockerd-stop", point, result, lost, dup,
                   "" if result != "wrong" else f"{row['status']} valid={row['valid']}"
                   ).record()


def test_engine_stops_during_the_agent_phase(tmp_path: Path,
                                             engine_control: EngineControl) -> None:
    state = tmp_path / "state"
    proc = subprocess.Popen(srb_argv(state, *run_argv(TALKER, grade=False)), env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    run_id, checked = "", False
    try:
        wait_for(lambda: (state / "srb.sqlite3").exists() and "ready" in stdout_lines(
            state, only_run(state)), "the agent's first lines", 180)
        run_id = only_run(state)
        engine_control.stop()
        assert _state_now() == "down"
        _finish(proc, "agent phase")
        outcome = _judge_infra(state, run_id, "agent phase", READY_LINES)
        assert outcome.result == "invalid" and not outcome.lines_lost, outcome
        assert not outcome.lines_duplicated, outcome
        row = run_row(state, run_id)
        assert row["status"] == "infra_error" and row["valid"] == 0, row
        assert "engine" in (row["harness_error"] or "").lower(), row["harness_error"]
        checked = True
    finally:
        engine_control.start()
        if proc.poll() is None:
            proc.kill()
        left = managed(f"srb.run={run_id}") if run_id else []
        if not checked:  # failed above: clean up here, the rest does not run
            remove_run_containers(run_id or "none")
    assert _state_now() == "up"
    # back: nothing live to resume; resume reaps the dead run's container (the restarted
    # engine kept it, stopped) and records its removal; gc then finds nothing of ours
    try:
        resumed = srb(state, "resume", "--json")
        assert json.loads(resumed.stdout)["resumed"] == [], resumed.stderr
        gc = srb(state, "gc", "--json")
        assert json.loads(gc.stdout)["containers_removed"] == 0, gc.stderr
        removed = q(state / "srb.sqlite3", "SELECT removed_at FROM containers WHERE "
                    "run_id = ? AND role = 'agent'", (run_id,))
        after = managed(f"srb.run={run_id}")
    finally:
        remove_run_containers(run_id)
    assert left and after == [], (left, after)
    assert removed and all(r[0] for r in removed), removed
    assert stdout_lines(state, run_id)[:len(READY_LINES)] == READY_LINES  # nothing lost


def _frozen_then_engine_down(tmp_path: Path, engine_control: EngineControl, point: str,
                             agent: str, grade: bool) -> tuple[Path, str]:
    """srb frozen at ``point``; the engine stopped; srb thawed, runs into the dead engine
    and gives up; the engine started again. Returns the state folder and run id."""
    state = tmp_path / "state"
    proc = subprocess.Popen(srb_argv(state, *run_argv(agent, grade=grade)),
                            env=env({"SRB_FAULT_STOP_AT": point}),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _stopped(proc.pid), f"srb to stop at {point}", 240)
        engine_control.stop()
        os.kill(proc.pid, signal.SIGCONT)
        _finish(proc, point)
    finally:
        if proc.poll() is None:
            proc.kill()
        engine_control.start()
    return state, only_run(state)


@pytest.mark.skipif(not FULL, reason="the collection case runs with SRB_FULL_FAULTS=1")
def test_engine_stops_during_collection(tmp_path: Path,
                                        engine_control: EngineControl) -> None:
    state, run_id = _frozen_then_engine_down(tmp_path, engine_control, "status:collecting",
                                             "untouched", grade=False)
    try:
        lines = stdout_lines(state, run_id)
        outcome = _judge_infra(state, run_id, "collection", lines)
        assert outcome.result == "invalid", outcome
        assert run_row(state, run_id)["status"] == "infra_error"
    finally:
        remove_run_containers(run_id)


@pytest.mark.skipif(not FULL, reason="the stage case runs with SRB_FULL_FAULTS=1")
def test_engine_stops_during_a_stage_then_regrade(tmp_path: Path,
                                                 engine_control: EngineControl) -> None:
    state, run_id = _frozen_then_engine_down(tmp_path, engine_control, "status:behavioural",
                                             GRADING_AGENT, grade=True)
    try:
        outcome = _judge_infra(state, run_id, "stage (behavioural)", stdout_lines(state, run_id))
        assert outcome.result == "invalid", outcome
        again = srb(state, "eval", run_id, "--adversary-budget", "5", "--json")
        assert again.returncode == 0, again.stderr[-2000:]
        row = run_row(state, run_id)
        assert row["status"] == "scored" and row["valid"] == 1, row
        Outcome("re-grade after dockerd-stop", "stage", "resumed").record()  # same injection
    finally:
        remove_run_containers(run_id)
