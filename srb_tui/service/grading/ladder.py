"""The three-stage grading ladder of one run: audit, behavioural suite, verification.

`grade_run` builds (or reuses) the stage images, runs each stage in its own container,
records everything in the store, writes the stage envelopes and ``score.json`` /
``reward.json`` into the run folder atomically, and updates the run. Every status change is
written to the store before it is announced through ``publish`` (``StatusChanged``,
``Progress``, ``StageFinished``; the run-level ``RunFinished`` is the caller's).

Gating follows the paper: a Stage I fail scores 0 and Stage III does not run, but Stage II
still runs and is shown uncredited (so blindness can be counted); an incomplete Stage II
also stops the run before Stage III; ``force=True`` runs Stage III anyway and shows it
uncredited. Status is not verdict: a stage that could not run (image build, container,
driver, grader fault) is recorded with status ``error`` and the run becomes invalid
(``valid=false``, ``blocked_by``, ``harness_error``), never a zero.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui import faultpoint
from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.gateway import Gateway
from srb_tui.grader import contract
from srb_tui.grader.fingerprint import fingerprint
from srb_tui.runner import DockerEngine
from srb_tui.schema import StageSpec, Task
from srb_tui.scoring import ScoreEnvelope, ScoringPolicy, score_run
from srb_tui.scoring.published import error_document, verdict_document
from srb_tui.scoring.result_files import write_result_files
from srb_tui.service.events import Progress, StatusChanged
from srb_tui.service.grading.stage_record import persist_stage
from srb_tui.service.grading.stages.audit import AUDIT
from srb_tui.service.grading.stages.behavioural import BEHAVIOURAL, outcome_of
from srb_tui.service.grading.stages.common import StageImages, StageOutcome, with_fault
from srb_tui.service.grading.stages.stage import DEFAULT_PARALLEL, Stage, StageContext
from srb_tui.service.grading.stages.verification import VERIFICATION
from srb_tui.store import Store, StoreError, is_legal

STAGES = contract.STAGES
_GRADING_PATH = ("audit", "behavioural", "verification", "scored")


class LadderError(Exception):
    """The ladder cannot grade this run at all (bad input, wrong run state)."""


def _no_publish(event: object) -> None:
    return None


@dataclass(frozen=True)
class LadderContext:
    """Everything one grading needs.

    ``submission_dir`` is the collected tree on the host, ``original_dir`` State A's tree,
    ``run_dir`` the run's folder (``state/runs/<id>/``) where the envelopes go.
    ``adversary_budget_sec`` overrides every adversary's budget (tests, quick looks);
    ``environ`` is where drivers look up API keys (default ``os.environ``); with ``gateway``
    the model drivers of Stage I/III send their requests through it with run tokens.
    """

    store: Store
    engine: DockerEngine
    task: Task
    run_id: str
    submission_dir: Path
    original_dir: Path
    run_dir: Path
    base_image: str = DEFAULT_BASE_IMAGE
    publish: Callable[[object], None] = _no_publish
    adversary_budget_sec: float | None = None
    max_parallel_adversaries: int = DEFAULT_PARALLEL
    environ: Mapping[str, str] | None = None
    gateway: Gateway | None = None
    image_map: Mapping[str, str] | None = None


def _policy(task: Task) -> ScoringPolicy:
    assert task.evaluation is not None
    # The loader's [scoring] record and the scorer's policy carry the same five numbers.
    return ScoringPolicy(**dataclasses.asdict(task.evaluation.scoring))


def _result_name(spec: StageSpec) -> str:
    name = Path(spec.result).name if spec.result else ""
    return name if name.endswith(".json") else f"{spec.name}.json"


def _select(stages: Sequence[str] | None) -> tuple[str, ...]:
    if stages is None:
        return STAGES
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise LadderError(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    return tuple(s for s in STAGES if s in stages)


def _path(current: str, target: str) -> list[str] | None:
    """The shortest legal chain of grading statuses from ``current`` to ``target``."""
    if current == target:
        return []
    queue: deque[tuple[str, list[str]]] = deque([(current, [])])
    seen = {current}
    while queue:
        here, path = queue.popleft()
        for step in _GRADING_PATH:
            if step not in seen and is_legal(here, step):
                if step == target:
                    return [*path, step]
                seen.add(step)
                queue.append((step, [*path, step]))
    return None


class _Ladder:
    """One grading in progress."""

    def __init__(self, ctx: LadderContext, selected: tuple[str, ...], force: bool) -> None:
        self.ctx = ctx
        self.selected = selected
        self.force = force
        assert ctx.task.evaluation is not None
        self.evaluation = ctx.task.evaluation
        self.notes: list[str] = []
        self.stage_docs: dict[str, dict[str, Any]] = {}
        self.images = StageImages(
            ctx.engine,
            ctx.task,
            ctx.base_image,
            ctx.publish,
            store=ctx.store,
            run_id=ctx.run_id,
            image_map=ctx.image_map,
        )
        self.stage_ctx = StageContext(
            engine=ctx.engine,
            store=ctx.store,
            run_id=ctx.run_id,
            task=ctx.task,
            original=ctx.original_dir,
            submission=ctx.submission_dir,
            images=self.images,
            publish=self.publish,
            run_dir=ctx.run_dir,
            environ=ctx.environ,
            gateway=ctx.gateway,
            budget_override=ctx.adversary_budget_sec,
            max_parallel=ctx.max_parallel_adversaries,
        )
        """The one context Stage I, II and III each run on."""

    # ------------------------------------------------------------------ bookkeeping

    def publish(self, event: object) -> None:
        try:
            self.ctx.publish(event)
        except Exception:  # a subscriber's fault must not stop the grading
            return

    async def enter(self, status: str, reason: str) -> None:
        run = await self.ctx.store.runs.require_run(self.ctx.run_id)
        chain = _path(run.status, status)
        if chain is None:
            raise LadderError(
                f"run {self.ctx.run_id} is {run.status!r}; it cannot move to {status!r} "
                "(grading starts from 'collecting' or re-grades a 'scored' run)"
            )
        for step in chain:
            why = reason if step == status else f"passing through to {status}"
            await self.ctx.store.runs.transition(self.ctx.run_id, step, why)
            self.publish(StatusChanged(self.ctx.run_id, step, why))

    def spec(self, stage: str) -> StageSpec:
        spec = getattr(self.evaluation, stage)
        assert isinstance(spec, StageSpec)
        return spec

    def result_path(self, stage: str) -> Path:
        return self.ctx.run_dir / _result_name(self.spec(stage))

    async def run_stage(self, stage: Stage) -> StageOutcome:
        """Enter ``stage``'s status, run it on the grading's context (a harness fault
        becomes an ``error`` outcome), and persist what it produced."""
        name = stage.name
        await self.enter(name, f"Stage {STAGES.index(name) + 1} ({name})")
        await self.ctx.store.grading.clear_stage(self.ctx.run_id, name)
        self.publish(Progress(self.ctx.run_id, f"{name}: started"))
        outcome = await with_fault(name, self.ctx.task.id, lambda: stage.run(self.stage_ctx))
        await persist_stage(self.stage_ctx, outcome, self.result_path(name))
        return outcome

    async def rung(self, stage: Stage) -> StageOutcome | None:
        """``stage`` run now, or its stored outcome when this grading does not re-run it."""
        if stage.name not in self.selected:
            return self.previous(stage.name)
        return await self.run_stage(stage)

    def previous(self, stage: str) -> StageOutcome | None:
        """A stage's stored envelope (when this grading does not re-run it)."""
        path = self.result_path(stage)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise LadderError(f"run {self.ctx.run_id}: cannot read {path}: {err}") from err
        if not isinstance(doc, dict):
            raise LadderError(f"run {self.ctx.run_id}: {path} is not a stage result")
        status = "ok" if doc.get("status") == "ok" else "error"
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        if stage == "behavioural":
            return outcome_of(doc)
        if stage == "audit":
            gate = str(metadata.get("gate", "error")) if status == "ok" else "error"
            return StageOutcome("audit", status, doc, audit_gate=gate)
        units = [u for u in doc.get("units", []) if isinstance(u, dict)]
        adversaries = {str(u.get("id")): str(u.get("status")) for u in units}
        breaks = [{"adversary": a} for a, o in adversaries.items() if o == "broken"]
        return StageOutcome("verification", status, doc, adversaries=adversaries, breaks=breaks)

    # ------------------------------------------------------------------ the stages

    async def verification(self, gate_open: bool) -> StageOutcome | None:
        spec = self.evaluation.verification
        if spec is None or not spec.enabled:
            # Stage III does not run: no result file, and none left from an earlier grading.
            (self.ctx.run_dir / "verification.json").unlink(missing_ok=True)
            return None
        if "verification" not in self.selected:
            return self.previous("verification")
        if not gate_open and not self.force:
            await self.ctx.store.grading.clear_stage(self.ctx.run_id, "verification")
            self.result_path("verification").unlink(missing_ok=True)
            return None
        if not gate_open:
            self.notes.append(
                "Stage III was forced although the gate was closed: shown, not credited"
            )
        return await self.run_stage(VERIFICATION)

    # ------------------------------------------------------------------ scoring

    def score(
        self,
        audit: StageOutcome | None,
        behavioural: StageOutcome | None,
        verification: StageOutcome | None,
        gate_open: bool,
    ) -> ScoreEnvelope:
        self.stage_docs = {
            o.stage: o.envelope for o in (audit, behavioural, verification) if o is not None
        }
        errors: dict[str, str] = {}
        for outcome in (audit, behavioural, verification):
            if outcome is not None and outcome.harness_error:
                errors[outcome.stage] = outcome.harness_error
        gate = "error" if audit is None else (audit.audit_gate or "error")
        if audit is None:
            errors["audit"] = "audit: the run has no Stage I result; grade it first"
        complete = None if behavioural is None else behavioural.behavioural_complete
        if behavioural is None:
            errors["behavioural"] = "behavioural: the run has no Stage II result; grade it first"
        spec = self.evaluation.verification
        enabled = spec is not None and spec.enabled
        credited = verification if gate_open else None
        envelope = score_run(
            gate,
            complete,
            [] if behavioural is None else behavioural.modules,
            None if credited is None else credited.adversaries,
            _policy(self.ctx.task),
            verification_enabled=enabled,
            breaks=None if credited is None else credited.breaks,
            harness_errors=errors,
            notes=self.notes,
        )
        if verification is not None and not gate_open:
            survived = sum(1 for o in verification.adversaries.values() if o == "survived")
            envelope.verification["uncredited"] = {
                "adversaries": dict(verification.adversaries),
                "models_survived": survived,
                "breaks": list(verification.breaks),
            }
        elif enabled and not gate_open:
            envelope.notes.append(
                "Stage III did not run: "
                + ("Stage I did not pass" if gate != "pass" else "Stage II is not complete")
            )
        return envelope

    async def finish(self, envelope: ScoreEnvelope) -> None:
        c = self.ctx
        harnesses = []
        for stage, doc in self.stage_docs.items():
            block = doc.get("harness")
            if isinstance(block, dict):
                harnesses.append({"stage": stage, **block})
        write_result_files(
            c.run_dir,
            verdict_document(
                envelope, task=c.task.id, stages=self.stage_docs, harnesses=harnesses,
                behavioural_points=_policy(c.task).behavioural_points,
            ),
        )  # fmt: skip
        faultpoint.reached("scoring:files")
        await c.store.runs.update_run(
            c.run_id,
            score=envelope.score,
            max_score=envelope.max_score,
            valid=envelope.valid,
            blocked_by=envelope.blocked_by,
            harness_error=envelope.harness_error,
            grader_fingerprint=fingerprint(),
        )
        await c.store.infra.add_event(c.run_id, "score", envelope.to_json())
        faultpoint.reached("scoring:stored")
        await self.enter("scored", "graded")

    async def grade(self) -> ScoreEnvelope:
        wanted = [s for s in self.selected if getattr(self.evaluation, s) is not None]
        self.images.prefetch(wanted)
        audit = await self.rung(AUDIT)
        behavioural = await self.rung(BEHAVIOURAL)  # runs even after a Stage I fail
        gate_open = (
            audit is not None
            and audit.audit_gate == "pass"
            and behavioural is not None
            and behavioural.behavioural_complete is True
        )
        verification = await self.verification(gate_open)
        envelope = self.score(audit, behavioural, verification, gate_open)
        await self.finish(envelope)
        return envelope


