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
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..boundary import sandbox
from ..boundary.module_boundary import (
    SuiteWatch,
    boundary_for,
    resolve_command,
    share_folder,
    tamper_message,
)
from ..boundary.procs import DEFAULT_GRACE_SEC, Completed, run_group
from ..envelope import StageEnvelope, encode_checks, utc_iso
from .background import Background
from .checks import module_rate, parse_module_result, read_result_bytes, summarise, tally
from .manifest import SuiteManifest, SuiteModule
from .module_end import boundary_note, end_submission, root_entries, sandbox_hint
from .module_env import (
    SUITE_SLOT,
    module_env,
)
from .phases import Phases

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


def run_module_encoded(
    suite: SuiteManifest,
    module: SuiteModule,
    *,
    repo: Path,
    original: Path | None,
    work_root: Path,
    grace_sec: float = DEFAULT_GRACE_SEC,
    private_root: Path | None = None,
    keep_env: frozenset[str] = frozenset(),
    watch: SuiteWatch | None = None,
    phases: Phases | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """Run one module; its unit record, its checks (tagged with the module id) and their
    JSON as the stage result holds them.

    ``work_root`` holds $SRB_WORK and $SRB_SUITE_WORK (submission code may read there, as
    the module's case inputs live there); ``private_root`` (default: ``work_root``) the
    logs, the module's HOME and $SRB_RESULT, out of the submission's reach. When the module
    has ended, every process of the submission uid is killed and its scratch wiped.
    ``watch`` holds the suite's digest from before the module (taken now when not given);
    ``phases`` hears where the grader's time went.

    The module's result file and stderr tail are read as soon as its group is reaped; the
    submission's processes are ended (by a thread, and children of its uid) while this
    thread digests the suite, both before anything else of the submission or the suite can
    run."""
    phases = phases or Phases()
    lap = phases.now()
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
    for folder in (work, suite_work):  # what the module starts writes there as the slot
        share_folder(folder, SUITE_SLOT)
    result.unlink(missing_ok=True)
    started = time.time()
    unit["started_at"] = utc_iso(started)
    argv, command_problem = _command_for(module)
    stdout_log, stderr_log = logs / f"{module.id}.stdout", logs / f"{module.id}.stderr"
    unit["stdout_log"], unit["stderr_log"] = str(stdout_log), str(stderr_log)
    if argv is None or not module.dir.is_dir():
        message = command_problem or f"module folder {module.dir} does not exist"
        unit.update(status="error", message=message, duration_sec=0.0)
        phases.lap("module_setup", lap)
        return unit, [], "[]"
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
    root_before = set(root_entries(repo))
    if watch is None:
        lap = phases.lap("module_setup", lap)
        watch = SuiteWatch(suite.root)
        lap = phases.lap("suite_digest", lap)
    boundary, no_boundary = boundary_for(
        SUITE_SLOT, repo, built=[work, suite_work], own=[suite.root, home])
    lap = phases.lap("module_setup", lap)
    try:
        with stdout_log.open("wb") as out, stderr_log.open("wb") as err:
            done = run_group(
                resolve_command(argv, env) if boundary else argv,
                cwd=str(module.dir),
                env=env,
                timeout_sec=module.timeout_sec,
                stdout=out,
                stderr=err,
                grace_sec=grace_sec,
                umask=MODULE_UMASK,
                preexec=boundary.preexec if boundary else None,
                started_as=boundary.launched if boundary else None,
            )
        lap = phases.lap("module_process", lap)
        raw, problem = read_result_bytes(result) if done.start_error is None else (None, "")
        stderr_tail = _tail(stderr_log)
        lap = phases.lap("result_read", lap)
        given_up = [entry for entry in root_entries(repo) if entry not in root_before]
        # the submission's uid killed and its files wiped (by children of that uid) while
        # this thread parses the module's result and digests the suite, which that uid can
        # neither read nor write (/tests is root's, 0700): all done before anything else runs
        ending = Background("submission-end", end_submission)
    finally:
        exec_report = boundary.stop() if boundary else None
    lap = phases.lap("module_end", lap)
    checks, metadata, notes, found, tagged, encoded = _parse_result(module.id, raw)
    lap = phases.lap("result_read", lap)
    tampered = watch.changed()
    lap = phases.lap("suite_digest", lap)
    leftover = ending.result()
    lap = phases.lap("module_end", lap)
    if leftover:
        unit["submission_leftovers"] = leftover
    problem = problem or found
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
        stderr_tail=stderr_tail,
    )
    if exec_report is not None:
        unit["exec_boundary"] = exec_report
    notes_given_up = []
    if no_boundary:
        notes_given_up.append(f"no exec boundary ({no_boundary}): what the module started "
                              "ran as its own identity")
    if given_up:
        notes_given_up.append(boundary_note(given_up[:5]))
    if notes_given_up:
        unit["boundary"] = "; ".join(notes_given_up)
    if tampered:
        unit.update(status="error", rate=0.0, message=tamper_message(tampered),
                    tampering=tampered)
    hint = sandbox_hint(checks, unit["stderr_tail"])
    if hint and (counts["failed"] or counts["errored"] or status != "ok"):
        unit["sandbox_hint"] = hint
        unit["message"] = f"{message}; {hint}"
    if metadata:
        unit["metadata"] = metadata
    if notes:
        unit["notes"] = notes
    phases.lap("result_read", lap)
    return unit, tagged, encoded


