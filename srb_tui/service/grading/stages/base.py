"""Names every stage module shares and that the image builder needs too: the harness-fault
exception, the event sink type, and where a stage's build context and image tag come from."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srb_tui.schema import StageSpec, Task
from srb_tui.service.grading.image_plan import stage_tag
from srb_tui.store import Store

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




async def note_run_extra(store: Store, run_id: str, key: str, role: str, value: Any) -> None:
    """Set ``runs.extra[key][role] = value`` in one write transaction (image builds and
    stage containers record concurrently); a store error never stops a stage."""
    with contextlib.suppress(Exception):
        await store.runs.merge_extra(run_id, into={key: {role: value}})
