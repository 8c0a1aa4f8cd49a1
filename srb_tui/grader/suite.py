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

import json
import math
import os
import re
import shutil
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox
from .envelope import StageEnvelope, utc_iso
from .module_env import (
    SUITE_SLOT,
    module_env,
)
from .procs import DEFAULT_GRACE_SEC, Completed, run_group

SUITE_SCHEMA = "swerefactor.behavioural-suite/1"
SCAN_SCHEMA = "swerefactor.scan-suite/1"
VERDICTS = ("pass", "fail", "skip", "error")
DEFAULT_TIMEOUT_SEC = 3600.0
MAX_RESULT_BYTES = 128 * 1024 * 1024
TAIL_BYTES = 4000
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SuiteError(Exception):
    """A suite.toml the runner cannot use; carries every problem found."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


@dataclass(frozen=True)
class Module:
    """One `[[module]]` entry, resolved against the suite folder."""

    id: str
    title: str
    weight: float
    dir: Path
    command: tuple[str, ...] | None
    timeout_sec: float
    env: dict[str, str]


@dataclass(frozen=True)
class Suite:
    """A loaded suite.toml (light validation; the host validates fully)."""

    path: Path
    root: Path
    task: str
    env: dict[str, str]
    modules: tuple[Module, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    lib_dir: str = "lib"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _env_table(value: object, where: str, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where} must be a table of strings")
        return {}
    env: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, str):
            env[str(key)] = item
        elif _is_number(item):
            env[str(key)] = str(item)
        else:
            problems.append(f"{where}.{key} must be a string")
    return env


def load_suite(path: str | os.PathLike[str], *, scan: bool = False) -> Suite:
    """Read and lightly validate a suite.toml (with ``scan``: an audit scan.toml, whose
    modules also get ``SRB_SCAN=1``); raises SuiteError listing every problem."""
    suite_path = Path(path)
    if suite_path.is_dir():
        suite_path = suite_path / "suite.toml"
    try:
        data = tomllib.loads(suite_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(suite_path, ["file not found"]) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(suite_path, [f"cannot read: {exc}"]) from None
    root = suite_path.resolve().parent
    problems: list[str] = []
    wanted = SCAN_SCHEMA if scan else SUITE_SCHEMA
    if data.get("schema") != wanted:
        problems.append(f"schema must be {wanted!r}, found {data.get('schema')!r}")
    task = data.get("task", "")
    if not isinstance(task, str):
        problems.append("task must be a string")
        task = ""
    default_timeout = data.get("default_timeout_sec", DEFAULT_TIMEOUT_SEC)
    if not _is_number(default_timeout) or default_timeout <= 0:
        problems.append("default_timeout_sec must be a number > 0")
        default_timeout = DEFAULT_TIMEOUT_SEC
    env = _env_table(data.get("env"), "env", problems)
    if scan:
        env["SRB_SCAN"] = "1"
    raw_modules = data.get("module")
    if not isinstance(raw_modules, list) or not raw_modules:
        problems.append("at least one [[module]] is required")
        raw_modules = []
    modules: list[Module] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_modules):
        where = f"module[{index}]"
        if not isinstance(raw, dict):
            problems.append(f"{where} must be a table")
            continue
        module_id = raw.get("id")
        if not isinstance(module_id, str) or not _TOKEN.match(module_id):
            problems.append(f"{where}.id must be a token (letters, digits, . _ -)")
            continue
        where = f"module {module_id!r}"
        if module_id in seen:
            problems.append(f"{where}: duplicate id")
            continue
        seen.add(module_id)
        title = raw.get("title", module_id)
        weight = raw.get("weight", 1.0)
        if not _is_number(weight) or not math.isfinite(weight) or weight < 0:
            problems.append(f"{where}: weight must be a number >= 0")
            weight = 0.0
        command = raw.get("command")
        if command is not None and (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            problems.append(f"{where}: command must be a non-empty list of strings")
            command = None
        rel_dir = raw.get("dir", f"modules/{module_id}")
        if not isinstance(rel_dir, str) or not rel_dir:
            problems.append(f"{where}: dir must be a string")
            rel_dir = f"modules/{module_id}"
        module_dir = (root / rel_dir).resolve()
        if module_dir != root and root not in module_dir.parents:
            problems.append(f"{where}: dir {rel_dir!r} leaves the suite folder")
        timeout = raw.get("timeout_sec", default_timeout)
        if not _is_number(timeout) or timeout <= 0:
            problems.append(f"{where}: timeout_sec must be a number > 0")
            timeout = default_timeout
        modules.append(
            Module(
                id=module_id,
                title=str(title),
                weight=float(weight),
                dir=module_dir,
                command=tuple(command) if command else None,
                timeout_sec=float(timeout),
                env=_env_table(raw.get("env"), f"{where}.env", problems),
            )
        )
    if problems:
        raise SuiteError(suite_path, problems)
    metadata = data.get("metadata")
    lib_dir = data.get("lib_dir", "lib")
    return Suite(
        path=suite_path,
        root=root,
        task=task,
        env=env,
        modules=tuple(modules),
        metadata=metadata if isinstance(metadata, dict) else {},
        lib_dir=lib_dir if isinstance(lib_dir, str) and lib_dir else "lib",
    )


# --------------------------------------------------------------------------- checks


def normalise_check(raw: object, index: int) -> dict[str, Any]:
    """One reported check made safe: unknown verdict => error, weight <= 0 => unscored."""
    if not isinstance(raw, dict):
        return {
            "id": f"#{index}",
            "verdict": "error",
            "weight": 1.0,
            "scored": True,
            "summary": f"check #{index} is not an object",
        }
    check: dict[str, Any] = {}
    problems: list[str] = []
    check_id = raw.get("id")
    if isinstance(check_id, str) and check_id:
        check["id"] = check_id
    else:
        check["id"] = f"#{index}"
        problems.append("check has no id")
    verdict = raw.get("verdict")
    if verdict in VERDICTS:
        check["verdict"] = verdict
    else:
        check["verdict"] = "error"
        check["reported_verdict"] = verdict
        problems.append(f"unknown verdict {verdict!r}")
    weight = raw.get("weight", 1.0)
    if not _is_number(weight) or not math.isfinite(weight):
        problems.append(f"weight {weight!r} is not a number")
        weight = 1.0
    check["weight"] = float(weight)
    check["scored"] = float(weight) > 0
    for key in ("summary", "detail", "evidence"):
        if key in raw:
            check[key] = raw[key]
    if problems:
        check["verdict"] = "error"
        reason = "; ".join(problems)
        summary = check.get("summary")
        check["summary"] = f"{reason}: {summary}" if isinstance(summary, str) else reason
    return check


def read_module_result(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any], list[Any], str]:
    """Parse a module's result file: (checks, metadata, notes, problem); problem '' if fine."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return [], {}, [], "no result written to $SRB_RESULT"
    except OSError as exc:
        return [], {}, [], f"result unreadable: {exc}"
    if size > MAX_RESULT_BYTES:
        return [], {}, [], f"result is {size} bytes, over the {MAX_RESULT_BYTES}-byte cap"
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [], {}, [], f"result is not valid JSON: {exc}"
    metadata: dict[str, Any] = {}
    notes: list[Any] = []
    raw_checks: list[Any]
    if isinstance(data, list):
        raw_checks = data
    elif isinstance(data, dict):
        meta = data.get("metadata", {})
        metadata = meta if isinstance(meta, dict) else {"value": meta}
        raw_notes = data.get("notes", [])
        notes = raw_notes if isinstance(raw_notes, list) else [raw_notes]
        found = data.get("checks", [])
        if not isinstance(found, list):
            return [], metadata, notes, "result 'checks' is not a list"
        raw_checks = found
    else:
        return [], {}, [], f"result is a JSON {type(data).__name__}, not an object or list"
    checks = [normalise_check(raw, index) for index, raw in enumerate(raw_checks)]
    return checks, metadata, notes, ""


