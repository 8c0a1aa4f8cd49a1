"""One real graded run on the real engine, then everything issue 39 asks of it: its provenance
carries every field (stamped at launch and at each stage), ``srb report`` refuses to pool it
with a run of another grader build unless ``--mixed``, its ATIF validates, its Parquet gives
Table 2 in DuckDB, and run → published result files → ``srb import`` → report gives the
same row."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from srb_tui.grader.fingerprint import fingerprint
from srb_tui.reports.atif import problems
from srb_tui.service.provenance import source_commit, task_digest
from srb_tui.store import Store
from srb_tui.store.provenance import PROVENANCE, Provenance
from tests.conftest import BUILTIN_TASKS, DEMO_TASK, REPO

from .synth import Spec, add_run

pytestmark = pytest.mark.docker

LAUNCHED_AT: list[str] = []
STAGES = ("launch", "preparing", "agent", "audit", "behavioural", "verification")
LABELS = ("config", "harness", "model", "effort")


def _srb(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRB_")}
    return subprocess.run([sys.executable, "-m", "srb_tui", "--tasks", str(BUILTIN_TASKS),
                           "--state", str(state), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)


def _ok(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _numbers(state: Path, *words: str) -> dict[str, list[Any]]:
    """Table 2's and Table 3's rows without their label columns (what identifies a
    configuration differs between a run and its imported copy; the numbers may not)."""
    doc = _ok(_srb(state, "report", "--json", "--table", "table2", "--table", "table3",
                   *words))
    return {t["id"]: [[v for k, v in row.items() if k not in LABELS] for row in t["rows"]]
            for t in doc["tables"]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    state = tmp_path_factory.mktemp("prov") / "state"
    LAUNCHED_AT.append(source_commit())  # the tree may be committed while the run goes on
    run = _ok(_srb(state, "run", DEMO_TASK.name, "--agent", "replay:reference",
                   "--adversary-budget", "5", "--json"))["run"]
    assert run["status"] == "scored" and run["score"] == 100.0, run
    return state, str(run["id"])


def test_provenance_carries_every_field(graded: tuple[Path, str]) -> None:
    state, run_id = graded
    doc = _ok(_srb(state, "runs", "show", run_id, "--json"))
    prov = doc["provenance"]
    found = Provenance.read({PROVENANCE: prov, "provenance_stages": prov["stages"]})
    assert found is not None and found.missing() == []
    assert found.grader_fingerprint == fingerprint()
    assert found.task_digest == task_digest(DEMO_TASK)
    assert found.source_commit == LAUNCHED_AT[0]
    assert found.srb_version and found.client == "replay" and found.client_version
    assert found.agent.driver == "replay:reference"
    assert found.reviewer is not None and found.reviewer.model == "scripted"
    assert found.agent.model == ""  # a built-in agent names no model
    assert all(a.model and a.driver for a in found.adversaries), prov
    assert [a.role for a in found.adversaries] == [
        "f01-bytes-default-table", "f02-bytes-all-formats", "f03-quotes-and-line-ends",
        "f04-width-and-truncation", "f05-command-line", "f06-encodings"]
    assert (found.backend, found.node) == ("local", "local")
    assert {"env", "audit", "behavioural", "verification"} <= set(found.images)
    for role, ident in found.image_digests.items():
        assert ident.startswith("sha256:"), (role, ident)
    assert tuple(found.stages) == STAGES
    assert found.stages["preparing"].task_digest == found.task_digest
    assert "verification" in found.stages["verification"].images
    assert found.stages["audit"].grader_fingerprint == fingerprint()


def test_report_refuses_a_mixed_pool(graded: tuple[Path, str], tmp_path: Path) -> None:
    state, _run_id = graded
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "srb.sqlite3").write_bytes((state / "srb.sqlite3").read_bytes())

    async def other_build() -> None:
        async with await Store.open(mixed / "srb.sqlite3") as store:
            rid = await add_run(store, Spec("t1", "replay:a"))
            await store.runs.merge_extra(rid, {PROVENANCE: {"grader_fingerprint": "0123456789ab",
                                                            "task_digest": "sha256:00"}})

    asyncio.run(other_build())
    done = _srb(mixed, "report", "--json")
    assert done.returncode == 1, done.stderr
    assert f"{fingerprint()} × 1" in done.stderr and "0123456789ab × 1" in done.stderr
    doc = _ok(_srb(mixed, "report", "--json", "--mixed"))
    assert any("2 grader fingerprint(s)" in n for n in doc["notes"])


def test_exports_and_the_round_trip(graded: tuple[Path, str], tmp_path: Path) -> None:
    state, run_id = graded
    out = tmp_path / "export"
    done = _ok(_srb(state, "export", "-o", str(out), "--json"))
    assert done["atif"] == 1 and done["results"] == 1 and done["skipped"] == []
    trajectory = json.loads((out / "atif" / f"{run_id}.json").read_text())
    assert problems(trajectory) == []
    runs = out / "parquet" / "runs.parquet"
    assert duckdb.sql(f"SELECT config, outcome, grader_fingerprint, task_digest FROM '{runs}'"
                      ).fetchall() == [("replay:reference", "accepted", fingerprint(),
                                        task_digest(DEMO_TASK))]
    (images,), = duckdb.sql(f"SELECT image_digests FROM '{runs}'").fetchall()
    shown = _ok(_srb(state, "runs", "show", run_id, "--json"))["provenance"]
    assert json.loads(images) == {r: i["digest"] or i["image_id"]
                                  for r, i in shown["images"].items()}
    notes = _ok(_srb(state, "report", "--json"))["notes"]
    digest = task_digest(DEMO_TASK).removeprefix("sha256:")[:12]
    assert any(f"grader fingerprint {fingerprint()[:12]} × 1" in n
               and f"{DEMO_TASK.name} {digest} × 1" in n for n in notes), notes
    verifier = out / "results" / run_id / "verifier"
    assert {p.name for p in verifier.iterdir()} >= {"score.json", "reward.json",
                                                   "summary.txt"}
    assert json.loads((verifier / "reward.json").read_text())["score"] == 100.0
    beside = json.loads((out / "results" / run_id / "agent" / "trajectory.json").read_text())
    assert beside == trajectory  # Harbor's place for it, so the trial folder carries it
    again = tmp_path / "imported"
    imported = _srb(again, "import", str(out / "results"))
    assert imported.returncode == 0, imported.stderr
    assert _numbers(again) == _numbers(state)
    shown = _ok(_srb(again, "runs", "list", "--json"))
    rid = shown["runs"][0]["id"]
    prov = _ok(_srb(again, "runs", "show", rid, "--json"))["provenance"]
    assert prov["grader_fingerprint"] == fingerprint()  # carried through the import
