"""A task's images as runs build them: the infra image (when the task's checkout has one),
the agent image and one per enabled stage, in dependency order.

``srb images build`` and anything else that wants a task's images ready goes through
:func:`build_task_images`, so the tags, build arguments and image map are the ones runs use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
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
from srb_tui.service.grading.image_plan import (
    INFRA_TAG,
    ImageMapError,
    infra_context,
    load_image_map,
    stage_buildargs,
)
from srb_tui.service.grading.stages.common import StageFault, StageImages, image_tag, stage_context
from srb_tui.service.run.orchestrator import env_image_tag

LogSink = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True)
class ImageContext:
    """One image of a task: its role (``infra``, ``env`` or a stage), build context, tag."""

    role: str
    context: Path
    tag: str


def image_contexts(task: Task) -> list[ImageContext]:
    """The infra, agent and enabled stage images, in build order, tagged as runs tag them."""
    out: list[ImageContext] = []
    infra = infra_context(task)
    if infra is not None:
        out.append(ImageContext("infra", infra, INFRA_TAG))
    out.append(ImageContext("env", task.dir / "environment", env_image_tag(task.id)))
    evaluation = task.evaluation
    for stage in STAGE_NAMES:
        spec = None if evaluation is None else getattr(evaluation, stage, None)
        if isinstance(spec, StageSpec) and spec.enabled:
            out.append(ImageContext(stage, stage_context(task, spec), image_tag(task, stage)))
    return out


async def build_env_image(
    engine: DockerEngine,
    task: Task,
    *,
    base_image: str,
    infra: ImageInfo | None,
    image_map: Mapping[str, str] | None = None,
    force: bool = False,
    on_log: Callable[[str], Awaitable[None]] | None = None,
) -> ImageInfo:
    """The agent image (``environment/``), given the infra image when there is one."""
    context = task.dir / "environment"
    args = stage_buildargs(context, infra_tag=infra.tag if infra else None, behavioural_tag=None)
    return await build_image(engine, context, env_image_tag(task.id), base_image=base_image,
                             buildargs=args, image_map=image_map, force=force, on_log=on_log)


async def build_task_images(
    engine: DockerEngine,
    task: Task,
    *,
    base_image: str,
    image_map: Mapping[str, str] | None = None,
    force: bool = False,
    on_log: LogSink | None = None,
) -> list[tuple[str, ImageInfo]]:
    """Build (or find unchanged) every image of the task in dependency order.

    Raises ImageBuildError naming the role that failed (and any missing reference)."""
    images = StageImages(engine, task, base_image, lambda event: None, image_map=image_map,
                         force=force, on_log=on_log)
    built: list[tuple[str, ImageInfo]] = []
    try:
        infra = await images.infra()
        if infra is not None:
            built.append(("infra", infra))

        async def env_log(line: str) -> None:
            if on_log is not None:
                await on_log("env", line)

        try:
            env = await build_env_image(engine, task, base_image=base_image, infra=infra,
                                        image_map=image_map, force=force, on_log=env_log)
        except ImageBuildError as err:
            raise ImageBuildError(f"env image could not be built: {err}", err.log_tail) from err
        built.append(("env", env))
        for image in image_contexts(task):
            if image.role in STAGE_NAMES:
                built.append((image.role, await images.get(image.role)))
    except StageFault as err:
        raise ImageBuildError(str(err)) from err
    finally:
        await images.settle()
    return built


__all__ = [
    "ImageBuildError",
    "ImageContext",
    "ImageInfo",
    "ImageMapError",
    "build_env_image",
    "build_task_images",
    "image_contexts",
    "list_images",
    "load_image_map",
    "prune_images",
]
