"""Build, find and prune srb's images through the SDK.

A build passes only the build arguments its Dockerfile declares (srb's base image as
``BASE_IMAGE``, and whatever the caller adds: ``INFRA_IMAGE``, ``BEHAVIOURAL_IMAGE``),
streams its log to an async callback, and labels the image with ``srb.context=<sha>``
(see :mod:`srb_tui.runner.contexthash`). An operator's image map (reference -> local image)
is applied to the file's FROM / ``COPY --from`` references in a rewritten copy of the
Dockerfile. A build whose tag already carries the same hash is skipped. The image id (and
any registry digest) is returned for the run record; a build that fails while a reference
it needs is absent from the engine names that reference and how to provide it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.contexthash import context_hash
from srb_tui.runner.dockerfile import read_dockerfile, rewrite_refs
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
    env: tuple[str, ...] = ()
    """The image's own ``ENV`` (``NAME=value`` items), as docker inspect reports it."""
    substitutions: tuple[tuple[str, str], ...] = ()
    """Image-map substitutions applied to this build: (reference, local image)."""
    buildargs: tuple[tuple[str, str], ...] = ()
    """The build arguments passed (only names the Dockerfile declares)."""

    @property
    def digest(self) -> str:
        """A registry digest when the image has one, else the local content id."""
        return self.repo_digests[0] if self.repo_digests else self.id


def _inspect(engine: DockerEngine, api: Any, ref: str) -> dict[str, Any] | None:
    if engine.wire is not None:
        return engine.wire.inspect_image(ref)
    try:
        data: dict[str, Any] = api.inspect_image(ref)
    except sdk.ImageNotFound:
        return None
    return data


async def inspect_image(engine: DockerEngine, ref: str) -> dict[str, Any] | None:
    """The engine's inspect of image ``ref`` (tag or id), or None when it has none; over
    the wire when the engine has one (docker-py is not loaded for it)."""
    api = None if engine.wire is not None else await engine.api()
    return await engine.call(_inspect, engine, api, ref)


def _info(data: dict[str, Any], tag: str, built: bool) -> ImageInfo:
    config = data.get("Config") or {}
    labels = config.get("Labels") or {}
    return ImageInfo(
        tag=tag,
        id=str(data["Id"]),
        context_sha=str(labels.get(LABEL_CONTEXT, "")),
        repo_digests=tuple(data.get("RepoDigests") or ()),
        built=built,
        env=tuple(str(item) for item in config.get("Env") or ()),
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


def missing_hint(refs: list[str], base_image: str | None = None) -> str:
    """How to provide image references a build needs and the engine does not have (srb's
    own base image is made with ``srb images bootstrap``, never pulled)."""
    if base_image is not None and base_image in refs:
        rest = [ref for ref in refs if ref != base_image]
        return (f"the engine has no base image {base_image}: run `srb images bootstrap` "
                "(debootstrap, then docker import; no registry needed)"
                + (f"; and {missing_hint(rest)}" if rest else ""))
    names = ", ".join(refs)
    return (
        f"the engine has no image {names} and no registry answered; provide each one with "
        "`docker pull REF` on a machine with a registry (then `docker save` / `docker load`), "
        "or build a local stand-in and map it in state/config.toml: "
        + "; ".join(f'[images] "{ref}" = "LOCAL/IMAGE:TAG"' for ref in refs)
    )


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
    image_map: Mapping[str, str] | None = None,
) -> ImageInfo:
    """Build ``context`` as ``tag`` unless an image of that tag has the same context hash.

    Only the build arguments the Dockerfile declares are passed (``BASE_IMAGE`` is always
    offered); ``image_map`` substitutes local images for the references it names."""
    if not context.is_dir():
        raise ImageBuildError(f"build context {context} is not a directory")
    source = context / (dockerfile or "Dockerfile")
    if not source.is_file():
        raise ImageBuildError(f"build context {context} has no {dockerfile or 'Dockerfile'}")
    text = source.read_text(encoding="utf-8", errors="replace")
    offered = {"BASE_IMAGE": base_image, **(buildargs or {})}
    facts = read_dockerfile(text, offered)
    args = {name: value for name, value in offered.items() if name in facts.args}
    facts = read_dockerfile(text, args)
    rewritten, done = rewrite_refs(text, dict(image_map or {}), args)
    refs = [dict(done).get(ref, ref) for ref in facts.refs]
    found = [await inspect_image(engine, ref) for ref in refs]
    missing = [ref for ref, data in zip(refs, found, strict=True) if data is None]
    base_id = ",".join(str(data["Id"]) if data else f"?{ref}"
                       for ref, data in zip(refs, found, strict=True))
    hashed = dict(args)
    if done:
        hashed["srb.dockerfile"] = hashlib.sha256(rewritten.encode()).hexdigest()
    sha = await engine.call(context_hash, context, buildargs=hashed, base_id=base_id)
    if not force:
        existing = await inspect_image(engine, tag)
        if existing is not None and _info(existing, tag, False).context_sha == sha:
            return _stamped(_info(existing, tag, built=False), done, args)
    temp: str | None = None
    if done:
        fd, temp = tempfile.mkstemp(prefix="srb-dockerfile-", suffix=".mapped")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(rewritten)
    kwargs: dict[str, Any] = {
        "path": str(context),
        "tag": tag,
        "dockerfile": temp or dockerfile,
        "buildargs": args,
        "labels": {LABEL_MANAGED: "1", LABEL_CONTEXT: sha},
        "decode": True,
        "rm": True,
        "forcerm": True,
        "timeout": None,
    }
    loop = asyncio.get_running_loop()
    api = await engine.api()
    try:
        await engine.call(_run_build, api, loop, on_log, kwargs)
    except ImageBuildError as err:
        if missing:
            raise ImageBuildError(f"{err}; {missing_hint(missing, base_image)}",
                                  err.log_tail) from err
        raise
    except sdk.APIError as err:
        hint = f"; {missing_hint(missing, base_image)}" if missing else ""
        raise ImageBuildError(f"building {tag} from {context} failed: {err}{hint}") from err
    finally:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
    data = await inspect_image(engine, tag)
    if data is None:
        raise ImageBuildError(f"building {tag} from {context} produced no image")
    return _stamped(_info(data, tag, built=True), done, args)


def _stamped(
    info: ImageInfo, done: list[tuple[str, str]], args: Mapping[str, str]
) -> ImageInfo:
    return dataclasses.replace(
        info, substitutions=tuple(done), buildargs=tuple(sorted(args.items()))
    )


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
