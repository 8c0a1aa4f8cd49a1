"""Re-run a stored Stage III counterexample against both trees, and export it.

``rerun_counterexample`` adjudicates the candidate again exactly as the verification stage
does: a stage container (the same identities and locks as Stage III) is created from the
verification image the ladder recorded for the run (store ``images`` table, role
``verification``); State A, the submission, the stage's build context, the candidate's
files and srb's grader package are copied in; then the grader's ``candidate ... --reruns
N`` runs inside it and its JSON verdict is read back. The container is removed whatever
happens. Progress is reported through a callback, so the console can show each step as it
happens.

``export_candidate`` writes a candidate as a standalone folder (its files, the task's
harness script, ``run-both.sh`` and a README saying how to run it against two trees).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.config import Settings
from srb_tui.grader.boundary.lockdown import tree_digest
from srb_tui.grader.candidates.env import entry_name
from srb_tui.grader.manifests.probe import fault_codes_arg
from srb_tui.runner import DockerEngine, ExecResult, RunnerError
from srb_tui.runner.files import fetch_file, put_files
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.stages.common import StageFault
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import (
    ORIGINAL_DIR,
    SCRATCH,
    STAGE_BASE,
    SUBMISSION_DIR,
    TESTS_DIR,
    candidate_layout,
)
from srb_tui.service.views.diff import DiffSourceError, state_a_tree, submission_tree, task_dir_of
from srb_tui.store import CounterexampleRecord, ImageRecord, Store

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
    """probe.toml [metadata] nondeterminism (see grader/candidate.py)"""
    behaviour_only: bool = False
    """probe.toml [metadata] behaviour_only (see grader/candidate.py)"""

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
    files = record.extra.get("files") if isinstance(record.extra, Mapping) else None
    if isinstance(files, Mapping) and files and all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        return {str(k): str(v) for k, v in files.items()}
    return {"candidate.sh": record.code}


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


async def _load(
    settings: Settings, store: Store, run_id: str, counterexample_id: int
) -> tuple[CounterexampleRecord, Task, list[ImageRecord], Path, Path]:
    run = await store.require_run(run_id)
    record = await store.get_counterexample(counterexample_id)
    if record is None or record.run_id != run_id:
        raise RerunError(f"run {run_id} has no counterexample #{counterexample_id}")
    images = await store.images(run_id)
    load = await asyncio.to_thread(load_task, task_dir_of(settings, run))
    if load.task is None:
        raise RerunError(f"run {run_id}: task {load.path} cannot be read")
    submission = submission_tree(settings, run_id)
    if not submission.is_dir():
        raise RerunError(f"run {run_id}: no submission at {submission}")
    state_a = await asyncio.to_thread(state_a_tree, settings, run)
    return record, load.task, images, state_a, submission


async def rerun_counterexample(
    settings: Settings,
    store: Store,
    engine: DockerEngine,
    run_id: str,
    counterexample_id: int,
    *,
    reruns: int = 3,
    progress: Progress | None = None,
) -> RerunResult:
    """Adjudicate a stored candidate again in the run's verification image."""
    say = progress or (lambda _message: None)
    try:
        record, task, images, state_a, submission = await _load(
            settings, store, run_id, counterexample_id
        )
    except DiffSourceError as exc:
        raise RerunError(str(exc)) from exc
    plan = plan_rerun(task, images, record, reruns)
    began = time.monotonic()
    role = f"rerun-{counterexample_id}-{secrets.token_hex(3)}"
    layout = candidate_layout(1)
    say(f"creating a container from {plan.image}")
    try:
        async with StageContainer(
            engine, run_id, role, plan.image, publish=lambda _event: None, layout=layout,
            task=task,
        ) as box:
            say("copying State A, the submission, the candidate and the grader in")
            await box.put_trees(state_a, submission)
            await box.put_context(task, [plan.context_name])
            await put_files(
                engine, box.h, CANDIDATE_DIR,
                {name: text.encode("utf-8") for name, text in plan.files.items()},
                uid=0, gid=0, mode=0o755,
            )
            digest = await asyncio.to_thread(tree_digest, state_a)
            say(f"running the candidate {plan.reruns} time(s) on each tree")
            budget = plan.timeout_sec * plan.reruns * 2 + 120
            result = await _grade_telling_attempts(
                box,
                [*plan.grader_args(), "--slot", "0", "--original-digest", digest,
                 "--stage-base", f"{STAGE_BASE}/0/adjudication", "--progress", PROGRESS_FILE],
                budget, plan.reruns, say,
            )
    except StageFault as exc:
        raise RerunError(str(exc)) from exc
    except RunnerError as exc:
        raise RerunError(f"cannot run the re-run container: {exc}") from exc
    if result.timed_out:
        raise RerunError(f"the grader did not finish within {budget:g} s")
    if result.exit_code != 0:
        raise RerunError(f"the grader did not finish ({result.describe()})")
    verdict = parse_verdict(result.stdout, plan.image, time.monotonic() - began)
    say(f"verdict: {verdict.outcome}")
    return verdict


