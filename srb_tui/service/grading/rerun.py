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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srb_tui.config import Settings
from srb_tui.grader.boundary.lockdown import tree_digest
from srb_tui.grader.candidates.env import entry_name
from srb_tui.runner import DockerEngine, ExecResult, RunnerError
from srb_tui.runner.files import fetch_file, put_files
from srb_tui.schema import Task, load_task
from srb_tui.service.grading.rerun_plan import (
    CANDIDATE_DIR,
    PROGRESS_FILE,
    PROGRESS_POLL_SEC,
    Progress,
    candidate_files,
    parse_verdict,
    plan_rerun,
)
from srb_tui.service.grading.rerun_plan import RerunError as RerunError
from srb_tui.service.grading.rerun_plan import RerunResult as RerunResult
from srb_tui.service.grading.stages.common import StageFault
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import (
    STAGE_BASE,
    candidate_layout,
)
from srb_tui.service.views.diff import DiffSourceError, state_a_tree, submission_tree, task_dir_of
from srb_tui.store import CounterexampleRecord, ImageRecord, Store


async def _load(
    settings: Settings, store: Store, run_id: str, counterexample_id: int
) -> tuple[CounterexampleRecord, Task, list[ImageRecord], Path, Path]:
    run = await store.runs.require_run(run_id)
    record = await store.grading.get_counterexample(counterexample_id)
    if record is None or record.run_id != run_id:
        raise RerunError(f"run {run_id} has no counterexample #{counterexample_id}")
    images = await store.infra.images(run_id)
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