def _parse_result(module_id: str, raw: bytes | None) -> tuple[
        list[dict[str, Any]], dict[str, Any], list[Any], str, list[dict[str, Any]], str]:
    """A module's result bytes parsed and normalised (:func:`.checks.parse_module_result`),
    its checks tagged with the module id and encoded (:func:`.envelope.encode_checks`)."""
    checks, metadata, notes, problem = (
        parse_module_result(raw) if raw is not None else ([], {}, [], ""))
    tagged = [{"module": module_id, **check} for check in checks]
    return checks, metadata, notes, problem, tagged, encode_checks(tagged)


MODULE_UMASK = 0o002
"""Modules create group-writable files: in the shared ``$SRB_REPO`` (set-group-ID folders of
the slot's group) what a build writes there stays writable for the submission's own code;
elsewhere the group is root's, which no submission process has."""
def stage_submission(source: Path, repo: Path) -> None:
    """Copy the submission (read-only, root-owned) to ``repo`` as the submission uid, so it
    owns its private copy (in the size-limited workspace tmpfs)."""
    if not sandbox.enabled():
        shutil.copytree(source, repo, symlinks=True, dirs_exist_ok=True)
        return
    if sandbox.copy_as_slot(SUITE_SLOT, source, repo) != 0:
        raise OSError(f"cannot copy {source} to {repo} as the submission uid")
    if sandbox.run_as_slot(SUITE_SLOT, lambda: share_tree(repo)) != 0:
        raise OSError(f"cannot open {repo} to the modules through the submission's group")


