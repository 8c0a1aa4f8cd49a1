"""Stage II: the behavioural suite, run by the grader's ``suite`` subcommand in the container.

The behavioural image carries the new toolchain only (plus the grader's private
interpreter). The grader copies the submission, as the submission's uid, into the
size-limited /workspace/repo (its private copy); the suite and its recorded answers sit
under /tests, unreadable for that uid; State A is not in the container unless the stage asks
for it (option ``original = true``), and then private at /srb/original. The stage result the
grader checkpoints after every module (in its private /srb/grader) comes back on the
grader's stdout as it ends (:mod:`.suite_result`; the file is fetched when the lines do not
hold a whole result, as from a grader that did not finish) and counts only when the grader
exited 0 and the document agrees with the declared suite (:mod:`.trust`); completeness is
recomputed here. The same runner grades State A against
itself for the identity run (`srb tasks record`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from srb_tui.grader.suite.checks import summarise
from srb_tui.runner import ExecResult
from srb_tui.runner.files import fetch_file
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress

from .base import note_run_extra
from .behavioural_rows import CHECK_KEYS as CHECK_KEYS  # (re-exported: the rows' module)
from .behavioural_rows import StreamedChecks
from .behavioural_rows import checks_by_module as checks_by_module
from .behavioural_rows import module_rows as module_rows
from .common import Publish, StageFault, StageOutcome, option_str
from .stage import StageContext
from .stage_container import StageContainer
from .stage_layout import (
    ORIGINAL_DIR,
    SCRATCH,
    SHARED_WORK,
    SUBMISSION_DIR,
    SUBMISSION_SOURCE,
    StageLayout,
    container_path,
)
from .suite_progress import SuiteProgress
from .suite_result import StreamedResult
from .trust import UntrustedResult, verify_behavioural

RESULT_PATH = f"{SCRATCH}/behavioural.json"
PRIVATE_PATH = f"{SCRATCH}/behavioural"
WORK_PATH = SHARED_WORK
LAYOUT = StageLayout(slots=1, workspace=True, shared_tmp=True, private_tests=True)


def wants_original(spec: StageSpec) -> bool:
    """Whether State A goes into the stage container: the published ``reference`` option
    (default true; lang07 declares ``reference = false`` because its image must not hold
    State A), else srb's older ``original`` option, else yes. When it does, the modules get
    ``SRB_ORIGINAL`` and ``/opt/original``; when not, neither exists."""
    for key in ("reference", "original"):
        value = spec.options.get(key)
        if isinstance(value, bool):
            return value
    return True


def suite_rel(spec: StageSpec) -> str:
    """The suite file relative to tests/ (``suite`` option, default behavioural/suite.toml)."""
    return option_str(spec, "suite", f"{option_str(spec, 'context', spec.name)}/suite.toml")


async def run_suite_in(
    box: StageContainer,
    task: Task,
    spec: StageSpec,
    *,
    publish: Publish,
    run_id: str,
    with_original: bool = False,
    timings: dict[str, float] | None = None,
    rows: StreamedChecks | None = None,
) -> dict[str, Any]:
    """Run the suite in a prepared container (trees in place); the stage-result document,
    checked against the declared suite. Raises StageFault when it cannot be believed.
    ``rows`` writes each module's check rows as the grader reports them (the caller makes
    the store hold the result with its :meth:`~StreamedChecks.finish`; a fault here clears
    them). ``timings`` gets the seconds of each host-side step (``context``, ``grader``,
    ``fetch`` (the result from the grader's lines, or the file), ``parse``, ``verify``)."""
    try:
        return await _run_suite(box, task, spec, publish=publish, run_id=run_id,
                                with_original=with_original, clock=_Clock(timings),
                                rows=rows)
    except BaseException:
        if rows is not None:
            await rows.abandon()
        raise


async def _run_suite(
    box: StageContainer,
    task: Task,
    spec: StageSpec,
    *,
    publish: Publish,
    run_id: str,
    with_original: bool,
    clock: _Clock,
    rows: StreamedChecks | None,
) -> dict[str, Any]:
    rel = suite_rel(spec)
    folder = PurePosixPath(rel).parts[0] if len(PurePosixPath(rel).parts) > 1 else ""
    await box.put_context(
        task, [option_str(spec, "context", spec.name), *([folder] if folder else [])]
    )
    publish(Progress(run_id, f"behavioural: running suite tests/{rel}"))
    progress = SuiteProgress(box.store, run_id, publish)
    await progress.begin()
    clock.lap("context")

    streamed = StreamedResult()

    def on_line(raw: bytes) -> None:
        progress.on_line(raw)
        found = streamed.on_line(raw)  # each checks line parsed once, for both
        if rows is not None and found is not None:
            rows.on_checks(*found)

    res = await box.grader_streamed(
        [
            "suite",
            "--suite",
            container_path(rel),
            "--repo",
            SUBMISSION_DIR,
            "--repo-source",
            SUBMISSION_SOURCE,
            *(["--original", ORIGINAL_DIR] if with_original else []),
            "--result",
            RESULT_PATH,
            "--work",
            WORK_PATH,
            "--private",
            PRIVATE_PATH,
            "--task",
            task.id,
            *[arg for name in box.keep_env() for arg in ("--keep-env", name)],
        ],
        timeout_sec=spec.timeout_sec,
        on_line=on_line,
    )
    await progress.drain()
    clock.lap("grader")
    doc = streamed.document() if res.exit_code == 0 and not res.timed_out else None
    if doc is None:  # a grader that did not finish, or lines that do not hold a result
        doc = await _fetch_result(box, res)
    clock.lap("fetch")
    if not isinstance(doc, dict) or not isinstance(doc.get("units"), list):
        raise StageFault("behavioural: the suite's result has no units")
    clock.lap("parse")
    notes = doc.setdefault("notes", [])
    if not isinstance(notes, list):
        notes = doc["notes"] = [str(notes)]
    if res.timed_out or res.exit_code != 0 or doc.get("status") != "ok":
        doc["status"] = "error"
        if res.timed_out:
            notes.append(
                f"the stage's budget of {spec.timeout_sec:g} s ran out; "
                "the modules recorded so far are kept, the rest stay unreached"
            )
        elif res.exit_code != 0:
            notes.append(
                f"the grader did not finish ({res.describe()}); a stage result counts only "
                "from a grader that exited 0"
            )
        return doc
    try:
        summary = verify_behavioural(doc, task.suite)
    except UntrustedResult as err:
        doc["status"] = "error"
        notes.append("the stage result does not agree with suite.toml: " + str(err))
        return doc
    doc["units"] = summary.pop("units")
    claimed = doc.get("metadata")
    metadata: dict[str, Any] = dict(claimed) if isinstance(claimed, dict) else {}
    doc["metadata"] = {**metadata, **summary, "verified_by_host": True}
    clock.lap("verify")
    return doc


async def _fetch_result(box: StageContainer, res: ExecResult) -> Any:
    """The stage result file the grader wrote (its last checkpoint), parsed."""
    raw = await fetch_file(box.engine, box.h, RESULT_PATH)
    if raw is None:
        tail = res.stderr.decode("utf-8", "replace").strip()[-500:]
        raise StageFault(
            f"behavioural: the suite wrote no result (exit {res.exit_code})"
            + (f": {tail}" if tail else "")
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise StageFault(f"behavioural: the suite's result is not JSON: {err}") from err


class _Clock:
    """Seconds between successive laps, into ``into`` (nothing when it is None)."""

    def __init__(self, into: dict[str, float] | None) -> None:
        self.into = into
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        if self.into is not None:
            now = time.perf_counter()
            self.into[name] = self.into.get(name, 0.0) + now - self.last
            self.last = now


def boundary_given_up(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """Modules that ran submission code as their own identity (uid 0) instead of through
    ``$SRB_SUBMISSION_RUN``, with the grader's note on each (the unit's ``boundary``)."""
    return [{"module": str(unit.get("id")), "note": str(unit["boundary"])}
            for unit in doc.get("units", [])
            if isinstance(unit, dict) and unit.get("boundary")]


def suite_tampering(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Modules during which the suite's files changed (the grader's ``tampering`` list):
    each is that module's failure."""
    return [{"module": str(unit.get("id")), "changed": list(unit["tampering"])}
            for unit in doc.get("units", [])
            if isinstance(unit, dict) and isinstance(unit.get("tampering"), list)
            and unit["tampering"]]


def boundary_line(given_up: list[dict[str, str]]) -> str:
    """The one line ``srb tasks record`` and a run's record say about it ('' when none)."""
    if not given_up:
        return ""
    names = ", ".join(item["module"] for item in given_up)
    return (f"boundary given up in Stage II: module(s) {names}: "
            + "; ".join(item["note"] for item in given_up))


def outcome_of(doc: dict[str, Any]) -> StageOutcome:
    """The ladder's view of a behavioural stage result."""
    status = "ok" if doc.get("status") == "ok" else "error"
    metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    units = [u for u in doc.get("units", []) if isinstance(u, dict)]
    complete = None
    if status == "ok":  # from the (host-verified) module units, never metadata.complete
        try:
            complete = bool(summarise(units)["complete"])
        except (KeyError, TypeError, ValueError):
            status, complete = "error", None
            doc.setdefault("notes", []).append("the module results are malformed")
    harness_error = None
    if status == "error":
        notes = doc.get("notes") or []
        harness_error = "behavioural: " + ("; ".join(str(n) for n in notes) or "stage error")
    return StageOutcome(
        stage="behavioural",
        status=status,
        envelope=doc,
        harness_error=harness_error,
        behavioural_complete=complete,
        modules=units,
    )


class BehaviouralStage:
    """Stage II: run the suite against the submission and record modules and checks."""

    name = "behavioural"

    async def run(self, ctx: StageContext) -> StageOutcome:
        task = ctx.task
        run_id = ctx.run_id
        publish = ctx.publish
        assert task.evaluation is not None
        spec = task.evaluation.behavioural
        image = await ctx.images.get("behavioural")
        with_original = wants_original(spec)
        rows = StreamedChecks(ctx.store, run_id)
        async with StageContainer(
            ctx.engine, run_id, "behavioural", image.tag, publish=publish, store=ctx.store,
            layout=LAYOUT, task=task, image_env=image.env,
        ) as box:
            original = ctx.original if with_original else None
            await box.put_trees(original, ctx.submission, workspace=True)
            doc = await run_suite_in(
                box, task, spec, publish=publish, run_id=run_id, with_original=with_original,
                rows=rows,
            )
            given_up = boundary_given_up(doc)
            tampering = suite_tampering(doc)
            if given_up or tampering:
                await note_run_extra(ctx.store, run_id, "grading", "behavioural",
                                     {**box.grading, "boundary_given_up": given_up,
                                      "suite_tampering": tampering})
        await rows.finish(doc)
        return outcome_of(doc)


BEHAVIOURAL = BehaviouralStage()
