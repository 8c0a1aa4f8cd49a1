"""A task's images as runs build them: the agent image and one per enabled stage.

``srb images build`` and anything else that wants a task's images ready goes through
:func:`build_task_images`, so the tags and contexts are the ones runs use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from srb_tui.runner import (
    DockerEngine,
    ImageBuildError,
    ImageInfo,
    build_image,
    list_images,
    prune_images,
)
from srb_tui.schema import STAGE_NAMES, Task
from srb_tui.schema.models import StageSpec
from srb_tui.service.orchestrator import env_image_tag
from srb_tui.service.stages.common import image_tag, stage_context


@dataclass(frozen=True)
class ImageContext:
    """One image of a task: its role (``env`` or a stage), build context and tag."""

    role: str
    context: Path
    tag: str


def image_contexts(task: Task) -> list[ImageContext]:
    """The agent image and each enabled stage's image, tagged as runs tag them."""
    out = [ImageContext("env", task.dir / "environment", env_image_tag(task.id))]
    evaluation = task.evaluation
    for stage in STAGE_NAMES:
        spec = None if evaluation is None else getattr(evaluation, stage, None)
        if isinstance(spec, StageSpec) and spec.enabled:
            out.append(ImageContext(stage, stage_context(task, spec), image_tag(task, stage)))
    return out


async def build_task_image(
    engine: DockerEngine,
    image: ImageContext,
    *,
    base_image: str,
    force: bool = False,
    on_log: Callable[[str], Awaitable[None]] | None = None,
) -> ImageInfo:
    """Build (or find unchanged) one of a task's images; ImageBuildError on failure."""
    return await build_image(engine, image.context, image.tag, base_image=base_image,
                             on_log=on_log, force=force)


__all__ = [
    "ImageBuildError",
    "ImageContext",
    "ImageInfo",
    "build_task_image",
    "image_contexts",
    "list_images",
    "prune_images",
]
