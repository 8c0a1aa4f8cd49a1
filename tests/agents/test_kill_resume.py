"""kill -9 of a real `srb run` in the middle of a real client's round, then `srb resume`.

The round is a detached exec in the agent container, so the client keeps running while
srb is dead (its model requests fail meanwhile: the gateway lived in the killed process).
`srb resume` starts a new gateway on the same socket folder, rebuilds the unfinished
round's transcript from the stored log, follows the container's log from the last stored
line, and the loop goes on (a resumed round continues the session) to a clear stop
reason. Every line the client wrote is stored exactly once. STAND-IN model server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agents.conftest import PRICES, gateway_environ
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO
from tests.standin.server import StandIn
from tests.store_reader import store_rows

pytestmark = pytest.mark.docker
PARTIAL = 16 * 1024


def _srb(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS),
            "--state", str(state), *args]


def _joined(texts: list[str]) -> list[str]:
    """Docker splits lines over 16 KiB into pieces: join them back."""
    out: list[str] = []
    buf = ""
    for t in texts:
        if len(t) == PARTIAL:
            buf += t
            continue
        out.append(buf + t)
        buf = ""
    return out


def _container_procs(name: str) -> str:
    script = ("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done")
    return subprocess.run(["docker", "exec", name, "bash", "-c", script],
                          capture_output=True, text=True, check=False).stdout


def test_kill_9_mid_round_then_resume_finishes_with_every_line_once(
        tmp_path: Path, standin: StandIn, installed_clients: None) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(PRICES, encoding="utf-8")
    db = state / "srb.sqlite3"
    env = {**os.environ, **gateway_environ(standin), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        _srb(state, "run", DEMO_TASK.name, "--agent", "claude-code:standin-slow",
             "--no-grade", "--budget", "900", "--json"),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    deadline = time.monotonic() + 300
    while True:
        calls = store_rows(db, "SELECT count(*) FROM agent_events WHERE kind = 'tool_call'")
        if calls and int(calls[0][0]) >= 3:  # type: ignore[call-overload]
            break
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "round 1 never got going"
        time.sleep(0.2)
    run_id = str(store_rows(db, "SELECT id FROM runs")[0][0])
    name = f"srb-{run_id}-agent"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert store_rows(db, "SELECT ended_at FROM agent_rounds WHERE round = 1")[0][0] is None
    assert "claude.exe" in _container_procs(name), "the client died with srb"

    resumed = subprocess.run(_srb(state, "resume", "--no-grade", "--json"), env=env,
                             capture_output=True, text=True, timeout=600, cwd=REPO)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    status, stop = store_rows(db, f"SELECT status, stop_reason FROM runs WHERE id = '{run_id}'")[0]
    assert status == "collecting" and stop == "completed", (status, stop, resumed.stderr[-1500:])
    rounds = store_rows(db, "SELECT round, verdict FROM agent_rounds ORDER BY round")
    assert len(rounds) >= 1 and all(r[1] for r in rounds)

    stored = [str(r[0]) for r in store_rows(
        db, f"SELECT text FROM log_lines WHERE run_id = '{run_id}' AND stream = 'stdout'"
            " ORDER BY seq")]
    client_lines = [t for t in _joined(stored) if not t.startswith("@@srb round")]
    raw: list[str] = []
    for path in sorted((state / "runs" / run_id / "agent").glob("round-*.jsonl")):
        raw += path.read_text().splitlines()
    assert raw and client_lines == raw  # nothing lost, nothing twice
    markers = [t for t in stored if t.startswith("@@srb round")]
    assert len(markers) == len(set(markers)) == 2 * len(rounds)
    submission = state / "runs" / run_id / "submission"
    assert (submission / "lib" / "cli.js").is_file() and not (submission / "csvtab").exists()
