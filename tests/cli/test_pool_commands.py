"""`srb doctor`, `srb gc` and `srb runs list|show` over a pool, without Docker-in-Docker: node
``n1`` is srb's own engine by its socket, ``n2`` an address where nothing listens.

* doctor checks srb's own engine (the base image's source) and fails when it does not
  answer; a remote engine's fault is met with advice for a remote engine, not systemctl;
* gc names the node it could not visit (a text line; ``skipped_nodes`` in --json) and exits
  INFRA (it could not finish everywhere);
* the node a run was placed on is in `runs list` (text and --json) and text `runs show`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.store import Store
from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK
from tests.nodes.test_pool_upkeep import LOCAL_URL, pool_settings

OWN = "srb's engine (base image source)"


@pytest.mark.docker
def test_doctor_checks_srbs_engine_and_gives_remote_advice_for_a_remote_node(
        tmp_path: Path) -> None:
    settings = pool_settings(tmp_path)
    out = srb("--tasks", str(DEMO_TASK.parent), "doctor", "--json",
              state=settings.state_dir, env={"DOCKER_HOST": LOCAL_URL})
    assert out.returncode == codes.FAILED, out.stderr
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks[OWN]["ok"] and "srb/base:bookworm present" in checks[OWN]["detail"]
    assert checks["engine n1"]["ok"]
    n2 = checks["engine n2"]
    assert not n2["ok"] and "127.0.0.1" in n2["detail"]
    assert "listens" in n2["fix"]
    assert "systemctl" not in n2["fix"] + n2["detail"]


@pytest.mark.docker
def test_doctor_fails_when_srbs_own_engine_does_not_answer(tmp_path: Path) -> None:
    settings = pool_settings(tmp_path)
    socket_path = tmp_path / "no-such.sock"
    out = srb("doctor", state=settings.state_dir, env={"DOCKER_HOST": f"unix://{socket_path}"})
    assert out.returncode == codes.FAILED
    line = next(ln for ln in out.stdout.splitlines() if OWN in ln)
    assert line.startswith("✗") and str(socket_path) in line, out.stdout
    assert "Traceback" not in out.stderr


@pytest.mark.docker
def test_gc_names_the_node_it_could_not_visit_and_exits_infra(tmp_path: Path) -> None:
    settings = pool_settings(tmp_path)
    state = settings.state_dir
    text = srb("gc", state=state)
    assert text.returncode == codes.INFRA, text.stderr
    skipped = [ln for ln in text.stdout.splitlines() if "node n2" in ln]
    assert len(skipped) == 1 and "skipped" in skipped[0] and "127.0.0.1" in skipped[0]
    assert "refused" in skipped[0].lower() or "not reachable" in skipped[0]
    assert "gc did not finish" in text.stderr and "n2" in text.stderr
    doc_out = srb("gc", "--json", state=state)
    assert doc_out.returncode == codes.INFRA
    doc = json.loads(doc_out.stdout)
    assert doc["complete"] is False
    assert [s["node"] for s in doc["skipped_nodes"]] == ["n2"]
    assert doc["skipped_nodes"][0]["error"]


def test_runs_list_and_show_name_the_node(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()

    async def seed() -> None:
        async with await Store.open(state / "srb.sqlite3") as store:
            await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                        agent="untouched", run_id="r-20261205-120000-cc01",
                                        extra={"node": "gpu-box-2"})
            await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                        agent="untouched", run_id="r-20261205-120001-cc02")

    asyncio.run(seed())
    doc = json.loads(srb("runs", "list", "--json", state=state).stdout)
    assert {r["id"]: r["node"] for r in doc["runs"]} == {
        "r-20261205-120000-cc01": "gpu-box-2", "r-20261205-120001-cc02": "local"}
    listed = srb("runs", "list", state=state)  # piped: plain columns
    assert listed.returncode == 0
    header, *rows = listed.stdout.splitlines()
    assert header.split()[:5] == ["RUN", "TASK", "AGENT", "NODE", "STATUS"]
    assert {row.split()[0]: row.split()[3] for row in rows} == {
        "r-20261205-120000-cc01": "gpu-box-2", "r-20261205-120001-cc02": "local"}
    shown = srb("runs", "show", "r-20261205-120000-cc01", state=state)
    assert "  node: gpu-box-2" in shown.stdout.splitlines()
    shown_json = json.loads(srb("runs", "show", "r-20261205-120001-cc02", "--json",
                                state=state).stdout)
    assert shown_json["node"] == "local"
    for word, expected in (("node:gpu-box-2", ["r-20261205-120000-cc01"]),
                           ("node:local", ["r-20261205-120001-cc02"]),
                           ("node:n9", [])):
        quiet = srb("runs", "list", "-q", word, state=state)
        assert quiet.returncode == 0, quiet.stderr
        assert quiet.stdout.split() == expected, word
    bad = srb("runs", "list", "node:", state=state)
    assert bad.returncode == 2 and "node: needs a value" in bad.stderr
