"""Run the demo task's behavioural modules on the host, the way the grader does.

Each module gets the contract environment (SRB_REPO, SRB_RESULT, ...) and runs
as its own process with the interpreter that runs the tests standing in for the
grader's private one.  A directory with a recording ``python3`` shim can be put
first on PATH to imitate the Stage II image, where Python is not available.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TASK_DIR = Path(__file__).resolve().parents[2] / "tasks" / "demo01-csvtab-python-to-node"
SUITE_DIR = TASK_DIR / "tests" / "behavioural"
SUBMISSIONS = TASK_DIR / "submissions"
PRIVATE_PYTHON = "/opt/srb/python/bin/python3"
MODULE_TIMEOUT_SEC = 300

SHIM = """#!/bin/sh
printf '%s %s\\n' "$0" "$*" >> "{ledger}"
echo "$0: python is not available" >&2
exit 127
"""


@dataclass
class ModuleRun:
    """One module's outcome: its exit status and the checks it wrote."""

    module: str
    returncode: int
    checks: list[dict[str, Any]]
    metadata: dict[str, Any]

    def scored(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if float(c.get("weight", 1.0)) > 0]

    def rate(self) -> float:
        scored = self.scored()
        if not scored:
            return 0.0
        return sum(1 for c in scored if c["verdict"] == "pass") / len(scored)

    def failed_ids(self) -> list[str]:
        return [c["id"] for c in self.scored() if c["verdict"] != "pass"]


def suite() -> dict[str, Any]:
    with open(SUITE_DIR / "suite.toml", "rb") as handle:
        return tomllib.load(handle)


def copy_tree(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def make_shim_dir(where: Path, ledger: Path) -> Path:
    """A directory holding python/python3 shims that record and exit 127."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3", "python3.11"):
        shim = where / name
        shim.write_text(SHIM.format(ledger=ledger))
        shim.chmod(0o755)
    return where


def run_suite(tree: Path, scratch: Path, shim_python: bool = True,
              only: tuple[str, ...] = ()) -> dict[str, ModuleRun]:
    """Run the modules (all, or those in *only*) against a copy of *tree*."""
    spec = suite()
    repo = copy_tree(tree, scratch / "repo")
    original = copy_tree(SUBMISSIONS / "untouched", scratch / "original")
    ledger = scratch / "ledger"
    path = os.environ.get("PATH", "/usr/bin:/bin")
    if shim_python:
        path = str(make_shim_dir(scratch / "shims", ledger)) + os.pathsep + path
    suite_work = scratch / "suite-work"
    suite_work.mkdir()
    procs = {}
    for module in spec["module"]:
        mid = module["id"]
        if only and mid not in only:
            continue
        work = scratch / "work" / mid
        work.mkdir(parents=True)
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in spec.get("env", {}).items()})
        env.update({
            "PATH": path,
            "SRB_REPO": str(repo),
            "SRB_ORIGINAL": str(original),
            "SRB_MODULE_DIR": str(SUITE_DIR / "modules" / mid),
            "SRB_MODULE_ID": mid,
            "SRB_SUITE_DIR": str(SUITE_DIR),
            "SRB_WORK": str(work),
            "SRB_SUITE_WORK": str(suite_work),
            "SRB_RESULT": str(work / "result.json"),
            "SRB_MODULE_TIMEOUT_SEC": str(MODULE_TIMEOUT_SEC),
            "SRB_MODULE_DEADLINE": str(time.time() + MODULE_TIMEOUT_SEC),
            "SRB_LEDGER": str(ledger),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TZ": "UTC",
            "LC_ALL": "C.UTF-8",
        })
        command = [sys.executable if a == PRIVATE_PYTHON else a
                   for a in module.get("command", ["run.py"])]
        procs[mid] = subprocess.Popen(command, cwd=SUITE_DIR / "modules" / mid, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    runs = {}
    for mid, proc in procs.items():
        output, _ = proc.communicate(timeout=MODULE_TIMEOUT_SEC)
        result_path = scratch / "work" / mid / "result.json"
        if not result_path.exists():
            raise AssertionError(f"module {mid} wrote no result:\n{output.decode()}")
        data = json.loads(result_path.read_text(encoding="utf-8"))
        runs[mid] = ModuleRun(mid, proc.returncode, data["checks"], data["metadata"])
    return runs