def share_tree(root: Path) -> None:
    """As the submission uid, owner of its copy: every folder of ``root`` group-writable and
    set-group-ID (what is created in it belongs to the slot's group), every file
    group-writable. The grader joins that group for Stage II (:func:`run_suite`), so a
    module written to the published contract, which builds in ``$SRB_REPO`` itself as uid 0
    without DAC_OVERRIDE, can write there; the submission's own reach does not change (the
    group is its own gid, and only the grader's processes are its other members)."""
    for current, dirs, files in os.walk(root):
        here = Path(current)
        os.chmod(here, (os.lstat(here).st_mode & 0o7777) | 0o2070)
        for name in files:
            path = here / name
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, (mode & 0o7777) | 0o060)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]


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
    progress: Callable[[dict[str, Any]], None] | None = None,
    phases: Phases | None = None,
    recorded: Callable[[str, str], None] | None = None,
    written_out: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Run every module in order, rewriting `result_path` after each; returns the envelope.
    ``progress`` hears of each module as it starts and as it ends (its counts), so a
    watcher sees the stage move while it runs; ``recorded`` gets each module's checks as
    it ends (their JSON, as the stage result holds them), just before its end line.
    Where the grader's time went (``phases``, with what the caller counted before) ends in
    the metadata's ``phases_sec``. ``written_out`` gets the final document without its
    checks (:meth:`.StageEnvelope.document_without_checks`) and their number once it is
    written: the checks ``recorded`` got, in order, are the rest of it."""
    tell = progress or (lambda _doc: None)
    phases = phases or Phases()
    sandbox.join_slot_groups([SUITE_SLOT])  # the modules may write the shared $SRB_REPO
    envelope = StageEnvelope(stage="behavioural", task=task or suite.task)
    envelope.units = [_seed_unit(module) for module in suite.modules]
    envelope.metadata = {"suite": str(suite.path), **summarise(envelope.units)}
    lap = phases.now()
    envelope.write(result_path, durable=False)
    lap = phases.lap("checkpoint", lap)
    watch = SuiteWatch(suite.root)
    lap = phases.lap("suite_digest", lap)
    tampered_by = ""
    if suite.modules:  # then each module's checkpoint also says the next one started
        _mark_started(envelope, 0)
        envelope.write(result_path, durable=False)
        lap = phases.lap("checkpoint", lap)
    for index, module in enumerate(suite.modules):
        if tampered_by:  # the suite is no longer the suite: nothing after it is believed
            envelope.units[index]["message"] = (
                f"not run: module {tampered_by} changed the suite's files (tampering)")
            continue
        tell({"module": module.id, "index": index + 1, "total": len(suite.modules),
              "state": "running", "at": utc_iso()})
        phases.lap("progress", lap)
        unit, checks, encoded = run_module_encoded(
            suite,
            module,
            repo=repo.resolve(),
            original=original.resolve() if original is not None else None,
            work_root=work_root.resolve(),
            grace_sec=grace_sec,
            private_root=private_root.resolve() if private_root is not None else None,
            keep_env=keep_env,
            watch=watch,
            phases=phases,
        )
        lap = phases.now()
        envelope.units[index] = unit
        envelope.add_encoded(checks, encoded)  # the checkpoints' and the line's
        lap = phases.lap("checkpoint", lap)
        if recorded is not None:
            recorded(module.id, encoded)
        tell({"module": module.id, "index": index + 1, "total": len(suite.modules),
              "state": str(unit.get("status", "")), "passed": unit.get("passed", 0),
              "scored": unit.get("scored", 0), "at": utc_iso()})
        lap = phases.lap("progress", lap)
        if unit.get("tampering"):
            tampered_by = module.id
        if index + 1 < len(suite.modules) and not tampered_by:
            _mark_started(envelope, index + 1)
        envelope.metadata = {"suite": str(suite.path), **summarise(envelope.units)}
        if index + 1 < len(suite.modules):  # after the last, the final write follows
            envelope.write(result_path, durable=False)
        lap = phases.lap("checkpoint", lap)
    envelope.finish("ok")
    envelope.metadata["phases_sec"] = phases.seconds()
    envelope.write(result_path)
    if written_out is not None:
        written_out(envelope.document_without_checks(), len(envelope.checks))
    return envelope.to_dict()


def _mark_started(envelope: StageEnvelope, index: int) -> None:
    """Module ``index`` about to start, as the checkpoint says until it has an outcome:
    still "unreached" (if the stage dies now, it has none). Written with the outcome of
    the module before it, in one checkpoint."""
    envelope.units[index] = {
        **envelope.units[index],
        "started_at": utc_iso(),
        "message": "started; no outcome recorded (the stage stopped while it ran)",
    }


def write_suite_error(result_path: Path, task: str, message: str) -> dict[str, Any]:
    """Record a stage that could not run its suite at all (status error)."""
    envelope = StageEnvelope(stage="behavioural", task=task)
    envelope.notes.append(message)
    envelope.metadata = {"complete": False, "rate": 0.0}
    envelope.finish("error")
    envelope.write(result_path)
    return envelope.to_dict()
