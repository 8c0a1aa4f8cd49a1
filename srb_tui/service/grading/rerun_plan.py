"""What a counterexample re-run needs before anything runs: the plan (which image, which
command line for the grader's ``candidate`` subcommand, which timeout) read from the task
and the run's records, the candidate's files, and the grader's verdict read back from its
output. Nothing here touches the engine; :mod:`.rerun` runs the plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from srb_tui.grader.manifests.probe import fault_codes_arg
from srb_tui.schema import Task
from srb_tui.service.grading.stages.stage_layout import (
    ORIGINAL_DIR,
    SCRATCH,
    SUBMISSION_DIR,
    TESTS_DIR,
)
from srb_tui.store import CounterexampleRecord, ImageRecord
from srb_tui.store.record_extra import recorded_files

CANDIDATE_DIR = "/srb/cand/rerun"
IMAGE_ROLE = "verification"
DEFAULT_TIMEOUT_SEC = 120.0
PROGRESS_FILE = f"{SCRATCH}/rerun-progress.jsonl"
PROGRESS_POLL_SEC = 0.5  # how often the grader's progress file is read while it runs
Progress = Callable[[str], None]


class RerunError(Exception):
    """The candidate cannot be re-run (message names the run, the record or the file)."""


@dataclass(frozen=True)
class RerunPlan:
    """Everything the container needs, decided before one is created."""

    image: str
    command: tuple[str, ...]
    context: Path
    context_name: str
    reruns: int
    timeout_sec: float
    fault_codes: str
    deny_commands: tuple[str, ...]
    files: dict[str, str]
    nondeterminism: str = "reject"
    """probe.toml [metadata] nondeterminism (see grader/candidates/)"""
    behaviour_only: bool = False
    """probe.toml [metadata] behaviour_only (see grader/candidates/)"""

    def grader_args(self) -> list[str]:
        args = [
            "candidate",
            "--candidate", CANDIDATE_DIR,
            "--original", ORIGINAL_DIR,
            "--submission", SUBMISSION_DIR,
            "--command-json", json.dumps(list(self.command)),
            "--reruns", str(self.reruns),
            "--timeout", f"{self.timeout_sec:g}",
            "--fault-codes", self.fault_codes,
            "--nondeterminism", self.nondeterminism,
        ]
        for command in self.deny_commands:
            args += ["--deny-command", command]
        if self.behaviour_only:
            args.append("--behaviour-only")
        return args


@dataclass(frozen=True)
class RerunRun:
    """One execution of the candidate on one tree."""

    role: str
    attempt: int
    exit_code: int | None
    timed_out: bool
    duration_sec: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    start_error: str | None = None


@dataclass(frozen=True)
class RerunResult:
    """The grader's verdict on the re-run: upheld | nondeterministic | invalid | rejected |
    error."""

    outcome: str
    reason: str
    runs: tuple[RerunRun, ...]
    findings: tuple[str, ...]
    image: str
    elapsed_sec: float


def candidate_files(record: CounterexampleRecord) -> dict[str, str]:
    """The candidate's files: ``extra["files"]`` when recorded, else ``candidate.sh``."""
    return recorded_files(record) or {"candidate.sh": record.code}


def plan_rerun(
    task: Task, images: list[ImageRecord], record: CounterexampleRecord, reruns: int = 3
) -> RerunPlan:
    """How to re-run ``record`` for ``task``; RerunError says what is missing."""
    image = next((i for i in images if i.role == IMAGE_ROLE), None)
    if image is None:
        raise RerunError(
            f"run {record.run_id}: no verification image is recorded for it (Stage III did "
            "not run?), so there is nothing to re-run the candidate in"
        )
    probe = task.probe
    if probe is None:
        raise RerunError(f"task {task.id}: tests/verification/probe.toml could not be read")
    spec = task.evaluation.verification if task.evaluation is not None else None
    context_name = "verification"
    if spec is not None and isinstance(spec.options.get("context"), str):
        context_name = str(spec.options["context"])
    context = task.dir / "tests" / context_name
    if not context.is_dir():
        raise RerunError(f"task {task.id}: verification context {context} is not a folder")
    command = tuple(
        f"{TESTS_DIR}/{context_name}/{word}" if (context / word).is_file() else word
        for word in probe.candidate_command
    )
    timeout = probe.metadata.get("candidate_timeout_sec") or probe.metadata.get("run_timeout_sec")
    timeout_sec = float(timeout) if isinstance(timeout, int | float) and timeout > 0 \
        else DEFAULT_TIMEOUT_SEC
    return RerunPlan(
        image=image.tag,
        command=command,
        context=context,
        context_name=context_name,
        reruns=max(1, reruns),
        timeout_sec=timeout_sec,
        fault_codes=fault_codes_arg(probe.scope.fault_exit_codes),
        deny_commands=tuple(probe.scope.deny_commands),
        files=candidate_files(record),
        nondeterminism="break" if probe.metadata.get("nondeterminism") == "break" else "reject",
        behaviour_only=probe.metadata.get("behaviour_only") is True,
    )


def parse_verdict(stdout: bytes, image: str, elapsed: float) -> RerunResult:
    """The grader's JSON verdict (its last stdout line) as a RerunResult."""
    lines = [line for line in stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    try:
        doc = json.loads(lines[-1]) if lines else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or "outcome" not in doc:
        tail = lines[-1][:300] if lines else "(no output)"
        raise RerunError(f"the grader printed no verdict: {tail}")
    runs = tuple(
        RerunRun(
            role=str(r.get("role")),
            attempt=int(r.get("attempt", 0)),
            exit_code=r.get("exit_code"),
            timed_out=bool(r.get("timed_out")),
            duration_sec=float(r.get("duration_sec") or 0.0),
            stdout_tail=str(r.get("stdout_tail") or ""),
            stderr_tail=str(r.get("stderr_tail") or ""),
            start_error=r.get("start_error"),
        )
        for r in doc.get("runs", [])
        if isinstance(r, dict)
    )
    findings = tuple(
        f"{f.get('path')}:{f.get('line')}: {f.get('rule')}"
        for f in doc.get("findings", [])
        if isinstance(f, dict)
    )
    return RerunResult(
        str(doc["outcome"]), str(doc.get("reason", "")), runs, findings, image, elapsed
    )
