"""Stage images for one ladder: built once each, in the published dependency order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from srb_tui.runner import DockerEngine, ImageBuildError, ImageInfo, RunnerError, build_image
from srb_tui.schema import StageSpec, Task
from srb_tui.service.events import Progress
from srb_tui.service.grading.image_plan import (
    INFRA_TAG,
    infra_context,
    needs_behavioural,
    stage_buildargs,
)
from srb_tui.store import Store
from srb_tui.store.run_extra import IMAGE_BUILDS

from .base import Publish, StageFault, image_tag, note_run_extra, stage_context


class StageImages:
    """Builds each stage image once per ladder (skipped when unchanged) and records it.

    Builds follow the published dependency order: a checkout's infra image first (passed
    as ``INFRA_IMAGE`` to the Dockerfiles that declare it), the behavioural image before a
    verification image that takes ``BEHAVIOURAL_IMAGE``. ``image_map`` (reference -> local
    image) is applied to FROM lines at build time and kept with the run."""

    def __init__(
        self,
        engine: DockerEngine,
        task: Task,
        base_image: str,
        publish: Publish,
        *,
        store: Store | None = None,
        run_id: str = "",
        image_map: Mapping[str, str] | None = None,
        force: bool = False,
        on_log: Callable[[str, str], Awaitable[None]] | None = None,
    ) -> None:
        self.engine = engine
        self.task = task
        self.force = force
        self.on_log = on_log
        self.base_image = base_image
        self.publish = publish
        self.store = store
        self.run_id = run_id
        self.image_map = dict(image_map or {})
        self._builds: dict[str, asyncio.Task[ImageInfo]] = {}
        self._infra: asyncio.Task[ImageInfo | None] | None = None

    def _spec(self, stage: str) -> StageSpec:
        evaluation = self.task.evaluation
        spec = None if evaluation is None else getattr(evaluation, stage, None)
        if not isinstance(spec, StageSpec):
            raise StageFault(f"task {self.task.id} has no [stages.{stage}]")
        return spec

    async def _build_one(
        self, role: str, context: Path, tag: str, args: Mapping[str, str]
    ) -> ImageInfo:
        self.publish(Progress(self.run_id, f"{role}: building image {tag} from {context}"))
        sink = self.on_log

        async def on_log(line: str) -> None:
            if sink is not None:
                await sink(role, line)

        try:
            info = await build_image(self.engine, context, tag, base_image=self.base_image,
                                     buildargs=args, image_map=self.image_map,
                                     force=self.force, on_log=on_log if sink else None)
        except ImageBuildError as err:
            tail = "; ".join(line.strip() for line in err.log_tail[-3:] if line.strip())
            raise StageFault(
                f"{role} image could not be built: {err}" + (f" (log: {tail})" if tail else "")
            ) from err
        except RunnerError as err:
            raise StageFault(f"{role} image could not be built: {err}") from err
        state = "built" if info.built else "unchanged, not rebuilt"
        self.publish(Progress(self.run_id, f"{role}: image {tag} {state} ({info.id[:19]})"))
        return info

    async def infra(self) -> ImageInfo | None:
        """The checkout's infra image (built once), or None when the task root has none."""
        if self._infra is None:
            self._infra = asyncio.ensure_future(self._build_infra())
        return await self._infra

    async def _build_infra(self) -> ImageInfo | None:
        context = infra_context(self.task)
        if context is None:
            return None
        info = await self._build_one("infra", context, INFRA_TAG, {})
        await self._record("infra", info)
        return info

    async def _build(self, stage: str) -> ImageInfo:
        spec = self._spec(stage)
        context = stage_context(self.task, spec)
        infra = await self.infra()
        behavioural: str | None = None
        if stage == "verification" and needs_behavioural(context):
            self.prefetch(["behavioural"])
            behavioural = (await self._builds["behavioural"]).tag
        args = stage_buildargs(context, infra_tag=infra.tag if infra else None,
                               behavioural_tag=behavioural)
        return await self._build_one(stage, context, image_tag(self.task, stage), args)

    def prefetch(self, stages: Sequence[str]) -> None:
        """Start building these stages' images in the background."""
        for stage in stages:
            if stage not in self._builds:
                self._builds[stage] = asyncio.ensure_future(self._build(stage))

    async def get(self, stage: str) -> ImageInfo:
        """The stage's image (built now if it was not prefetched), recorded with the run."""
        self.prefetch([stage])
        info = await self._builds[stage]
        await self._record(stage, info)
        return info

    async def _record(self, role: str, info: ImageInfo) -> None:
        if self.store is None or not self.run_id:
            return
        await self.store.infra.record_image(
            self.run_id, role, tag=info.tag, image_id=info.id, digest=info.digest
        )
        if info.substitutions or info.buildargs:
            from srb_tui.store.run_extra_more import ImageBuild  # not a launch's record

            build = ImageBuild(info.tag, dict(info.buildargs), tuple(info.substitutions))
            await note_run_extra(self.store, self.run_id, IMAGE_BUILDS, role, build.to_json())

    async def settle(self) -> None:
        """Wait for every started build (a build the ladder no longer needs included)."""
        for build in self._builds.values():
            with contextlib.suppress(Exception):
                await build
