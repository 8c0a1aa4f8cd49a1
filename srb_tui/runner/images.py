"""Build, find and prune srb's images through the SDK.

A build passes the base image as the ``BASE_IMAGE`` build argument, streams its log
to an async callback, and labels the image with ``srb.context=<sha>`` (see
:mod:`srb_tui.runner.contexthash`). A build whose tag already carries the same hash
is skipped. The image id (and any registry digest) is returned for the run record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.errors import APIError, ImageNotFound  # type: ignore[import-untyped]

from srb_tui.runner.contexthash import context_hash
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import ImageBuildError
from srb_tui.runner.spec import LABEL_CONTEXT, LABEL_MANAGED

BuildLogSink = Callable[[str], Awaitable[None]]
LOG_TAIL = 30


@dataclass(frozen=True)
class ImageInfo:
    """An image srb built (or found unchanged): what a run records."""

    tag: str
    id: str
    context_sha: str
    repo_digests: tuple[str, ...] = ()
    built: bool = False

    @property
    def digest(self) -> str:
        """A registry digest when the image has one, else the local content id."""
        return self.repo_digests[0] if self.repo_digests else self.id


def _inspect(api: Any, ref: str) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = api.inspect_image(ref)
    except ImageNotFound:
        return None
    return data


def _info(data: dict[str, Any], tag: str, built: bool) -> ImageInfo:
    labels = (data.get("Config") or {}).get("Labels") or {}
    return ImageInfo(
        tag=tag,
        id=str(data["Id"]),
        context_sha=str(labels.get(LABEL_CONTEXT, "")),
        repo_digests=tuple(data.get("RepoDigests") or ()),
        built=built,
    )


async def _deliver(on_log: BuildLogSink, line: str) -> None:
    await on_log(line)


def _run_build(
    api: Any,
    loop: asyncio.AbstractEventLoop,
    on_log: BuildLogSink | None,
    kwargs: dict[str, Any],
) -> list[str]:
    tail: list[str] = []
    errors: list[str] = []
    for chunk in api.build(**kwargs):
        text = str(chunk.get("stream") or chunk.get("status") or "")
        if "error" in chunk:
            errors.append(str(chunk["error"]).strip())
            text = str(chunk["error"])
        for line in text.splitlines():
            tail = [*tail[-(LOG_TAIL - 1) :], line]
            if on_log is not None:
                asyncio.run_coroutine_threadsafe(_deliver(on_log, line), loop).result()
    if errors:
        raise ImageBuildError(f"building {kwargs['tag']} failed: {'; '.join(errors)}", tail)
    return tail


async def build_image(
    engine: DockerEngine,
    context: Path,
    tag: str,
    *,
    base_image: str,
    dockerfile: str | None = None,
    buildargs: Mapping[str, str] | None = None,
    on_log: BuildLogSink | None = None,
    force: bool = False,
) -> ImageInfo:
    """Build ``context`` as ``tag`` unless an image of that tag has the same context hash."""
    if not context.is_dir():
        raise ImageBuildError(f"build context {context} is not a directory")
    if not (context / (dockerfile or "Dockerfile")).is_file():
        raise ImageBuildError(f"build context {context} has no {dockerfile or 'Dockerfile'}")
    api = await engine.api()
    args = {"BASE_IMAGE": base_image, **(buildargs or {})}
    base = await engine.call(_inspect, api, base_image)
    base_id = str(base["Id"]) if base else ""
    sha = await engine.call(context_hash, context, buildargs=args, base_id=base_id)
    if not force:
        existing = await engine.call(_inspect, api, tag)
        if existing is not None and _info(existing, tag, False).context_sha == sha:
            return _info(existing, tag, built=False)
    kwargs: dict[str, Any] = {
        "path": str(context),
        "tag": tag,
        "dockerfile": dockerfile,
        "buildargs": args,
        "labels": {LABEL_MANAGED: "1", LABEL_CONTEXT: sha},
        "decode": True,
        "rm": True,
        "forcerm": True,
        "timeout": None,
    }
    loop = asyncio.get_running_loop()
    try:
        await engine.call(_run_build, api, loop, on_log, kwargs)
    except APIError as err:
        raise ImageBuildError(f"building {tag} from {context} failed: {err}") from err
    data = await engine.call(_inspect, api, tag)
    if data is None:
        raise ImageBuildError(f"building {tag} from {context} produced no image")
    return _info(data, tag, built=True)


def _list(api: Any) -> list[ImageInfo]:
    out = []
    for row in api.images(filters={"label": f"{LABEL_MANAGED}=1"}):
        tags = row.get("RepoTags") or ["<none>"]
        labels = row.get("Labels") or {}
        out.append(
            ImageInfo(
                tag=str(tags[0]),
                id=str(row["Id"]),
                context_sha=str(labels.get(LABEL_CONTEXT, "")),
                repo_digests=tuple(row.get("RepoDigests") or ()),
            )
        )
    return out


async def list_images(engine: DockerEngine) -> list[ImageInfo]:
    """Images srb built (label ``srb.managed=1``)."""
    api = await engine.api()
    return await engine.call(_list, api)


async def prune_images(engine: DockerEngine) -> int:
    """Remove dangling srb images (left behind by rebuilds); bytes reclaimed."""
    api = await engine.api()
    res = await engine.call(
        api.prune_images, filters={"dangling": True, "label": f"{LABEL_MANAGED}=1"}
    )
    return int((res or {}).get("SpaceReclaimed") or 0)
