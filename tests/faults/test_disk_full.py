"""The state directory's disk fills (a small tmpfs mounted on ``state/``): while the
agent's log streams, and while grading writes its results. srb stops with a message
naming the path, the store still opens, no result file is half-written, and once there
is space again ``srb resume`` finishes the run with every log line exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.faults.harness import (
    FULL,
    Outcome,
    broken_json_files,
    env,
    line_damage,
    only_run,
    remove_run_containers,
    resize,
    run_argv,
    run_row,
    score_events,
    srb,
    srb_argv,
    stdout_lines,
    tmpfs,
    wait_for,
)
from tests.faults.test_sigkill import GRADING_AGENT

pytestmark = pytest.mark.docker
N = 8000
FLOOD = (f"command:bash -c 'for i in $(seq 1 {N}); do printf \"line-%05d %0900d\\n\" $i 0; "
         "done; echo done'")
FLOOD_LINES = [f"line-{i:05d} {0:0900d}" for i in range(1, N + 1)] + ["done"]


def test_disk_fills_while_the_log_streams(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with tmpfs(state, "3m"):
        done = srb(state, *run_argv(FLOOD, grade=False))
        run_id = only_run(state)
        try:
            assert done.returncode == 4, done.stderr[-2000:]  # INFRA: not measured
            assert "Traceback" not in done.stderr
            assert str(state) in done.stderr and "full" in done.stderr, done.stderr
            listed = srb(state, "runs", "list", "--json")  # the store still opens
            assert listed.returncode == 0, listed.stderr
            assert run_row(state, run_id)["status"] == "agent"  # left resumable
            resize(state, "64m")
            resumed = srb(state, "resume", "--no-grade", "--json")
            assert resumed.returncode == 0, resumed.stderr[-2000:]
            lost, dup = line_damage(stdout_lines(state, run_id), FLOOD_LINES)
            row = run_row(state, run_id)
            ok = row["status"] == "collecting" and not lost and not dup
            Outcome("disk-full", "log streaming", "resumed" if ok else "wrong", lost, dup,
                    "" if ok else str(row["status"])).record()
            assert row["status"] == "collecting" and row["stop_reason"] == "completed", row
            assert (lost, dup) == (0, 0)
        finally:
            remove_run_containers(run_id)


def _fill(folder: Path) -> None:
    """Write zeros into ``folder`` until its file system has no byte left."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)


@pytest.mark.skipif(not FULL, reason="the results case runs with SRB_FULL_FAULTS=1")
def test_disk_fills_while_results_are_written(tmp_path: Path) -> None:
    """srb frozen as Stage III begins; the disk is filled; srb writes its results into a
    full disk and stops; space comes back; resume grades to the same end."""
    state = tmp_path / "state"
    with tmpfs(state, "64m"):
        proc = subprocess.Popen(srb_argv(state, *run_argv(GRADING_AGENT)),
                                env=env({"SRB_FAULT_STOP_AT": "status:verification"}),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        run_id = ""
        try:
            wait_for(lambda: Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1]
                     .split()[0] == "T", "srb to stop at status:verification", 240)
            run_id = only_run(state)
            _fill(state)
            os.kill(proc.pid, signal.SIGCONT)
            _, err = proc.communicate(timeout=300)
            text = err.decode(errors="replace")
            assert proc.returncode != 0 and "Traceback" not in text, text[-3000:]
            assert str(state) in text, text[-2000:]
            assert broken_json_files(state / "runs" / run_id) == []
            (state / "filler").unlink()
            resumed = srb(state, "resume", "--json")
            assert resumed.returncode == 0, resumed.stderr[-2000:]
            row = run_row(state, run_id)
            ok = (row["status"] == "scored" and score_events(state, run_id) == 1
                  and broken_json_files(state / "runs" / run_id) == [])
            Outcome("disk-full", "results written", "resumed" if ok else "wrong").record()
            assert ok, (row, score_events(state, run_id))
            assert json.loads((state / "runs" / run_id / "score.json").read_text())
        finally:
            if proc.poll() is None:
                proc.kill()
            if run_id:
                remove_run_containers(run_id)