async def grade_run(
    ctx: LadderContext, *, stages: Sequence[str] | None = None, force: bool = False
) -> ScoreEnvelope:
    """Grade (or re-grade the given ``stages`` of) one run; the score envelope.

    Raises LadderError for input the ladder cannot use (a task without evaluation.toml, a
    missing tree, a run in a state that cannot be graded). Stage failures are not raised:
    they make the result invalid.
    """
    selected = _select(stages)
    task = ctx.task
    if task.evaluation is None:
        raise LadderError(f"task {task.id} has no usable tests/evaluation.toml")
    for stage in ("audit", "behavioural"):
        if not getattr(task.evaluation, stage).enabled:
            raise LadderError(f"task {task.id}: srb needs [stages.{stage}] enabled")
    for label, folder in (("submission", ctx.submission_dir), ("State A", ctx.original_dir)):
        if not folder.is_dir():
            raise LadderError(f"run {ctx.run_id}: the {label} tree {folder} does not exist")
    run = await ctx.store.runs.require_run(ctx.run_id)
    if _path(run.status, selected[0]) is None and run.status != selected[0]:
        raise LadderError(
            f"run {ctx.run_id} is {run.status!r}; grading starts from 'collecting' or "
            "re-grades a 'scored' run"
        )
    ctx.run_dir.mkdir(parents=True, exist_ok=True)
    ladder = _Ladder(ctx, selected, force)
    try:
        return await ladder.grade()
    except LadderError:
        raise
    except (StoreError, OSError):
        raise  # the store or the disk failed (full, read-only): nothing can be recorded,
        # so the run stays in its grading status and `srb resume` grades it again
    except Exception as err:
        message = f"grading failed: {type(err).__name__}: {err}"
        with contextlib.suppress(Exception):
            write_result_files(ctx.run_dir, error_document(task.id, message))
        with contextlib.suppress(Exception):
            await ctx.store.runs.update_run(ctx.run_id, valid=False, harness_error=message)
            await ladder.enter("scored", message)
        raise LadderError(f"run {ctx.run_id}: {message}") from err
    finally:
        await ladder.images.settle()
