"""A campaign of two real-client configurations — the pinned Claude Code and Codex CLIs
against a STAND-IN model server (tests/standin, not a vendor API) behind srb's real
gateway — × the demo task × 1 repeat, run by ``srb campaign run`` in a subprocess.

The process is killed with SIGKILL once the first cell is done and the second cell's run is
being graded; ``srb campaign resume`` finishes it. The finished cell is never run again
(one attempt, the same run), ``srb campaign status`` shows both cells scored, and
``srb report``'s Table 3 carries each configuration's cost as the gateway's ledger recorded
it (the stand-in model is priced in the state's config.toml).
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

from tests.agents.conftest import gateway_environ
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO
from tests.standin.server import StandIn
from tests.store_reader import store_rows

pytestmark = pytest.mark.docker
DEADLINE_SEC = 1500
PRICES = """
[gateway.prices."standin-migrate"]   # USD per million tokens
input = 3.0
output = 15.0
"""
CAMPAIGN = f"""
[campaign]
name = "clients"
tasks = ["{DEMO_TASK.name}"]
repeats = 1
max_parallel = 1
retry_limit = 0
adversary_budget_sec = 15

[[config]]
label = "cc-high"
agent = "claude-code:standin-migrate"
effort = "high"
max_cost = 20.0
max_tokens = 5000000
budget_sec = 600

[[config]]
label = "codex-low"
agent = "codex:standin-migrate"
effort = "low"
max_cost = 20.0
budget_sec = 600
"""


def _srb(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS),
            "--state", str(state), *args]


def test_real_client_campaign_runs_resumes_and_reports_ledger_costs(
        tmp_path: Path, standin: StandIn, installed_clients: None) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(PRICES, encoding="utf-8")
    db = state / "srb.sqlite3"
    campaign = tmp_path / "clients.toml"
    campaign.write_text(CAMPAIGN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), **gateway_environ(standin)}
    first = subprocess.Popen(_srb(state, "campaign", "run", str(campaign)), cwd=tmp_path,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed = None
    try:
        deadline = time.monotonic() + DEADLINE_SEC
        while time.monotonic() < deadline and first.poll() is None:
            done = store_rows(db, "SELECT config, run_id FROM campaign_cells WHERE state = 'done'")
            grading = store_rows(db, "SELECT c.config, r.id FROM campaign_cells c JOIN runs r ON"
                                " r.id = c.run_id WHERE r.status IN ('audit', 'behavioural')")
            if done and grading:
                killed = (done[0], grading[0])
                break
            time.sleep(0.5)
        assert killed is not None, (
            "the campaign never had a done cell and a graded one: "
            + (first.stderr.read().decode()[-3000:] if first.poll() is not None
               and first.stderr else "timeout"))
        first.send_signal(signal.SIGKILL)
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(30)
    (done_config, done_run), (_graded_config, graded_run) = killed

    resume = subprocess.run(_srb(state, "campaign", "resume", "clients"), cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=DEADLINE_SEC)
    assert resume.returncode == 0, resume.stderr[-3000:]

    cells = {str(c[0]): c[1:] for c in store_rows(
        db, "SELECT config, state, run_id, attempts FROM campaign_cells")}
    assert set(cells) == {"cc-high", "codex-low"}
    assert {c[0] for c in cells.values()} == {"done"}, cells
    # the cell finished before the kill was not run again: one attempt, the same run
    assert cells[str(done_config)][1:] == (done_run, 1)
    # the cell being graded was re-attached, not replaced
    assert cells[str(_graded_config)][1:] == (graded_run, 1)
    runs = store_rows(db, "SELECT id, agent, effort, status, score, json_extract(extra,"
                     " '$.budget.max_cost_usd'), json_extract(extra, '$.budget.max_tokens'),"
                     " budget_sec FROM runs WHERE batch_id = 'clients'")
    by_agent = {str(r[1]): r for r in runs}
    assert len(runs) == 2, runs  # no other run was ever created
    cc, cx = by_agent["claude-code:standin-migrate"], by_agent["codex:standin-migrate"]
    assert cc[2:] == ("high", "scored", 100.0, 20.0, 5000000, 600.0)
    assert cx[2:] == ("low", "scored", 100.0, 20.0, None, 600.0)
    ledger = {str(r[0]): float(r[1]) for r in store_rows(  # type: ignore[arg-type]
        db, "SELECT run_id, sum(cost_usd) FROM ledger WHERE role = 'agent' GROUP BY run_id")}
    assert ledger[str(cc[0])] > 0 and ledger[str(cx[0])] > 0

    status = subprocess.run(_srb(state, "campaign", "status", "clients", "--json"),
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    assert doc["counts"] == {"done": 2}
    assert [c["label"] for c in doc["campaign"]["configs"]] == ["cc-high", "codex-low"]
    plain = subprocess.run(_srb(state, "campaign", "status", "clients"), cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
    assert "cc-high" in plain.stdout and "codex-low" in plain.stdout and "100" in plain.stdout

    report = subprocess.run(_srb(state, "report", "--campaign", "clients", "--json"),
                            cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert report.returncode == 0, report.stderr
    table3 = next(t for t in json.loads(report.stdout)["tables"] if t["id"] == "table3")
    rows = {r["config"]: r for r in table3["rows"]}
    assert rows["cc-high"]["cost"] == pytest.approx(ledger[str(cc[0])])
    assert rows["codex-low"]["cost"] == pytest.approx(ledger[str(cx[0])])
    assert rows["cc-high"]["effort"] == "high" and rows["codex-low"]["effort"] == "low"
    assert rows["cc-high"]["score"] == 100.0 and rows["codex-low"]["accepted"] == 1
