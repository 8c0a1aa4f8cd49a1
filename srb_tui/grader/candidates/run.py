"""Stage III: run a counterexample candidate on both trees and adjudicate it.

The candidate contract is the published one (:mod:`.env`): each run gets a fresh,
writable copy of the tree under test as its working folder and ``SRB_TARGET`` (the same
path for both roles, restored from a pristine copy before every run), ``SRB_CANDIDATE`` (the
candidate's file, :func:`.env.candidate_entry`), ``SRB_CANDIDATE_NAME``,
``SRB_TARGET_TOKEN`` (salted per stage), ``SRB_WORK`` (fresh and empty for every run:
:mod:`.scratch`) and
``SRB_NETWORK=denied``; the role is the command's last argument only. Timestamps of the
copies are normalised, so nothing but content differs. Submission code (the command and
everything it starts) runs as the round's slot uid (:mod:`..boundary.sandbox`), in its own process
group, under a timeout; the slot is ended whole afterwards. Each run holds the container's
run lease: a /tmp (and /dev/shm) of its own for its duration, empty when it starts and
emptied when it ends, which no concurrent run sees (:mod:`.scratch`).

Adjudication (the published order, nondeterminism) is :mod:`.judge`.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..boundary import sandbox
from ..boundary.procs import run_group
from ..boundary.slot import drop as slot_drop
from ..boundary.wipe import remove_owned
from .env import (
    candidate_entry,
    contract_env,
    target_token,
)
from .records import (
    CandidateSpec,
    RunObservation,
)
from .scratch import ScratchError, enter_work, leave_work, run_lease
from .staging import StagingError, check_original, stage_copy
from .tree_copy import copy_closed

KEEP_IN_SCRATCH: tuple[str, ...] = ()  # nothing of a run reaches the next (SRB_WORK too)
TAIL_BYTES = 2000


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-TAIL_BYTES:].decode("utf-8", "replace")


def candidate_env(
    spec: CandidateSpec,
    target: Path,
    candidate_file: Path,
    work: Path,
    *,
    token: str,
    name: str,
    home: Path | None = None,
    tmpdir: Path | None = None,
) -> dict[str, str]:
    """The published candidate environment for one run (see :mod:`.env`)."""
    return contract_env(
        candidate_file=candidate_file,
        name=name,
        target=target,
        token=token,
        work=work,
        home=home or work.parent / "home",
        tmpdir=tmpdir or work.parent / "tmp",
        task_env=spec.env,
        network_allowed=spec.network_allowed,
    )


def _work_root(spec: CandidateSpec, stage_root: Path) -> Path:
    """Where a run's SRB_WORK lives (the slot's scratch in a container)."""
    return sandbox.scratch_dir(spec.slot) if sandbox.enabled() else stage_root.parent


def _run_area(
    spec: CandidateSpec, stage_root: Path, pristine: Path, token: str
) -> dict[str, Path]:
    """A fresh writable copy of ``pristine`` (the target) with a fresh HOME, TMPDIR and
    SRB_WORK. In a stage container all of it belongs to the
    slot uid."""
    try:
        if sandbox.enabled():
            sandbox.reset(spec.slot, remake=("home", "tmp"))
            scratch = sandbox.scratch_dir(spec.slot)
            area = {name: scratch / name for name in ("target", "home", "tmp")}
            area["work"] = enter_work(spec.slot, scratch, token)
            if _closed(spec):  # the slot's, closed to the candidate (tree_copy.py)
                copied = copy_closed(pristine, area["target"], sandbox.slot_ids(spec.slot))
            else:  # with the boundary the candidate (the slot's group) writes there too
                copied = sandbox.copy_as_slot(spec.slot, pristine, area["target"],
                                              boundary_on(spec))
            if copied != 0:
                raise StagingError(
                    f"cannot copy the tree to {area['target']} as slot {spec.slot}"
                )
            return area
        run = stage_root / "run"
        shutil.rmtree(run, ignore_errors=True)
        area = {name: run / name for name in ("home", "tmp")}
        for folder in area.values():
            folder.mkdir(parents=True, exist_ok=True)
        area["work"] = enter_work(spec.slot, stage_root.parent, token)
        area["target"] = run / "target"
        stage_copy(pristine, area["target"])
        return area
    except (ScratchError, sandbox.SandboxError) as exc:
        raise StagingError(str(exc)) from None


def _check_working_copy(spec: CandidateSpec, target: Path) -> None:
    """State A's working copy has State A's digest. In a stage container the copy belongs
    to the slot (0700 scratch the grader may not enter), so the slot hashes it."""
    if spec.original_digest is None:
        return
    if not sandbox.enabled():
        check_original(spec, target, "the working copy of State A")
        return

    def verify() -> None:
        check_original(spec, target, "the working copy of State A")

    if sandbox.run_as_slot(spec.slot, verify) != 0:
        raise StagingError(
            f"the working copy of State A ({target}) does not match State A's digest: "
            "refusing to use it"
        )


def run_once(
    spec: CandidateSpec,
    tree: Path,
    candidate_dir: Path,
    stage_root: Path,
    role: str,
    attempt: int,
    name: str = "candidate",
) -> RunObservation:
    """Stage `tree` and the candidate under `stage_root`, run once, clean up."""
    pristine = stage_root / "pristine"
    candidate = stage_root / "candidate"
    stage_copy(tree, pristine)
    if _closed(spec):
        os.chmod(pristine, 0o700)  # the grader's alone: the candidate reads no tree file
    if role == "original":
        check_original(spec, pristine, "the staged copy of State A")
    stage_copy(candidate_dir, candidate)
    if boundary_on(spec):
        _hand_to_candidate(candidate, sandbox.candidate_group(spec.slot))
    elif sandbox.enabled():  # one uid for both: the slot reads it
        _hand_to_candidate(candidate, sandbox.slot_ids(spec.slot)[1])
    try:
        entry = candidate_entry(candidate)
    except FileNotFoundError as exc:
        raise StagingError(str(exc)) from None
    token = target_token(spec.token_salt, role)
    area = _run_area(spec, stage_root, pristine, token)
    logs = stage_root.parent / f".logs-{stage_root.name}"
    try:
        if role == "original":
            _check_working_copy(spec, area["target"])
        logs.mkdir(mode=0o700, exist_ok=True)
        return _execute(spec, area, entry, logs, role, attempt, name, token, stage_root)
    finally:
        shutil.rmtree(pristine, ignore_errors=True)
        shutil.rmtree(logs, ignore_errors=True)
        if not sandbox.enabled():
            shutil.rmtree(stage_root / "run", ignore_errors=True)
        try:
            leave_work(spec.slot, _work_root(spec, stage_root), token)
        except ScratchError as exc:
            raise StagingError(str(exc)) from None


def boundary_on(spec: CandidateSpec) -> bool:
    return spec.boundary and sandbox.enabled()


def _closed(spec: CandidateSpec) -> bool:
    """Whether the working copy is closed to the candidate's identity (behaviour only)."""
    return spec.behaviour_only and boundary_on(spec)


