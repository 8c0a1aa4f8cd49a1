"""Campaigns beyond one machine (issue 24), ``srb campaign`` in a subprocess as an operator
runs it, on DinD nodes made by the test (``dind.py``). Both cases are ``SRB_MULTINODE=1``.

* On a three-node **Swarm** (``kind = "swarm"``: srb takes the manager's ready nodes), the
  demo's reference, untouched and wrong submissions land on three different nodes and end
  with the outcomes they have locally; nothing of srb is left on any node.
* srb **killed mid-campaign** while every cell's agent runs on its own node of a three-engine
  pool: ``srb campaign resume`` re-attaches to each run on its node (the same run, one
  attempt per cell, the agent's output collected from the container that kept running).
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
from tests.nodes import dind
from tests.nodes.conftest import multinode
from tests.nodes.pool import srb_containers, write_pool_config, write_swarm_config
from tests.store_reader import store_rows

pytestmark = [pytest.mark.docker, multinode]

DEADLINE_SEC = 2400
LOCAL_OUTCOME = {"reference": "accepted", "untouched": "blindness", "wrong": "behavioural_fail"}


def _srb(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(BUILTIN_TASKS),
            "--state", str(state), *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _campaign(path: Path, configs: dict[str, str], **keys: object) -> Path:
    head = "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
    path.write_text('[campaign]\nname = "nodes"\ntasks = ["demo01-*"]\nrepeats = 1\n'
                    f"max_parallel = {len(configs)}\n{head}\n" + "".join(
                        f'[[config]]\nlabel = "{label}"\nagent = "{agent}"\n\n'
                        for label, agent in configs.items()))
    return path


CELLS = ("SELECT c.config, c.state, c.attempts, c.run_id, r.status, r.valid, "
         "json_extract(r.extra, '$.node') FROM campaign_cells c LEFT JOIN runs r "
         "ON r.id = c.run_id ORDER BY c.position")


def _outcomes(state: Path) -> dict[str, dict[str, int]]:
    report = subprocess.run(_srb(state, "report", "--campaign", "nodes", "--json"),
                            env=_env(), capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    funnel = next(t for t in json.loads(report.stdout)["tables"] if t["id"] == "table2")
    return {row["config"]: row for row in funnel["rows"]}


def test_a_campaign_on_a_three_node_swarm_lands_on_every_node_and_scores_as_locally(
        tmp_path: Path) -> None:
    with dind.cluster(3, prefix="srbsw") as made:
        manager = dind.join_swarm(made)
        state = tmp_path / "state"
        write_swarm_config(state, manager)
        plan = _campaign(tmp_path / "swarm.toml",
                         {k: f"replay:{k}" for k in LOCAL_OUTCOME}, adversary_budget_sec=15)
        clock = time.monotonic()
        done = subprocess.run(_srb(state, "campaign", "run", str(plan)), env=_env(),
                              capture_output=True, text=True, timeout=DEADLINE_SEC)
        took = time.monotonic() - clock
        assert done.returncode == 0, done.stderr[-3000:]
        cells = store_rows(state / "srb.sqlite3", CELLS)
        assert {c[1] for c in cells} == {"done"} and len(cells) == 3, cells
        assert all(c[4] == "scored" and c[5] == 1 for c in cells), cells
        nodes = {str(c[6]) for c in cells}
        assert len(nodes) == 3 and "None" not in nodes, cells  # one cell per Swarm node
        funnel = _outcomes(state)
        for label, outcome in LOCAL_OUTCOME.items():
            assert funnel[label]["runs"] == 1 and funnel[label][outcome] == 1, funnel[label]
        for host in made.hosts:
            assert srb_containers(host) == [], host
        print(f"\nswarm campaign: 3 cells on {sorted(nodes)} in {took:.0f} s")


AGENT = "command:bash -c 'sleep 150; echo from-the-node > node-note.txt'"


def test_srb_killed_mid_campaign_reattaches_to_its_runs_on_every_node(tmp_path: Path) -> None:
    with dind.cluster(3, prefix="srbrc") as made:
        state = tmp_path / "state"
        db = state / "srb.sqlite3"
        write_pool_config(state, made.hosts)
        plan = _campaign(tmp_path / "restart.toml",
                         {f"sleeper{n}": AGENT for n in (1, 2, 3)}, budget_sec=600)
        first = subprocess.Popen(_srb(state, "campaign", "run", str(plan)), env=_env(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        placed: list[tuple[object, ...]] = []
        try:
            deadline = time.monotonic() + 900
            while time.monotonic() < deadline and first.poll() is None:
                placed = store_rows(db, CELLS)
                if len(placed) == 3 and all(c[4] == "agent" and c[6] for c in placed):
                    break
                time.sleep(0.5)  # polling the store of another process
            else:
                err = first.stderr.read().decode()[-2000:] if first.stderr and \
                    first.poll() is not None else "timeout"
                raise AssertionError(f"the agents never all ran: {placed} {err}")
            first.send_signal(signal.SIGKILL)  # srb dies; every node's agent keeps running
        finally:
            if first.poll() is None:
                first.kill()
            first.wait(30)
        before = {str(c[3]): str(c[6]) for c in placed}
        assert len(set(before.values())) == 3, placed  # one agent on each node
        for host in made.hosts:
            assert srb_containers(host), f"the agent on {host} did not outlive srb"

        resume = subprocess.run(_srb(state, "campaign", "resume", "nodes"), env=_env(),
                                capture_output=True, text=True, timeout=DEADLINE_SEC)
        assert resume.returncode == 0, resume.stderr[-3000:]
        cells = store_rows(db, CELLS)
        assert {c[1] for c in cells} == {"done"}, cells
        # the same run on the same node for every cell: re-attached, never replaced
        assert {str(c[3]): str(c[6]) for c in cells} == before, (cells, before)
        assert all(c[2] == 1 and c[4] == "scored" for c in cells), cells
        for run_id in before:
            note = state / "runs" / run_id / "submission" / "node-note.txt"
            assert note.read_text().strip() == "from-the-node", run_id
        for host in made.hosts:
            assert srb_containers(host) == [], host