def attempt_line(doc: Mapping[str, Any], reruns: int) -> str:
    """One execution as the console lists it: ``attempt 1/3 · original: exit 0 in 0.4 s``."""
    took = doc.get("duration_sec")
    took_text = f"{float(took):.1f} s" if isinstance(took, int | float) else "? s"
    if doc.get("timed_out"):
        what = f"timed out after {took_text}"
    else:
        what = f"exit {doc.get('exit_code')} in {took_text}"
    return f"attempt {doc.get('attempt')}/{reruns} · {doc.get('role')}: {what}"


async def _grade_telling_attempts(
    box: StageContainer, args: list[str], budget: float, reruns: int, say: Progress
) -> ExecResult:
    """Run the grader; while it runs, read its progress file and tell each execution
    (up to 2 × reruns) as it ends, so the operator sees the attempts one by one."""
    job = asyncio.ensure_future(box.grader(args, timeout_sec=budget))
    told = 0

    async def tell_new() -> None:
        nonlocal told
        try:
            raw = await fetch_file(box.engine, box.h, PROGRESS_FILE)
        except RunnerError:
            return  # progress is a courtesy; the verdict comes from the grader's stdout
        if raw is None:
            return
        complete = raw.decode("utf-8", "replace").split("\n")[:-1]  # a partial last line waits
        for line in complete[told:]:
            told += 1
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict):
                say(attempt_line(doc, reruns))

    try:
        while True:
            finished, _ = await asyncio.wait({job}, timeout=PROGRESS_POLL_SEC)
            await tell_new()
            if finished:
                return job.result()
    finally:
        if not job.done():
            job.cancel()


# --------------------------------------------------------------------------- export

README = """\
# Counterexample #{id} of run {run_id}

Adversary `{adversary}` handed this candidate in; the grader's verdict was
**{verdict}**{reason}.

A candidate passes (exit 0) when the program behaves as State A does, and fails
(non-zero) otherwise. It counts as a break when it passes on State A and fails on the
submission, reproducibly.

## Files

{files}

## Run it against two trees

    bash run-both.sh /path/to/state-a /path/to/submission

`run-both.sh` runs the task's candidate command (`{command}`) once per tree, the way the
grader does (the published candidate contract): in a fresh copy of the tree, with
`SRB_TARGET` set to that copy, `SRB_CANDIDATE` to the candidate's file (`{entry}`),
`SRB_CANDIDATE_NAME`, an opaque `SRB_TARGET_TOKEN`, a shared `SRB_WORK` and
`SRB_NETWORK=denied`, and the role (`original` or `submission`) as its last argument. It
prints each exit status. To run one tree by hand (from a copy of it):

    SRB_TARGET="$PWD" SRB_CANDIDATE=/path/to/this/folder/{entry} SRB_TARGET_TOKEN=t1 \\
        SRB_WORK=$(mktemp -d) SRB_NETWORK=denied {command_here} original

The grader itself also checks the candidate's scope and re-runs the pair {reruns} times;
`srb` does that from the console (Counterexamples screen, `R`).
"""

