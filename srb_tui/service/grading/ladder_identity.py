"""The identity run: State A graded against itself by the behavioural suite.

The paper's tasks verify themselves this way: unless State A passes what Stage II asks of it
when it is the submission, the expectations are wrong and the task is refused. The published
rule decides what that means for a rewrite: only what State A can answer is priced, so a
module the suite weighs 0 (lang07's ``build``, which builds the new stack's artefact) is run
and reported but not required, and a check State A skips because it cannot run there by
design is reported as not checked (never as a pass) while any failed or errored scored check
refuses the task (:func:`checked_row`); and the stage's ``reference`` flag decides
whether State A is also mounted as the original (``/opt/original``, ``SRB_ORIGINAL``) or
withheld (lang07: ``reference = false``), exactly as in grading. Each module row says what
was checked. It runs in the verification image, which carries both toolchains; when that
image has no private grader interpreter, ``/opt/srb/python/bin/python3`` is made to name
its ``python3`` so suites written for the behavioural image run unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.runner import DockerEngine
from srb_tui.schema import Task
from srb_tui.service.grading.stages.behavioural import (
    LAYOUT,
    boundary_given_up,
    boundary_line,
    module_rows,
    run_suite_in,
    wants_original,
)
from srb_tui.service.grading.stages.common import Publish, StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer


def _no_publish(event: object) -> None:
    return None


@dataclass
class IdentityResult:
    """Per-module rates of State A against itself; ``ok`` when every module is 1.0."""

    task_id: str
    image: str
    status: str
    modules: list[dict[str, Any]] = field(default_factory=list)
    envelope: dict[str, Any] = field(default_factory=dict)
    reference: bool = True
    """Whether State A was also mounted as the original (the stage's ``reference`` flag)."""

    @property
    def failing(self) -> list[str]:
        """Scored modules (weight > 0) that are not ok at rate 1.0."""
        return [str(m["id"]) for m in self.modules if m["required"] and not m["passed_identity"]]

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.modules) and not self.failing

    @property
    def boundary(self) -> str:
        """One line when a module ran submission code as uid 0 itself ('' when none)."""
        return boundary_line(boundary_given_up(self.envelope))

    def to_json(self) -> dict[str, Any]:
        return {
            "boundary": self.boundary or None,
            "task": self.task_id,
            "ok": self.ok,
            "status": self.status,
            "image": self.image,
            "modules": self.modules,
            "failing": self.failing,
            "reference": self.reference,
            "notes": self.envelope.get("notes", []),
        }


async def record_identity(
    engine: DockerEngine,
    task: Task,
    state_a: Path,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    publish: Publish = _no_publish,
    image_map: Mapping[str, str] | None = None,
    submission: Path | None = None,
    images: StageImages | None = None,
    label: str = "identity",
    stage: str | None = None,
    run_prefix: str | None = None,
) -> IdentityResult:
    """Run the behavioural suite on State A vs State A in the verification image.

    ``submission`` grades another tree in State A's place (a mutant of State A, issue 36)
    in the same image and with the same original; ``images`` shares one set of stage images
    between many such gradings (built once); ``stage`` names another stage's image (a
    mutant of the reference runs in Stage II's, which carries its toolchain). Raises
    StageFault (from :mod:`srb_tui.service.grading.stages.common`) or RunnerError when the
    image or container cannot be made. ``run_prefix`` starts the container's run id (a
    strength campaign's, so a resumed one finds what a killed sitting left).
    """
    if task.evaluation is None:
        raise ValueError(f"task {task.id} has no usable tests/evaluation.toml")
    stage = stage or identity_stage(task)
    run_id = f"{run_prefix or label}-{uuid.uuid4().hex[:8]}"
    if images is None:
        images = StageImages(engine, task, base_image, publish, run_id=run_id,
                             image_map=image_map)
    info = await images.get(stage)
    spec = task.evaluation.behavioural
    with_original = wants_original(spec)
    async with StageContainer(
        engine, run_id, label, info.tag, publish=publish, layout=LAYOUT, task=task,
        alias_python=True, image_env=info.env,
    ) as box:
        await box.put_trees(state_a if with_original else None, submission or state_a,
                            workspace=True)
        doc = await run_suite_in(
            box, task, spec, publish=publish, run_id=run_id, with_original=with_original
        )
    return IdentityResult(
        task_id=task.id,
        image=info.tag,
        status="ok" if doc.get("status") == "ok" else "error",
        modules=[checked_row(row, with_original) for row in module_rows(doc)],
        envelope=doc,
        reference=with_original,
    )


def identity_stage(task: Task) -> str:
    """The stage whose image the identity run uses: verification's (both toolchains) when
    the task has one, else behavioural's."""
    assert task.evaluation is not None
    return "verification" if task.evaluation.verification is not None else "behavioural"


def checked_row(row: Mapping[str, Any], with_original: bool) -> dict[str, Any]:
    """A module row with what the identity run asked of it and whether State A met it.

    A scored module must run (status ok) and State A must fail or error none of its scored
    checks. A check State A skips is one that cannot run on State A by design (lang03's
    ``structure`` asks 28 questions only a Go build can answer and skips them on the Python
    tree): it is reported as not checked, never as a pass; a module that skipped everything
    checked nothing and does not pass."""
    out = dict(row)
    weight = float(row.get("weight") or 0.0)
    scored, passed = int(row.get("scored") or 0), int(row.get("passed") or 0)
    skipped = int(row.get("skipped") or 0)
    broken = int(row.get("failed") or 0) + int(row.get("errors") or 0)
    exact = row.get("status") == "ok" and broken == 0 and passed > 0 and scored > 0
    where = ("State A as the submission and at /opt/original" if with_original
             else "State A as the submission only (reference = false: no /opt/original)")
    out["required"] = weight > 0
    out["passed_identity"] = exact
    out["unchecked"] = skipped
    if weight <= 0:
        out["checked"] = (f"reported only: weight 0 is not scored, so State A need not pass "
                          f"it (ran on {where})")
        return out
    text = f"required: no scored check may fail on {where}; {passed}/{scored} passed"
    if skipped:
        text += f", {skipped} skipped on State A (cannot run there: not checked)"
    hint = (row.get("detail") or {}).get("sandbox_hint") if isinstance(row.get("detail"),
                                                                        Mapping) else None
    if hint and not exact:
        text += f"; {hint}"
    out["checked"] = text
    return out
