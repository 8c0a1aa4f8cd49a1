"""The demo campaign end to end on a real engine: ``srb campaign run`` in a subprocess,
killed with SIGKILL while a cell's run is being graded, then ``srb campaign resume``; every
cell ends with exactly one scored run (plus any recorded retries) and the report shows it.

The default suite runs a lean variant (demo task × replay:untouched, replay:wrong × 1 repeat,
about five minutes on a loaded two-core machine: every demo run spends ~2 min in Stage II).
``SRB_FULL_CAMPAIGN=1`` runs the issue's campaign: × (reference, subtle, untouched, wrong)
× 2 repeats, with Stage III budgets of 15 s (as tests/ladder). The demo task declares
2 CPUs, so on a two-core machine the scheduler runs its cells one at a time: the full
variant took 29 min here (kill after the second cell had started grading, resume ran the
rest; every cell ended with one scored run and no retry).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import BUILTIN_TASKS, REPO
from tests.store_reader import store_rows

pytestmark = pytest.mark.docker

FULL = os.environ.get("SRB_FULL_CAMPAIGN") == "1"
CONFIGS = (("reference", "replay:reference"), ("subtle", "replay:subtle"),
           ("untouched", "replay:untouched"), ("wrong", "replay:wrong")) if FULL else \
    (("untouched", "replay:untouched"), ("wrong", "replay:wrong"))
REPEATS = 2 if FULL else 1
EXPECTED = {"reference": "accepted", "subtle": "counterexample", "untouched": "blindness",
            "wrong": "behavioural_fail"}
DEADLINE_SEC = 3600 if FULL else 1500


def _srb(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS),
            "--state", str(state), *args]


def test_demo_campaign_survives_kill_and_resumes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    db = state / "srb.sqlite3"
    configs = "\n".join(f'[[config]]\nlabel = "{label}"\nagent = "{agent}"\n'
                        for label, agent in CONFIGS)
    campaign = tmp_path / "demo-campaign.toml"
    campaign.write_text(
        '[campaign]\nname = "demo"\ntasks = ["demo01-*"]\n'
        f"repeats = {REPEATS}\nmax_parallel = 2\nretry_limit = 1\nadversary_budget_sec = 15\n\n"
        + configs
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    first = subprocess.Popen(_srb(state, "campaign", "run", str(campaign)), cwd=tmp_path,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed_during = None
    try:
        deadline = time.monotonic() + DEADLINE_SEC
        while time.monotonic() < deadline and first.poll() is None:
            grading = store_rows(db, "SELECT r.id, r.status FROM campaign_cells c JOIN runs r ON"
                                " r.id = c.run_id WHERE r.status IN ('audit', 'behavioural')")
            done = store_rows(db, "SELECT count(*) FROM campaign_cells WHERE state = 'done'")
            if grading and (not FULL or (done and int(done[0][0]) >= 1)):  # type: ignore[arg-type]
                killed_during = grading[0]
                break
            time.sleep(0.5)
        assert killed_during is not None, (
            "the campaign never reached grading: " + (first.stderr.read().decode()[-2000:]
                                                     if first.poll() is not None
                                                     and first.stderr else "timeout"))
        first.send_signal(signal.SIGKILL)
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(30)
    killed_run = str(killed_during[0])
    assert store_rows(db, "SELECT status FROM campaigns")[0][0] == "running"  # it never got to say

    resume = subprocess.run(_srb(state, "campaign", "resume", "demo"), cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=DEADLINE_SEC)
    assert resume.returncode == 0, resume.stderr[-3000:]

    cells = store_rows(db, "SELECT task_id, config, repeat, state, run_id, attempts FROM"
                      " campaign_cells ORDER BY position")
    assert len(cells) == len(CONFIGS) * REPEATS
    assert {c[3] for c in cells} == {"done"}, cells
    assert store_rows(db, "SELECT status FROM campaigns")[0][0] == "done"
    attempts = store_rows(db, "SELECT config, repeat, attempt, run_id, outcome FROM cell_attempts")
    for _task, config, repeat, _state, run_id, count in cells:
        mine = [a for a in attempts if a[0] == config and a[1] == repeat]
        assert len(mine) == count  # every attempt recorded
        scored = [a for a in mine if a[4] == "scored"]
        assert len(scored) == 1 and scored[0][3] == run_id  # exactly one scored run per cell
        assert all(a[4] in ("invalid", "infra_error") for a in mine if a is not scored[0])
    # the run being graded when srb was killed was re-attached, not replaced
    killed_cell = next(c for c in cells if c[4] == killed_run)
    assert killed_cell[5] == 1
    runs = store_rows(db, "SELECT id, status, valid FROM runs WHERE batch_id = 'demo'")
    attempted = {a[3] for a in attempts}
    assert attempted <= {r[0] for r in runs}
    # anything else is a run created just before the kill and never attached: cancelled
    assert all(r[1] == "cancelled" for r in runs if r[0] not in attempted)

    report = subprocess.run(_srb(state, "report", "--campaign", "demo", "--json"), cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    funnel = {r["config"]: r for r in next(t for t in doc["tables"]
                                           if t["id"] == "table2")["rows"]}
    for label, _agent in CONFIGS:
        assert funnel[label]["runs"] == REPEATS
        if label == "subtle":
            # with a 15 s Stage III budget the fuzzers can miss the subtle bug on a loaded
            # machine (seen once in a full run): a miss is "accepted", never anything else
            assert funnel[label]["counterexample"] >= 1, funnel[label]
            assert funnel[label]["counterexample"] + funnel[label]["accepted"] == REPEATS
        else:
            assert funnel[label][EXPECTED[label]] == REPEATS, (label, funnel[label])
    markdown = subprocess.run(_srb(state, "report", "--campaign", "demo"), cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
    (tmp_path / "report.md").write_text(markdown.stdout)
    if os.environ.get("SRB_CAMPAIGN_REPORT"):
        Path(os.environ["SRB_CAMPAIGN_REPORT"]).write_text(markdown.stdout)
    assert "## Table 9 · per task" in markdown.stdout
