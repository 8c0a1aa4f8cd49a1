"""Names every stage module shares and that the image builder needs too: the harness-fault
exception, the event sink type, and where a stage's build context and image tag come from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from srb_tui.schema import StageSpec, Task
from srb_tui.service.image_plan import stage_tag

Publish = Callable[[object], None]


class StageFault(Exception):
    """A stage could not run (image, container, grader): a harness error, never a verdict."""


def tests_dir(task: Task) -> Path:
    return task.dir / "tests"


def stage_context(task: Task, spec: StageSpec) -> Path:
    """The stage's build context folder (``context`` option, default the stage name)."""
    return tests_dir(task) / str(spec.options.get("context") or spec.name)


def image_tag(task: Task, stage: str) -> str:
    """``[stages.<stage>].image`` when given, else ``srb-stage/<task>-<stage>:latest``. The
    image carries its context hash as a label, so a changed context is rebuilt and an
    unchanged one is not."""
    return stage_tag(task, stage)
