"""The ``preparing`` phase of a run: the task found, State A and the task's env image.

State A comes from the cache (or is fetched and checked); the env image is built from the
task's ``environment/`` on the base image, on top of the stage infra image when the task has
one, with the operator's image map; the built image is recorded on the run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.config import Settings
from srb_tui.runner import ImageBuildError, build_image
from srb_tui.schema import Task, TaskLoad, load_task
from srb_tui.service.grading.image_plan import ImageMapError, load_image_map, stage_buildargs
from srb_tui.service.grading.stages.base import StageFault
from srb_tui.service.grading.stages.stage_images import StageImages
from srb_tui.service.provenance import stamp as stamp_provenance
from srb_tui.service.run.run_faults import TaskNotFound
from srb_tui.sources import prepare_state_a

if TYPE_CHECKING:
    from srb_tui.service.run.context import RunContext


def load_task_ref(settings: Settings, task_ref: str) -> TaskLoad:
    """A task by folder (one holding task.toml) or by id under the configured task roots."""
    from srb_tui.service.catalog import find_task, task_hint

    path = Path(task_ref)
    if (path / "task.toml").is_file():
        return load_task(path)
    load = find_task(settings.task_roots, task_ref)
    if load is None:
        roots = ", ".join(str(r) for r in settings.task_roots)
        raise TaskNotFound(f"no task {task_ref!r} under {roots}"
                           f"{task_hint(settings.task_roots, task_ref)}")
    return load


def env_image_tag(task_id: str) -> str:
    return f"srb-task/{task_id.lower()}:env"


async def prepare(ctx: RunContext, run_id: str, task: Task) -> tuple[Path, str]:
    """The ``preparing`` phase: State A from the cache (or fetched), the stage infra image
    the env image may build on, then the env image; State A's tree and the image tag."""
    ctx.moves.say(run_id, "preparing State A")
    prepared = await asyncio.to_thread(
        prepare_state_a, task.dir, task.state_a, ctx.settings.state_a_cache,
    )
    ctx.moves.say(run_id, f"State A: {prepared.file_count} files ({prepared.source})")
    tag = env_image_tag(task.id)
    ctx.moves.say(run_id, f"building {tag}")

    async def on_log(line: str) -> None:
        ctx.moves.say(run_id, f"build: {line}")

    try:
        image_map = load_image_map(ctx.settings.state_dir)
    except ImageMapError as exc:
        raise ImageBuildError(str(exc)) from exc
    images = StageImages(ctx.engine, task, ctx.settings.base_image, ctx.moves.publish,
                         store=ctx.store, run_id=run_id, image_map=image_map)
    try:
        infra = await images.infra()
    except StageFault as exc:
        raise ImageBuildError(str(exc)) from exc
    context = task.dir / "environment"
    args = stage_buildargs(context, infra_tag=infra.tag if infra else None,
                           behavioural_tag=None)
    info = await build_image(
        ctx.engine, context, tag, base_image=ctx.settings.base_image,
        on_log=on_log, buildargs=args, image_map=image_map,
    )
    await ctx.store.infra.record_image(run_id, "env", tag=tag, image_id=info.id,
                                        digest=info.digest)
    await stamp_provenance(ctx.store, run_id, "preparing", task_dir=task.dir)
    return prepared.tree, tag