def _hand_to_candidate(root: Path, gid: int) -> None:
    """The staged candidate readable by the group ``gid`` only (the candidate identity's;
    nothing for others): the programs it starts run as another uid and cannot read it."""
    try:
        for current, dirs, files in os.walk(root):
            for name in [".", *dirs, *files]:
                path = os.path.join(current, name)
                if os.path.islink(path):
                    continue
                os.chown(path, -1, gid)
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                os.chmod(path, (mode & 0o750) | 0o040 | (0o010 if mode & 0o111 else 0))
    except OSError as exc:
        raise StagingError(f"cannot hand the candidate to its identity: {exc}") from None


def _candidate_area(spec: CandidateSpec, stage_root: Path) -> dict[str, Path]:
    """The candidate identity's own HOME and TMPDIR (fresh per run): 0711, so a program
    can open a file the candidate names to it but cannot list or guess its way around."""
    ids = sandbox.candidate_ids(spec.slot)
    root = stage_root / "cand"
    area = {"home": root / "home", "tmp": root / "tmp"}
    try:
        if not root.is_dir():
            root.mkdir()
            os.chown(root, -1, sandbox.candidate_group(spec.slot))
            os.chmod(root, 0o771)
    except OSError as exc:
        raise StagingError(f"cannot prepare the candidate's folder {root}: {exc}") from None

    def remake() -> None:
        for path in area.values():
            if path.exists():
                remove_owned(path)
            path.mkdir()
            os.chmod(path, 0o711)

    if sandbox.run_as_ids(ids, remake, (sandbox.candidate_group(spec.slot),)) != 0:
        raise StagingError(f"cannot prepare {root}/home and tmp as the candidate's uid")
    return area


