"""Helpers of the fault tests: drive the real ``srb`` CLI, read its store, judge a run
after a fault, and append each injection's outcome to the faults ledger.

The ledger (JSON lines, ``SRB_FAULTS_LEDGER`` or ``<tmp>/srb-faults-ledger.jsonl``) is
what ``bench/faults_report.py`` turns into the table of faults, outcomes and log lines
lost or duplicated.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEMO_TASK, REPO

TASK = DEMO_TASK.name
FULL = os.environ.get("SRB_FULL_FAULTS") == "1"
LEDGER_ENV = "SRB_FAULTS_LEDGER"
N_LINES = 120
LOUD_AGENT = (f"command:bash -c 'for i in $(seq 1 {N_LINES}); do echo line-$i; "
              "[ $((i % 20)) = 0 ] && sleep 0.2; done; echo done'")
LOUD_LINES = [f"line-{i}" for i in range(1, N_LINES + 1)] + ["done"]


@functools.cache
def fast_tasks() -> Path:
    """A task root holding demo01 with its behavioural suite cut to one module (the
    ``unicode`` one, ~15 s instead of ~100 s): the fault tests grade many times, and
    what they judge (resume, lines, one score) does not depend on the suite's size."""
    root = Path(tempfile.mkdtemp(prefix="srb-fault-tasks-"))
    dest = root / TASK
    shutil.copytree(DEMO_TASK, dest, ignore=shutil.ignore_patterns("__pycache__"))
    suite = dest / "tests" / "behavioural" / "suite.toml"
    head, *modules = suite.read_text(encoding="utf-8").split("[[module]]")
    kept = [m for m in modules if 'id = "unicode"' in m]
    assert len(kept) == 1, "demo01's suite no longer has a unicode module"
    suite.write_text(head + "[[module]]" + kept[0], encoding="utf-8")
    return root


def ledger_path() -> Path:
    return Path(os.environ.get(LEDGER_ENV) or Path(tempfile.gettempdir())
                / "srb-faults-ledger.jsonl")


@dataclass
class Outcome:
    """One injected fault and what came of it."""

    fault: str  # e.g. "sigkill", "dockerd-restart", "disk-full", "store-locked"
    point: str  # where it was injected
    result: str  # "resumed" | "invalid" | "refused" (cleanly, nothing changed) | "wrong"
    lines_lost: int = 0
    lines_duplicated: int = 0
    detail: str = ""

    def record(self) -> Outcome:
        with ledger_path().open("a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(self)) + "\n")
        return self


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("SRB_") or k in (LEDGER_ENV, "SRB_FULL_FAULTS")}
    return {**base, "PYTHONPATH": str(REPO), **(extra or {})}


def srb_argv(state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "srb_tui.cli", "--tasks", str(fast_tasks()),
            "--state", str(state), *args]


def srb(state: Path, *args: str, extra: dict[str, str] | None = None,
        timeout: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run(srb_argv(state, *args), env=env(extra), capture_output=True,
                          text=True, timeout=timeout, cwd=REPO, stdin=subprocess.DEVNULL)


def run_argv(agent: str, *, grade: bool = True) -> list[str]:
    args = ["run", TASK, "--agent", agent, "--budget", "120", "--adversary-budget", "5",
            "--json"]
    return args if grade else [*args, "--no-grade"]


def kill_at(state: Path, point: str, agent: str, *, grade: bool = True) -> None:
    """``srb run`` with the test-only fault point armed: it SIGKILLs itself there."""
    done = srb(state, *run_argv(agent, grade=grade), extra={"SRB_FAULT_KILL_AT": point})
    assert done.returncode == -signal.SIGKILL, (
        f"srb did not stop at {point}: rc {done.returncode}\n{done.stderr[-2000:]}")


def q(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return list(conn.execute(sql, params))
    finally:
        conn.close()


def only_run(state: Path) -> str:
    rows = q(state / "srb.sqlite3", "SELECT id FROM runs")
    assert len(rows) == 1, rows
    return str(rows[0][0])


def stdout_lines(state: Path, run_id: str) -> list[str]:
    return [str(r[0]) for r in q(state / "srb.sqlite3",
            "SELECT text FROM log_lines WHERE run_id = ? AND stream = 'stdout' ORDER BY seq",
            (run_id,))]


def line_damage(stored: list[str], expected: list[str]) -> tuple[int, int]:
    """(lines lost, lines duplicated) of ``stored`` against ``expected``."""
    have, want = Counter(stored), Counter(expected)
    lost = sum((want - have).values())
    dup = sum(max(0, have[k] - 1) for k in have if k in want)
    return lost, dup


def broken_json_files(run_dir: Path) -> list[str]:
    """Files in the run folder (not the submission) named *.json that do not parse: a
    half-written result file. Every JSON file srb writes there must parse."""
    bad = []
    if not run_dir.is_dir():
        return bad
    for path in run_dir.rglob("*.json"):
        rel = path.relative_to(run_dir)
        if rel.parts and rel.parts[0] == "submission":
            continue
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            bad.append(f"{rel}: {err}")
    return bad


def score_events(state: Path, run_id: str) -> int:
    return int(q(state / "srb.sqlite3",
                 "SELECT count(*) FROM events WHERE run_id = ? AND kind = 'score'",
                 (run_id,))[0][0])


def run_row(state: Path, run_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{state / 'srb.sqlite3'}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return dict(row)
    finally:
        conn.close()


def _holds(predicate: Any) -> bool:
    try:
        return bool(predicate())
    except (sqlite3.Error, OSError, AssertionError):
        return False  # the store is still being created, or the run is not there yet


def wait_for(predicate: Any, what: str, deadline_sec: float = 120.0) -> None:
    end = time.monotonic() + deadline_sec
    while not _holds(predicate):
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


def managed(label: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-a", "--filter", "label=srb.managed=1",
                          "--filter", f"label={label}", "--format", "{{.Names}}"],
                         capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def remove_run_containers(run_id: str) -> None:
    """Remove every container of ``run_id`` (a test's own cleanup after engine faults)."""
    for name in managed(f"srb.run={run_id}"):
        subprocess.run(["docker", "rm", "-fv", name], capture_output=True, check=False)


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[None]:
    """A small tmpfs mounted on ``folder`` (a file system that can fill up); needs root
    and mount rights: the test is skipped, saying so, where they are missing."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {err}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def resize(folder: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(folder)], check=True,
                   capture_output=True)