RUN_BOTH = """\
#!/bin/bash
# Run this candidate on two trees: bash run-both.sh STATE_A_TREE SUBMISSION_TREE
set -u
if [ $# -ne 2 ]; then
    echo "usage: bash run-both.sh STATE_A_TREE SUBMISSION_TREE" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
shared="$(mktemp -d)"
for pair in "original:$1" "submission:$2"; do
    role="${{pair%%:*}}"
    tree="$(cd "${{pair#*:}}" && pwd)" || exit 2
    run="$(mktemp -d)"
    mkdir -p "$run/home" "$run/tmp"
    cp -a "$tree" "$run/target"
    token="$(printf '%s:%s' "$shared" "$role" | sha256sum | cut -c1-16)"
    ( cd "$run/target" && env SRB_TARGET="$run/target" SRB_CANDIDATE="$here/{entry}" \\
        SRB_CANDIDATE_NAME={name} SRB_TARGET_TOKEN="$token" SRB_WORK="$shared" \\
        SRB_NETWORK=denied HOME="$run/home" TMPDIR="$run/tmp" {command} "$role" )
    echo "$role: exit $?"
    rm -rf "$run"
done
rm -rf "$shared"
"""


def _shell_words(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(word) for word in words)


def export_candidate(
    record: CounterexampleRecord, task: Task | None, dest_root: Path, *, reruns: int = 3
) -> Path:
    """Write the candidate as a standalone folder under ``dest_root``; return the folder."""
    folder = dest_root / f"{record.run_id}-cx{record.id}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    files = candidate_files(record)
    for name, text in files.items():
        path = folder / name
        if not path.resolve().is_relative_to(folder.resolve()):
            raise RerunError(f"counterexample #{record.id}: file name {name!r} leaves its folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if name.endswith(".sh"):
            path.chmod(0o755)
    command = ["bash", "candidate.sh"]
    probe = task.probe if task is not None else None
    if task is not None and probe is not None:
        context = task.dir / "tests" / "verification"
        command = []
        for word in probe.candidate_command:
            if (context / word).is_file():
                shutil.copy2(context / word, folder / word)
                command.append(f'"$here"/{word}')
            else:
                command.append(word)
    here_command = " ".join(part.replace('"$here"/', "") for part in command)
    entry = entry_name(files) if files else "candidate.sh"
    listing = "\n".join(f"- `{name}`" for name in sorted(files))
    (folder / "README.md").write_text(
        README.format(
            id=record.id, run_id=record.run_id, adversary=record.adversary_id,
            verdict=record.verdict, reason=f" ({record.reason})" if record.reason else "",
            files=listing, command=_shell_words([c.replace('"$here"/', "") for c in command]),
            command_here=here_command, reruns=reruns, entry=entry,
        ),
        encoding="utf-8",
    )
    run_both = folder / "run-both.sh"
    run_both.write_text(
        RUN_BOTH.format(command=" ".join(command), entry=entry, name=f"cx{record.id}"),
        encoding="utf-8",
    )
    run_both.chmod(0o755)
    return folder


def output_text(value: Any) -> str:
    """A stored output (text, or a JSON object with stdout/stderr) as readable text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        parts = []
        for key in ("stdout", "stdout_tail", "stderr", "stderr_tail"):
            text = value.get(key)
            if isinstance(text, str) and text:
                parts.append(f"[{key.split('_')[0]}]\n{text}")
        if parts:
            return "\n".join(parts)
    return json.dumps(value, indent=2, ensure_ascii=False)
