"""Stage II: run a behavioural suite's modules and record an honest stage result.

Module contract (shared/REFERENCE.md, "Stage II"): every module is seeded `unreached` and the
result file is rewritten after each module; a module runs as its own process group with its
folder as cwd and the `SRB_*` contract in its environment; it writes ``$SRB_RESULT`` (an
object with ``checks`` or a bare list of checks); the group is reaped (TERM, 5 s, KILL) before
the result is read. Statuses: ok, timeout (recorded checks are kept), error, unreached; every
non-ok status scores rate 0 and keeps its weight. Module rate = passed / scored checks (skips
stay in the denominator, an empty pool is 0); the stage is complete only when every weighted
module is ok with every scored check passed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from . import sandbox
from .envelope import StageEnvelope, utc_iso
from .module_env import (
    SUITE_SLOT,
    module_env,
)
from .procs import DEFAULT_GRACE_SEC, Completed, run_group
from .suite_checks import module_rate, read_module_result, summarise, tally
from .suite_manifest import SuiteManifest, SuiteModule

TAIL_BYTES = 4000


def _seed_unit(module: SuiteModule) -> dict[str, Any]:
    return {
        "id": module.id,
        "title": module.title,
        "weight": module.weight,
        "status": "unreached",
        "rate": 0.0,
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "errored": 0,
        "scored": 0,
        "observations": 0,
        "timeout_sec": module.timeout_sec,
        "message": "not run",
    }


def _command_for(module: SuiteModule) -> tuple[list[str] | None, str]:
    if module.command:
        return list(module.command), ""
    if (module.dir / "run.sh").is_file():
        return ["bash", "run.sh"], ""
    if (module.dir / "run.py").is_file():
        return [sys.executable, "run.py"], ""
    return None, f"no command: neither run.sh nor run.py in {module.dir}"


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _status_of(done: Completed, problem: str, check_count: int) -> tuple[str, str]:
    """(status, message) for a finished module run."""
    if done.start_error is not None:
        return "error", f"could not start: {done.start_error}"
    if done.timed_out:
        return "timeout", f"timed out; {check_count} recorded checks kept" + (
            f" ({problem})" if problem else ""
        )
    if done.returncode is not None and done.returncode < 0:
        hint = " (out of memory?)" if done.signal_name == "SIGKILL" else ""
        return "error", f"killed by {done.signal_name}{hint}"
    if problem:
        if problem.startswith("no result") and done.returncode == 0:
            problem = "exited 0 but " + problem
        elif problem.startswith("no result"):
            problem = f"exited {done.returncode} and " + problem
        return "error", problem
    return "ok", f"exit {done.returncode}; {check_count} checks"


def run_module(
    suite: SuiteManifest,
    module: SuiteModule,
    *,
    repo: Path,
    original: Path | None,
    work_root: Path,
    grace_sec: float = DEFAULT_GRACE_SEC,
    private_root: Path | None = None,
    keep_env: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run one module; returns its unit record and its checks (tagged with the module id).

    ``work_root`` holds $SRB_WORK and $SRB_SUITE_WORK (submission code may read there, as
    the module's case inputs live there); ``private_root`` (default: ``work_root``) the
    logs, the module's HOME and $SRB_RESULT, out of the submission's reach. When the module
    has ended, every process of the submission uid is killed and its scratch wiped."""
    unit = _seed_unit(module)
    private = private_root or work_root
    work = work_root / "modules" / module.id
    suite_work = work_root / "suite"
    logs = private / "logs"
    home = private / "home" / module.id
    result = private / "results" / f"{module.id}.json"
    shutil.rmtree(work, ignore_errors=True)  # each module starts with an empty $SRB_WORK
    for folder in (work, suite_work, logs, result.parent, home):
        folder.mkdir(parents=True, exist_ok=True)
    result.unlink(missing_ok=True)
    started = time.time()
    unit["started_at"] = utc_iso(started)
    argv, command_problem = _command_for(module)
    stdout_log, stderr_log = logs / f"{module.id}.stdout", logs / f"{module.id}.stderr"
    unit["stdout_log"], unit["stderr_log"] = str(stdout_log), str(stderr_log)
    if argv is None:
        unit.update(status="error", message=command_problem, duration_sec=0.0)
        return unit, []
    if not module.dir.is_dir():
        unit.update(status="error", message=f"module folder {module.dir} does not exist")
        unit["duration_sec"] = 0.0
        return unit, []
    unit["command"] = argv
    env = module_env(
        suite,
        module,
        repo=repo,
        original=original,
        work=work,
        suite_work=suite_work,
        result=result,
        deadline=started + module.timeout_sec,
        home=home,
        keep=keep_env,
    )
    with stdout_log.open("wb") as out, stderr_log.open("wb") as err:
        done = run_group(
            argv,
            cwd=str(module.dir),
            env=env,
            timeout_sec=module.timeout_sec,
            stdout=out,
            stderr=err,
            grace_sec=grace_sec,
        )
    leftover = end_submission()
    if leftover:
        unit["submission_leftovers"] = leftover
    checks: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {}
    notes: list[Any] = []
    problem = ""
    if done.start_error is None:
        checks, metadata, notes, problem = read_module_result(result)
    status, message = _status_of(done, problem, len(checks))
    counts = tally(checks)
    unit.update(counts)
    unit.update(
        status=status,
        message=message,
        rate=round(module_rate(status, counts), 6),
        exit_code=done.returncode,
        signal=done.signal_name,
        timed_out=done.timed_out,
        reaped=done.reaped,
        duration_sec=round(done.duration_sec, 3),
        stderr_tail=_tail(stderr_log),
    )
    if metadata:
        unit["metadata"] = metadata
    if notes:
        unit["notes"] = notes
    tagged = [{"module": module.id, **check} for check in checks]
    return unit, tagged


