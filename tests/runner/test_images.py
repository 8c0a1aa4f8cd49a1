"""Image builds through the SDK: BASE_IMAGE build arg, streamed log, skip when unchanged."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from srb_tui.runner import DockerEngine, ImageBuildError, build_image, list_images, prune_images
from tests.runner.conftest import BASE_IMAGE

pytestmark = pytest.mark.docker

DOCKERFILE = (
    "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY marker.txt /marker.txt\nRUN cat /marker.txt\n"
)


@pytest.fixture
def tag() -> Iterator[str]:
    name = f"srb-test/runner-{uuid.uuid4().hex[:8]}:latest"
    yield name
    subprocess.run(["docker", "rmi", "-f", name], capture_output=True, check=False)


async def test_build_skip_and_rebuild(engine: DockerEngine, tmp_path: Path, tag: str) -> None:
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(DOCKERFILE)
    # unique content, so no earlier run's build cache can hide the RUN output
    one, two = f"version one {tag}\n", f"version two {tag}\n"
    (ctx / "marker.txt").write_text(one)
    log: list[str] = []

    async def on_log(line: str) -> None:
        log.append(line)

    first = await build_image(engine, ctx, tag, base_image=BASE_IMAGE, on_log=on_log)
    assert first.built and first.id.startswith("sha256:")
    assert first.digest == first.id  # no registry: the content id is the digest
    assert any(one.strip() in line for line in log)  # RUN output came through the stream
    api = await engine.api()
    labels = (await engine.call(api.inspect_image, tag))["Config"]["Labels"]
    assert labels["srb.context"] == first.context_sha and labels["srb.managed"] == "1"

    log.clear()
    again = await build_image(engine, ctx, tag, base_image=BASE_IMAGE, on_log=on_log)
    assert not again.built and again.id == first.id and log == []

    (ctx / "marker.txt").write_text(two)
    changed = await build_image(engine, ctx, tag, base_image=BASE_IMAGE, on_log=on_log)
    assert changed.built and changed.id != first.id
    assert changed.context_sha != first.context_sha
    assert tag in {img.tag for img in await list_images(engine)}
    out = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", tag, "cat", "/marker.txt"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == two
    # the first build is now dangling; prune removes it and keeps the tagged one
    await prune_images(engine)
    left = {img.id for img in await list_images(engine)}
    assert first.id not in left and changed.id in left


async def test_build_errors_are_clear(engine: DockerEngine, tmp_path: Path, tag: str) -> None:
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    with pytest.raises(ImageBuildError, match="has no Dockerfile"):
        await build_image(engine, ctx, tag, base_image=BASE_IMAGE)
    (ctx / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo about to fail && exit 7\n"
    )
    with pytest.raises(ImageBuildError, match="returned a non-zero code: 7") as err:
        await build_image(engine, ctx, tag, base_image=BASE_IMAGE)
    assert any("about to fail" in line for line in err.value.log_tail)
    with pytest.raises(ImageBuildError, match="not a directory"):
        await build_image(engine, tmp_path / "missing", tag, base_image=BASE_IMAGE)


async def test_a_missing_base_image_names_srb_images_bootstrap(
    engine: DockerEngine, tmp_path: Path, tag: str
) -> None:
    """Issue 26: a launch whose base image is not on the engine says how srb makes it
    (``srb images bootstrap``), not only ``docker pull``."""
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(DOCKERFILE)
    (ctx / "marker.txt").write_text("x")
    absent = f"srb-test/no-such-base-{uuid.uuid4().hex[:8]}:bookworm"
    with pytest.raises(ImageBuildError) as err:
        await build_image(engine, ctx, tag, base_image=absent)
    assert f"the engine has no base image {absent}: run `srb images bootstrap`" in str(err.value)
