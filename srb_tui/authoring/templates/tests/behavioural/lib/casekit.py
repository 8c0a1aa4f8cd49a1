"""Shared code of this task's behavioural modules (written by ``srb tasks new``).

What the program is comes from ``data/program.json``, not from this file:

* ``entry``: the program under test, a path inside the tree (e.g. ``bin/tool``);
* ``oracle_shebang_words``: words whose presence in the entry's first line marks the
  pre-migration program (State A itself);
* ``oracle_python``: whether such a State A entry is a Python script that the grader's own
  interpreter runs (so the suite can score State A against itself in an image where
  ``python3`` is only a shim);
* ``case_timeout_sec``: how long one case may run.

A module is one case list (``data/cases/<module>.json``: ``{"cases": [{"id", "argv",
"stdin"?}]}``) run against ``$SRB_REPO/<entry>`` with the working directory a scratch copy
of ``data/cases/inputs/`` and compared with the answers recorded from State A
(``data/expected/<module>.json``): stdout byte for byte, the exit status, and a non-empty
stderr whenever the status is not 0.

The program is started through srb's launcher (``srb_submission.run`` in a stage container,
else ``$SRB_SUBMISSION_RUN``): as the submission's own uid, with a clean environment, unable
to read this suite or its answers. Without either (``lib/record.py`` on the author's
machine) it is started directly.
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
    import srb_submission  # type: ignore[import-not-found]
except ImportError:
    srb_submission = None

PRIVATE_PYTHON_DIR = "/opt/srb/python/bin"
DEFAULT_LEDGER = "/tmp/srb-interpreter-ledger"
SHOWN_BYTES = 1500
LAUNCHER_SLACK_SEC = 10.0


def suite_dir() -> Path:
    """The suite directory: $SRB_SUITE_DIR, else this file's grandparent."""
    env = os.environ.get("SRB_SUITE_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent


def program() -> dict[str, Any]:
    """``data/program.json``: the entry point and how State A is recognised."""
    path = suite_dir() / "data" / "program.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("entry"), str):
        raise SystemExit(f"{path}: needs an object with a string 'entry'")
    return doc


def load_cases(module: str) -> list[dict[str, Any]]:
    path = suite_dir() / "data" / "cases" / f"{module}.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["cases"])


def load_expected(module: str) -> dict[str, dict[str, Any]]:
    path = suite_dir() / "data" / "expected" / f"{module}.json"
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8"))["cases"])


def entry_path(repo: Path) -> Path:
    return repo / str(program()["entry"])


def is_pre_migration(repo: Path) -> bool:
    """True when the entry's first line names State A's interpreter (the oracle)."""
    words = [str(w).encode() for w in program().get("oracle_shebang_words", [])]
    try:
        with open(entry_path(repo), "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and any(word in first for word in words)


def python_oracle(repo: Path) -> bool:
    """State A's entry is a Python script the grader's interpreter runs."""
    return bool(program().get("oracle_python")) and is_pre_migration(repo)


def started_through() -> str:
    """How this module starts the submission (kept in the module result's metadata)."""
    if not os.environ.get("SRB_SUBMISSION_RUN"):
        return "directly"
    return "srb_submission.run" if srb_submission is not None else "srb-submission"


def clean_env(home: Path) -> dict[str, str]:
    """The environment a submission sees: no contract names, no private interpreter."""
    parts = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    path = os.pathsep.join(p for p in parts if p and p.rstrip("/") != PRIVATE_PYTHON_DIR)
    return {"PATH": path, "HOME": str(home), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
            "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}


def prepare_workdir(work: Path) -> Path:
    """Copy the case inputs (if any) into the scratch directory the cases run in."""
    run_dir = work / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    inputs = suite_dir() / "data" / "cases" / "inputs"
    if inputs.is_dir():
        shutil.copytree(inputs, run_dir / "inputs")
    else:
        (run_dir / "inputs").mkdir(parents=True)
    (work / "home").mkdir(parents=True, exist_ok=True)
    return run_dir


def _launcher_argv(repo: Path, run_dir: Path, timeout: float, env: dict[str, str]) -> list[str]:
    argv = [os.environ["SRB_SUBMISSION_RUN"], "--cwd", str(run_dir), "--timeout", f"{timeout:g}"]
    for name, value in env.items():
        if name not in ("HOME", "PATH"):
            argv += ["--env", f"{name}={value}"]
    if python_oracle(repo):
        argv.append("--python")
    return [*argv, "--", str(entry_path(repo))]


def run_case(repo: Path, case: dict[str, Any], run_dir: Path, env: dict[str, str],
             timeout: float) -> dict[str, Any]:
    """Run one case; returns exit status, stdout bytes and stderr bytes."""
    stdin = (run_dir / case["stdin"]).read_bytes() if case.get("stdin") else b""
    argv = [str(a) for a in case["argv"]]
    how = started_through()
    if how == "srb_submission.run":
        extra = {k: v for k, v in env.items() if k not in ("HOME", "PATH")}
        proc = srb_submission.run([str(entry_path(repo)), *argv], cwd=run_dir, timeout=timeout,
                                  env=extra, input=stdin, python=python_oracle(repo))
    elif how == "srb-submission":
        proc = subprocess.run(_launcher_argv(repo, run_dir, timeout, env) + argv, input=stdin,
                              capture_output=True, cwd=run_dir, env=dict(os.environ),
                              timeout=timeout + LAUNCHER_SLACK_SEC)
        if proc.returncode == 124 and b"srb-submission:" in proc.stderr:
            raise subprocess.TimeoutExpired(argv, timeout)
    else:
        start = [sys.executable] if python_oracle(repo) else []
        proc = subprocess.run([*start, str(entry_path(repo)), *argv], input=stdin,
                              capture_output=True, cwd=run_dir, env=env, timeout=timeout)
    return {"exit": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def _show(data: bytes) -> str:
    text = data[:SHOWN_BYTES].decode("utf-8", errors="backslashreplace")
    return text + ("…[truncated]" if len(data) > SHOWN_BYTES else "")


def stdout_of(answer: dict[str, Any]) -> bytes:
    """A recorded stdout: ``stdout`` (UTF-8 text) or ``stdout_hex`` (any bytes)."""
    if "stdout_hex" in answer:
        return bytes.fromhex(str(answer["stdout_hex"]))
    return str(answer["stdout"]).encode("utf-8")


def judge(case: dict[str, Any], want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """Compare one run with its recorded answer and produce a check."""
    expected_out = stdout_of(want)
    problems = []
    if got["exit"] != want["exit"]:
        problems.append(f"exit status {got['exit']}, expected {want['exit']}")
    if got["stdout"] != expected_out:
        problems.append("stdout differs")
    if want["exit"] != 0 and not got["stderr"].strip():
        problems.append("stderr is empty on an error")
    check: dict[str, Any] = {"id": case["id"], "verdict": "fail" if problems else "pass",
                             "summary": "; ".join(problems) or "stdout and exit status match"}
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


def _one(repo: Path, case: dict[str, Any], want: dict[str, Any] | None, run_dir: Path,
         env: dict[str, str], remaining: float, limit: float) -> dict[str, Any]:
    if want is None:
        return {"id": case["id"], "verdict": "error",
                "summary": "no recorded expectation for this case (run lib/record.py)"}
    if remaining <= 0:
        return {"id": case["id"], "verdict": "error",
                "summary": "not run: module deadline reached"}
    try:
        return judge(case, want, run_case(repo, case, run_dir, env, min(limit, remaining)))
    except subprocess.TimeoutExpired:
        return {"id": case["id"], "verdict": "fail", "summary": "timed out",
                "detail": f"argv: {case['argv']}"}
    except OSError as exc:
        return {"id": case["id"], "verdict": "fail",
                "summary": f"could not start the entry point: {exc.strerror}"}


def run_module(module: str) -> int:
    """Entry point of every module's run.py."""
    repo = Path(os.environ["SRB_REPO"])
    result = Path(os.environ["SRB_RESULT"])
    work = Path(os.environ.get("SRB_WORK") or tempfile.mkdtemp(prefix="srb-suite-"))
    deadline = float(os.environ.get("SRB_MODULE_DEADLINE") or time.time() + 3600)
    ledger = Path(os.environ.get("SRB_LEDGER") or DEFAULT_LEDGER)
    ledger_before = _ledger_size(ledger)
    limit = float(program().get("case_timeout_sec", 20))
    cases, expected = load_cases(module), load_expected(module)
    run_dir = prepare_workdir(work)
    env = clean_env(work / "home")
    oracle = is_pre_migration(repo)
    meta: dict[str, Any] = {"module": module, "cases": len(cases), "entry": program()["entry"],
                            "started_through": started_through()}
    notes = ["the entry point is State A's (pre-migration) program"] if oracle else []
    checks: list[dict[str, Any]] = []
    for case in cases:
        remaining = deadline - time.time() - 2.0
        checks.append(_one(repo, case, expected.get(case["id"]), run_dir, env, remaining, limit))
        write_result(result, checks, meta, notes)
    grown = _ledger_size(ledger) - ledger_before
    meta["interpreter_ledger_bytes"] = grown
    checks.append({
        "id": "interpreter-ledger", "verdict": "fail" if grown > 0 else "pass", "weight": 0,
        "summary": (f"a shimmed interpreter name was invoked ({grown} ledger bytes)"
                    if grown > 0 else "no interpreter shim was invoked"),
    })
    write_result(result, checks, meta, notes)
    return 0
