"""The audit scan (issue 11 point 4) in a real audit container: a fixture copy of the demo
task with a tests/audit/scan.toml whose module reports a failing advisory check. The check
reaches the reviewers' prompt as {{findings}} (failures first, passes counted), lands in
audit.json with a scan/ id, never touches the gate, and a scan.toml the runner refuses
fails the stage with a message naming the file."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.stages.audit import AUDIT
from srb_tui.service.grading.stages.audit_scan import ScanConfigError, render_findings
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.store import Store

from ..conftest import DEMO_TASK

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]
BASE_IMAGE = "srb/base:bookworm"
SCAN = """schema = "swerefactor.scan-suite/1"
task = "demo01-csvtab-python-to-node"
default_timeout_sec = 60

[[module]]
id = "leftovers"
title = "what is left of the Python"
weight = 1.0
"""
MODULE = r"""#!/bin/bash
set -u
if [ -e "$SRB_REPO/csvtab/cli.py" ]; then v=fail; s="csvtab/cli.py is still there"
else v=pass; s="no csvtab/cli.py"; fi
cat > "$SRB_RESULT" <<JSON
{"checks": [
  {"id": "py-left", "verdict": "$v", "summary": "$s (SRB_SCAN=${SRB_SCAN:-unset})"},
  {"id": "license", "verdict": "pass", "summary": "LICENSE unchanged"}
]}
JSON
"""


def _fixture(root: Path, scan: str) -> Task:
    task_dir = root / "task"
    shutil.copytree(DEMO_TASK, task_dir, ignore=shutil.ignore_patterns("submissions"))
    (task_dir / "tests" / "audit" / "scan.toml").write_text(scan)
    module = task_dir / "tests" / "audit" / "modules" / "leftovers"
    module.mkdir(parents=True)
    (module / "run.sh").write_text(MODULE)
    load = load_task(task_dir)
    assert load.task is not None and load.task.scan is not None, load.problems
    return load.task


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("scan")
    engine = DockerEngine(RunnerPool(2))
    store = await Store.open(root / "srb.sqlite3")
    yield {"root": root, "engine": engine, "store": store}
    await store.close()
    engine.close()


async def _audit(world: dict[str, Any], task: Task, name: str) -> tuple[Any, Path]:
    store: Store = world["store"]
    run = await store.runs.create_run(task_id=task.id, task_path=str(task.dir), agent="replay")
    run_dir = world["root"] / name
    run_dir.mkdir()
    untouched = DEMO_TASK / "submissions" / "untouched"
    outcome = await AUDIT.run(StageContext(
        engine=world["engine"], store=store, run_id=run.id, task=task, original=untouched,
        submission=untouched, run_dir=run_dir,
        images=StageImages(world["engine"], task, BASE_IMAGE, lambda e: None),
        publish=lambda e: None, environ={},
    ))  # fmt: skip
    return outcome, run_dir


async def test_a_failing_advisory_check_reaches_the_findings(world: dict[str, Any]) -> None:
    task = _fixture(world["root"] / "ok", SCAN)
    outcome, run_dir = await _audit(world, task, "run-ok")
    doc = outcome.envelope
    scan_checks = [c for c in doc["checks"] if str(c["id"]).startswith("scan/")]
    assert {c["id"]: c["verdict"] for c in scan_checks} == {
        "scan/leftovers/py-left": "fail", "scan/leftovers/license": "pass"}  # fmt: skip
    assert all(c["required"] is False for c in scan_checks)
    assert "SRB_SCAN=1" in scan_checks[0]["summary"]
    assert doc["metadata"]["scan"]["failed"] == 1 and doc["metadata"]["scan"]["ran"] is True
    assert any(u.get("kind") == "scan" and u["id"] == "leftovers" for u in doc["units"])
    assert outcome.audit_gate == "fail", "the untouched tree fails on its gates, not the scan"
    reviews = json.loads((run_dir / "audit-transcripts.json").read_text())
    prompt = json.dumps(reviews[0]["messages"][0])
    assert "[fail] scan/leftovers/py-left: csvtab/cli.py is still there" in prompt
    assert "1 passed, 1 failed" in prompt and "scan/leftovers/license" not in prompt
    assert (run_dir / "audit" / "review-1.jsonl").is_file()


async def test_a_scan_toml_the_runner_refuses_fails_the_stage(world: dict[str, Any]) -> None:
    bad = SCAN.replace("swerefactor.scan-suite/1", "swerefactor.behavioural-suite/1")
    task = _fixture(world["root"] / "bad", bad)
    with pytest.raises(ScanConfigError, match=r"tests/audit/scan\.toml cannot be used: schema"):
        await _audit(world, task, "run-bad")


async def test_findings_put_failures_first_and_warn_for_dead_modules() -> None:
    checks = [{"id": f"scan/m/p{i}", "verdict": "pass"} for i in range(3)]
    checks += [{"id": f"scan/m/f{i}", "verdict": "fail", "summary": "x"} for i in range(70)]
    checks.insert(0, {"id": "scan/m/e", "verdict": "error", "summary": "crashed"})
    units = [{"id": "m", "status": "ok", "passed": 3, "failed": 70, "errored": 1},
             {"id": "dead", "status": "error", "message": "exit 1"}]  # fmt: skip
    text = render_findings(checks, units).splitlines()
    assert text[0].startswith("Scan: 74 advisory check(s) from 2 module(s): 3 passed, 70 failed")
    assert text[1].startswith("WARNING: scan incomplete — dead: error")
    listed = [line for line in text if line.startswith("- [")]
    assert len(listed) == 60 and not any("[pass]" in line for line in listed)
    assert listed[:2] == ["- [error] scan/m/e: crashed", "- [fail] scan/m/f0: x"]
    assert text[-1] == "(+11 more not shown; all are in audit.json)"