def tally(checks: list[dict[str, Any]]) -> dict[str, int]:
    """Counts over scored checks (passed/failed/skipped/errored/scored) and observations."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errored": 0, "scored": 0, "observations": 0}
    names = {"pass": "passed", "fail": "failed", "skip": "skipped", "error": "errored"}
    for check in checks:
        if not check.get("scored"):
            counts["observations"] += 1
            continue
        counts["scored"] += 1
        counts[names[check["verdict"]]] += 1
    return counts


def module_rate(status: str, counts: Mapping[str, int]) -> float:
    """passed / scored for an ok module; 0 for an empty pool or any non-ok status."""
    if status != "ok" or counts["scored"] == 0:
        return 0.0
    return counts["passed"] / counts["scored"]


def summarise(units: list[dict[str, Any]]) -> dict[str, Any]:
    """Stage-level numbers: weighted rate and completeness over the module units."""
    weighted = [unit for unit in units if unit["weight"] > 0]
    total_weight = sum(unit["weight"] for unit in weighted)
    rate = (
        sum(unit["weight"] * unit["rate"] for unit in weighted) / total_weight
        if total_weight > 0
        else 0.0
    )
    complete = bool(weighted) and all(
        unit["status"] == "ok" and unit["scored"] > 0 and unit["passed"] == unit["scored"]
        for unit in weighted
    )
    return {
        "complete": complete,
        "rate": round(rate, 6),
        "modules_total": len(units),
        "modules_ok": sum(1 for unit in units if unit["status"] == "ok"),
        "modules_unreached": sum(1 for unit in units if unit["status"] == "unreached"),
        "checks_scored": sum(unit["scored"] for unit in units),
        "checks_passed": sum(unit["passed"] for unit in units),
    }


# --------------------------------------------------------------------------- running


def _seed_unit(module: Module) -> dict[str, Any]:
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


def _command_for(module: Module) -> tuple[list[str] | None, str]:
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
    suite: Suite,
    module: Module,
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
    suite: Suite,
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