def end_submission() -> str:
    """Kill whatever the submission uid left running and wipe its scratch; a note on what
    was found ('' when nothing was left)."""
    if not sandbox.enabled():
        return ""
    uid, _ = sandbox.slot_ids(SUITE_SLOT)
    left = len(sandbox.uid_processes(uid))
    gone = sandbox.reset(SUITE_SLOT)
    if not gone:
        return f"{left} submission processes outlived the module and could not all be killed"
    return f"{left} submission processes outlived the module; killed" if left else ""


def stage_submission(source: Path, repo: Path) -> None:
    """Copy the submission (read-only, root-owned) to ``repo`` as the submission uid, so it
    owns its private copy (in the size-limited workspace tmpfs)."""
    if not sandbox.enabled():
        shutil.copytree(source, repo, symlinks=True, dirs_exist_ok=True)
        return
    if sandbox.copy_as_slot(SUITE_SLOT, source, repo) != 0:
        raise OSError(f"cannot copy {source} to {repo} as the submission uid")


def run_suite(
    suite: SuiteManifest,
    *,
    repo: Path,
    original: Path | None,
    result_path: Path,
    work_root: Path,
    task: str | None = None,
    grace_sec: float = DEFAULT_GRACE_SEC,
    private_root: Path | None = None,
    keep_env: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Run every module in order, rewriting `result_path` after each; returns the envelope."""
    envelope = StageEnvelope(stage="behavioural", task=task or suite.task)
    envelope.units = [_seed_unit(module) for module in suite.modules]
    envelope.metadata = {"suite": str(suite.path), **summarise(envelope.units)}
    envelope.write(result_path)
    for index, module in enumerate(suite.modules):
        # Still "unreached" in the checkpoint: if the stage dies now, this module has no outcome.
        envelope.units[index] = {
            **envelope.units[index],
            "started_at": utc_iso(),
            "message": "started; no outcome recorded (the stage stopped while it ran)",
        }
        envelope.write(result_path)
        unit, checks = run_module(
            suite,
            module,
            repo=repo.resolve(),
            original=original.resolve() if original is not None else None,
            work_root=work_root.resolve(),
            grace_sec=grace_sec,
            private_root=private_root.resolve() if private_root is not None else None,
            keep_env=keep_env,
        )
        envelope.units[index] = unit
        envelope.checks.extend(checks)
        envelope.metadata = {"suite": str(suite.path), **summarise(envelope.units)}
        envelope.write(result_path)
    envelope.finish("ok")
    envelope.write(result_path)
    return envelope.to_dict()


def write_suite_error(result_path: Path, task: str, message: str) -> dict[str, Any]:
    """Record a stage that could not run its suite at all (status error)."""
    envelope = StageEnvelope(stage="behavioural", task=task)
    envelope.notes.append(message)
    envelope.metadata = {"complete": False, "rate": 0.0}
    envelope.finish("error")
    envelope.write(result_path)
    return envelope.to_dict()