def _execute(
    spec: CandidateSpec,
    area: Mapping[str, Path],
    entry: Path,
    logs: Path,
    role: str,
    attempt: int,
    name: str,
    token: str,
    stage_root: Path,
) -> RunObservation:
    """One run of the candidate command in a prepared area, holding the run lease."""
    out_path, err_path = logs / "stdout", logs / "stderr"
    argv = [*spec.command, role]
    own = boundary_on(spec)
    homes = _candidate_area(spec, stage_root) if own else area
    env = candidate_env(
        spec, area["target"], entry, area["work"], token=token, name=name,
        home=homes["home"], tmpdir=homes["tmp"],
    )  # fmt: skip
    cwd = str(area["target"])
    try:
        with out_path.open("wb") as out, err_path.open("wb") as err, run_lease() as groups:
            if own:
                code, timed_out, duration, start_error, report = _run_brokered(
                    spec, argv, cwd, env, out, err, groups, area, homes, stage_root
                )
            elif sandbox.enabled():
                code, timed_out, duration, start_error, _ = sandbox.run_in_slot(
                    argv, slot=spec.slot, cwd=cwd, env=env, timeout_sec=spec.timeout_sec,
                    stdout=out, stderr=err, grace_sec=spec.grace_sec, keep=KEEP_IN_SCRATCH,
                    groups=groups,
                )
            else:
                done = run_group(
                    argv, cwd=cwd, env=env, timeout_sec=spec.timeout_sec,
                    stdout=out, stderr=err, grace_sec=spec.grace_sec,
                )
                code, timed_out = done.returncode, done.timed_out
                duration, start_error = done.duration_sec, done.start_error
        return RunObservation(
            role=role,
            attempt=attempt,
            exit_code=code,
            timed_out=timed_out,
            duration_sec=round(duration, 3),
            start_error=start_error,
            stdout_tail=_tail(out_path),
            stderr_tail=_tail(err_path),
            boundary=report if own else None,
        )
    except (ScratchError, sandbox.SandboxError) as exc:
        raise StagingError(str(exc)) from None


def _as_candidate(send_fd: int) -> None:
    """Last thing before the candidate's exec: umask 002 (what it creates in the tree,
    SRB_WORK or /tmp, group the slot's, its programs may change, as one uid could), then
    the exec broker's filter."""
    from ..boundary.seccomp import install_filter

    os.umask(0o002)
    install_filter(send_fd)


def _run_brokered(
    spec: CandidateSpec,
    argv: Sequence[str],
    cwd: str,
    env: Mapping[str, str],
    out: Any,
    err: Any,
    groups: Sequence[int],
    area: Mapping[str, Path],
    homes: Mapping[str, Path],
    stage_root: Path,
) -> tuple[int | None, bool, float, str | None, dict[str, Any]]:
    """The candidate as its own identity, every program it starts as the slot uid."""
    from ..boundary.exec_broker import Broker, supported

    why_not = supported()
    if why_not is not None:
        raise StagingError(f"the Stage III boundary cannot run here: {why_not}")
    own_gid = sandbox.candidate_group(spec.slot)
    limits = sandbox.load_limits()
    mine = {b"HOME": bytes(homes["home"]), b"TMPDIR": bytes(homes["tmp"])}
    theirs = {b"HOME": bytes(area["home"]), b"TMPDIR": bytes(area["tmp"])}

    def program_env(seen: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
        kept = {k: v for k, v in seen.items() if not k.startswith(b"SRB_")}
        for key, value in mine.items():
            if kept.get(key) == value:
                kept[key] = theirs[key]
        return kept

    def become(folder: str) -> Any:
        return slot_drop(spec.slot, limits, folder, (), tuple(groups))

    own = [str(stage_root / "candidate"), str(homes["home"].parent)]
    own += [os.path.dirname(w) for w in spec.command if w.startswith("/tests/")]
    broker = Broker(
        tree=[str(area["target"])],
        built=[str(area["work"])],
        own=own,
        become=become,
        program_env=program_env,
        peer=sandbox.candidate_ids(spec.slot),
    )
    send_fd = broker.child_fd
    found = shutil.which(argv[0], path=env.get("PATH")) if "/" not in argv[0] else argv[0]
    argv = [found or argv[0], *argv[1:]]  # one exec: the broker lets the first one through
    broker.start()
    try:
        code, timed_out, duration, start_error, _ = sandbox.run_in_slot(
            argv, slot=spec.slot, cwd=cwd, env=env, timeout_sec=spec.timeout_sec,
            stdout=out, stderr=err, grace_sec=spec.grace_sec, keep=KEEP_IN_SCRATCH,
            groups=(own_gid, *groups), ids=sandbox.candidate_ids(spec.slot),
            then=lambda: _as_candidate(send_fd), started_as=broker.launched,
        )  # fmt: skip
    finally:
        report = broker.stop()
    return code, timed_out, duration, start_error, report.summary()


# --------------------------------------------------------------------------- adjudication
