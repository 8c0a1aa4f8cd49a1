"""Copy an image from one engine to another (``docker save | docker load`` over the API).

A node of a pool needs srb's base image before it can build a task's images on top of it.
Without a registry, the image is streamed from srb's own engine (where ``srb images
bootstrap`` made it) to the node; with a registry the node pulls it instead.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import EngineUnavailable, ImageBuildError

CHUNK = 1 << 20


def _present(engine: DockerEngine, ref: str) -> bool:
    api = (engine._client or engine._make_client()).api
    try:
        api.inspect_image(ref)
    except sdk.ImageNotFound:
        return False
    return True


def _copy(source: DockerEngine, dest: DockerEngine, ref: str) -> None:
    src: Any = (source._client or source._make_client()).api
    dst: Any = (dest._client or dest._make_client()).api
    stream = src.get_image(ref, chunk_size=CHUNK)
    dst.load_image(stream, quiet=True)


def _pull(dest: DockerEngine, registry: str, ref: str) -> None:
    api: Any = (dest._client or dest._make_client()).api
    remote = f"{registry}/{ref}"
    api.pull(remote)
    repo, _, tag = ref.rpartition(":")
    api.tag(remote, repo, tag)


async def ensure_image(dest: DockerEngine, source: DockerEngine, ref: str, *,
                       registry: str | None = None) -> bool:
    """Make ``ref`` present on ``dest`` (pulled from ``registry``, else copied from
    ``source``); True when it had to be brought. ImageBuildError says why it could not,
    naming the engine at fault: ``source`` is srb's own engine, not the node."""
    await dest.client()
    if await dest.call(_present, dest, ref):
        return False
    if registry:
        await _or_refuse(dest.call(_pull, dest, registry, ref),
                         f"node {dest.name} ({dest.base_url}) cannot pull {ref} "
                         f"from the registry {registry}")
        return True
    try:
        await source.client()
        present = await source.call(_present, source, ref)
    except (OSError, EngineUnavailable, sdk.DockerException) as exc:
        raise ImageBuildError(f"srb's engine ({source.base_url}), the source of {ref} for "
                              f"node {dest.name}, does not answer: {exc}") from exc
    if not present:
        raise ImageBuildError(f"srb's engine ({source.base_url}) has no {ref} to copy to node "
                              f"{dest.name}: run `srb images bootstrap` here first")
    await _or_refuse(source.call(_copy, source, dest, ref),
                     f"cannot copy {ref} from srb's engine ({source.base_url}) to "
                     f"node {dest.name} ({dest.base_url})")
    return True


async def _or_refuse(step: Awaitable[object], failure: str) -> None:
    """Await one engine call of the copy; its failure as ImageBuildError(``failure``)."""
    try:
        await step
    except (OSError, sdk.DockerException) as exc:
        raise ImageBuildError(f"{failure}: {exc}") from exc


__all__ = ["ensure_image"]
