"""Shared code of the csvtab behavioural modules.

Every module is one case list (data/cases/<module>.json) run against
``$SRB_REPO/bin/csvtab`` and compared with the answers recorded from
State A (data/expected/<module>.json): stdout byte for byte, the exit
status, and a non-empty stderr whenever the status is not 0.

The submission is started through srb's launcher -- in a stage container its
in-process form ``srb_submission.run`` (on PYTHONPATH there; no second interpreter
per case), else the module contract's $SRB_SUBMISSION_RUN: as the submission's own uid, with a clean
environment (no SRB_* names, a PATH without the grader's private interpreter,
a private HOME), unable to read this suite or its recorded answers.  The
cases run in a copy of the inputs under $SRB_WORK, which that uid may read.
A tree whose bin/csvtab still starts with a python shebang is the
pre-migration program (State A, the oracle); the launcher runs that script
with the grader's own interpreter (--python) so the suite can score State A
against itself -- the interpreter itself stays out of the submission's
reach.  Stage I is what rejects such a tree.  Without either (a developer's
host, record.py) the program is started directly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:  # srb's in-process launcher, on PYTHONPATH in a stage container
    import srb_submission
except ImportError:
    srb_submission = None

PRIVATE_PYTHON_DIR = "/opt/srb/python/bin"
DEFAULT_LEDGER = "/tmp/srb-interpreter-ledger"
CASE_TIMEOUT_SEC = 20.0
SHOWN_BYTES = 1500


def suite_dir() -> Path:
    """The suite directory: $SRB_SUITE_DIR, else this file's grandparent."""
    env = os.environ.get("SRB_SUITE_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent


def load_cases(module: str) -> list[dict[str, Any]]:
    path = suite_dir() / "data" / "cases" / f"{module}.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["cases"])


def load_expected(module: str) -> dict[str, dict[str, Any]]:
    path = suite_dir() / "data" / "expected" / f"{module}.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["cases"])


def is_pre_migration(repo: Path) -> bool:
    """True when bin/csvtab is still a Python script (the State A oracle)."""
    try:
        with open(repo / "bin" / "csvtab", "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


LAUNCHER_SLACK_SEC = 10.0


def launcher(repo: Path, run_dir: Path | None = None, timeout: float | None = None,
             env: dict[str, str] | None = None) -> list[str]:
    """The argv that starts bin/csvtab (through srb's launcher when there is one)."""
    entry = str(repo / "bin" / "csvtab")
    run = os.environ.get("SRB_SUBMISSION_RUN")
    pre = is_pre_migration(repo)
    if not run:
        return [sys.executable, entry] if pre else [entry]
    argv = [run]
    if run_dir is not None:
        argv += ["--cwd", str(run_dir)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    for name, value in (env or {}).items():
        if name not in ("HOME", "PATH"):
            argv += ["--env", f"{name}={value}"]
    if pre:
        argv.append("--python")
    return [*argv, "--", entry]


def started_through() -> str:
    """How this module starts the submission (kept in the module result's metadata)."""
    if not os.environ.get("SRB_SUBMISSION_RUN"):
        return "directly"
    return "srb_submission.run" if srb_submission is not None else "srb-submission"


def clean_env(home: Path) -> dict[str, str]:
    """The environment a submission sees: no contract names, no private interpreter."""
    parts = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    path = os.pathsep.join(p for p in parts if p and p.rstrip("/") != PRIVATE_PYTHON_DIR)
    return {
        "PATH": path,
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def prepare_workdir(work: Path) -> Path:
    """Copy the case inputs into a scratch directory the cases run in."""
    run_dir = work / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(suite_dir() / "data" / "cases" / "inputs", run_dir / "inputs")
    (work / "home").mkdir(parents=True, exist_ok=True)
    return run_dir


def run_case(
    repo: Path, case: dict[str, Any], run_dir: Path, env: dict[str, str], timeout: float
) -> dict[str, Any]:
    """Run one case; returns exit status, stdout bytes and stderr bytes."""
    stdin = b""
    if case.get("stdin"):
        stdin = (run_dir / case["stdin"]).read_bytes()
    how = started_through()
    if how == "srb_submission.run":
        extra = {k: v for k, v in env.items() if k not in ("HOME", "PATH")}
        entry = str(repo / "bin" / "csvtab")
        proc = srb_submission.run([entry, *case["argv"]], cwd=run_dir, timeout=timeout,
                                  env=extra, input=stdin, python=is_pre_migration(repo))
    elif how == "srb-submission":
        proc = subprocess.run(
            launcher(repo, run_dir, timeout, env) + list(case["argv"]),
            input=stdin,
            capture_output=True,
            cwd=run_dir,
            env=dict(os.environ),
            timeout=timeout + LAUNCHER_SLACK_SEC,
        )
        if proc.returncode == 124 and b"srb-submission:" in proc.stderr:
            raise subprocess.TimeoutExpired(case["argv"], timeout)
    else:
        proc = subprocess.run(
            launcher(repo) + list(case["argv"]),
            input=stdin,
            capture_output=True,
            cwd=run_dir,
            env=env,
            timeout=timeout,
        )
    return {"exit": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def _show(data: bytes) -> str:
    text = data[:SHOWN_BYTES].decode("utf-8", errors="backslashreplace")
    return text + ("…[truncated]" if len(data) > SHOWN_BYTES else "")


def judge(case: dict[str, Any], want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """Compare one run with its recorded answer and produce a check."""
    expected_out = str(want["stdout"]).encode("utf-8")
    problems = []
    if got["exit"] != want["exit"]:
        problems.append(f"exit status {got['exit']}, expected {want['exit']}")
    if got["stdout"] != expected_out:
        problems.append("stdout differs")
    if want["exit"] != 0 and not got["stderr"].strip():
        problems.append("stderr is empty on an error")
    check: dict[str, Any] = {
        "id": case["id"],
        "verdict": "fail" if problems else "pass",
        "summary": "; ".join(problems) or "stdout and exit status match",
    }
    if problems:
        check["detail"] = (
            f"argv: {json.dumps(case['argv'], ensure_ascii=False)}"
            + (f" (stdin from {case['stdin']})" if case.get("stdin") else "")
            + f"\nexpected exit {want['exit']}, stdout:\n{_show(expected_out)}"
            + f"\nactual exit {got['exit']}, stdout:\n{_show(got['stdout'])}"
            + f"\nactual stderr:\n{_show(got['stderr'])}"
        )
    return check


def write_result(path: Path, checks: list[dict[str, Any]], meta: dict[str, Any],
                 notes: list[str]) -> None:
    """Write the module result atomically."""
    payload = {"checks": checks, "metadata": meta, "notes": notes}
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".result-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=1)
    os.replace(tmp, path)


def _ledger_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def run_module(module: str) -> int:
    """Entry point of every module's run.py."""
    repo = Path(os.environ["SRB_REPO"])
    result = Path(os.environ["SRB_RESULT"])
    work = Path(os.environ.get("SRB_WORK") or tempfile.mkdtemp(prefix="csvtab-suite-"))
    deadline = float(os.environ.get("SRB_MODULE_DEADLINE") or time.time() + 3600)
    ledger = Path(os.environ.get("SRB_LEDGER") or DEFAULT_LEDGER)
    ledger_before = _ledger_size(ledger)

    cases = load_cases(module)
    expected = load_expected(module)
    run_dir = prepare_workdir(work)
    env = clean_env(work / "home")
    oracle = is_pre_migration(repo)
    meta: dict[str, Any] = {
        "module": module,
        "cases": len(cases),
        "launcher": "pre-migration tree, grader interpreter" if oracle else "bin/csvtab",
        "started_through": started_through(),
    }
    notes: list[str] = []
    if oracle:
        notes.append("bin/csvtab is a Python script: ran it as the State A oracle")
    checks: list[dict[str, Any]] = []
    for case in cases:
        remaining = deadline - time.time() - 2.0
        if case["id"] not in expected:
            checks.append({"id": case["id"], "verdict": "error",
                           "summary": "no recorded expectation for this case"})
        elif remaining <= 0:
            checks.append({"id": case["id"], "verdict": "error",
                           "summary": "not run: module deadline reached"})
        else:
            try:
                got = run_case(repo, case, run_dir, env, min(CASE_TIMEOUT_SEC, remaining))
                checks.append(judge(case, expected[case["id"]], got))
            except subprocess.TimeoutExpired:
                checks.append({"id": case["id"], "verdict": "fail",
                               "summary": "timed out", "detail": f"argv: {case['argv']}"})
            except OSError as exc:
                checks.append({"id": case["id"], "verdict": "fail",
                               "summary": f"could not start bin/csvtab: {exc.strerror}"})
        write_result(result, checks, meta, notes)

    grown = _ledger_size(ledger) - ledger_before
    meta["interpreter_ledger_bytes"] = grown
    checks.append({
        "id": "interpreter-ledger",
        "verdict": "fail" if grown > 0 else "pass",
        "weight": 0,
        "summary": (f"a Python interpreter name was invoked ({grown} ledger bytes)"
                    if grown > 0 else "no interpreter shim was invoked"),
    })
    write_result(result, checks, meta, notes)
    return 0
