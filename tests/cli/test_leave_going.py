"""Ctrl-C in ``srb run`` → "leave the run going": the run goes on without that process.

Real processes on a real engine: ``srb run`` is interrupted with SIGINT (no terminal to ask
on, so it leaves the run going), exits 130 and hands the run to a background driver; the
test never runs ``srb resume``. A run left in its agent phase keeps its container and a
live background lease, and ``srb runs cancel`` stops that driver and the run; a run left
during grading reaches its score on its own.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from srb_tui.service.run.run_faults import pid_running
from srb_tui.store.run_extra import DriverLease
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO

TASK = DEMO_TASK.name


def _base(state: Path) -> list[str]:
    return [sys.executable, "-m", "srb_tui", "--tasks", str(BUILTIN_TASKS), "--state",
            str(state)]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}


def _row(db: Path) -> tuple[str, str, str] | None:
    """(id, status, extra) of the one run, or None before there is one."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            row = con.execute("select id, status, extra from runs").fetchone()
        finally:
            con.close()
    except sqlite3.OperationalError:
        return None
    return None if row is None else (str(row[0]), str(row[1]), str(row[2] or "{}"))


def _wait_for(db: Path, proc: subprocess.Popen[bytes] | None, ok: object, *,
              timeout: float, what: str) -> tuple[str, str, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = _row(db)
        if row is not None and ok(row):  # type: ignore[operator]
            return row
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"srb run ended before {what}: {proc.communicate()}")
        time.sleep(0.05)  # polling another process's store; nothing to wait on
    raise AssertionError(f"timed out waiting for {what}; last row {_row(db)}")


def _lease(extra: str) -> DriverLease | None:
    import json

    return DriverLease.read(json.loads(extra))


def _containers(run_id: str, *, running: bool) -> str:
    args = ["docker", "ps", "--filter", f"label=srb.run={run_id}", "--format", "{{.Names}}"]
    if not running:
        args.insert(2, "-a")
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


def _interrupt(proc: subprocess.Popen[bytes]) -> str:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    text = err.decode(errors="replace")
    assert proc.returncode == 130, text[-2000:]
    assert "goes on in the background" in text, text[-2000:]
    return text


def test_an_agent_left_going_keeps_running_and_cancel_stops_its_driver(tmp_path: Path
                                                                        ) -> None:
    state = tmp_path / "state"
    db = state / "srb.sqlite3"
    proc = subprocess.Popen(
        [*_base(state), "run", TASK, "--agent", "command:bash -c 'echo started; sleep 600'",
         "--budget", "900", "--json"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    run_id, _, _ = _wait_for(db, proc, lambda r: r[1] == "agent" and _containers(
        r[0], running=True), timeout=180, what="the agent's container")
    _interrupt(proc)

    def background_driver(row: tuple[str, str, str]) -> bool:
        lease = _lease(row[2])
        return lease is not None and lease.background and lease.pid != proc.pid

    _, status, extra = _wait_for(db, None, background_driver, timeout=60,
                                 what="a background driver's lease")
    lease = _lease(extra)
    assert lease is not None
    assert status == "agent"
    assert _containers(run_id, running=True), "the agent container should still be running"
    assert (state / "runs" / run_id / "driver.log").is_file()

    cancelled = subprocess.run([*_base(state), "runs", "cancel", run_id, "--json"],
                               cwd=REPO, env=_env(), capture_output=True, text=True,
                               timeout=180)
    assert cancelled.returncode == 0, cancelled.stderr
    assert '"cancelled"' in cancelled.stdout
    assert not pid_running(lease.pid), "runs cancel ended the background driver"
    assert _containers(run_id, running=False) == ""


def test_a_grading_left_going_reaches_its_score_without_resume(tmp_path: Path) -> None:
    state = tmp_path / "state"
    db = state / "srb.sqlite3"
    proc = subprocess.Popen(
        [*_base(state), "run", TASK, "--agent", "replay:reference", "--adversary-budget",
         "5", "--json"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    run_id, _, _ = _wait_for(db, proc, lambda r: r[1] == "behavioural", timeout=600,
                             what="Stage II")
    _interrupt(proc)
    _, status, extra = _wait_for(
        db, None, lambda r: r[1] in ("scored", "infra_error", "cancelled"), timeout=900,
        what="the run's end")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    score, valid = con.execute("select score, valid from runs").fetchone()
    moves = [m for (m,) in con.execute(
        "select to_status from run_transitions where run_id = ? order by id", (run_id,))]
    con.close()
    assert (status, score, valid) == ("scored", 100.0, 1), (moves, extra)
    assert "verification" in moves
    assert _lease(extra) is None, "the background driver let go of the run at its end"
    assert _containers(run_id, running=False) == ""
