"""A node that cannot pull or be copied an image says which engine failed and why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from srb_tui.runner import DockerEngine, ImageBuildError, image_copy


class _Engine:
    """An engine whose calls answer from ``steps`` by function (absent: raise OSError)."""

    def __init__(self, name: str, steps: dict[Callable[..., Any], object]) -> None:
        self.name, self.base_url, self.steps = name, f"tcp://{name}:2375", steps

    async def client(self) -> None:
        return None

    async def call(self, fn: Callable[..., Any], *args: Any) -> object:
        if fn not in self.steps:
            raise OSError(f"{self.name} refused {fn.__name__}")
        return self.steps[fn]


async def test_a_failed_pull_names_the_node_and_the_registry() -> None:
    dest = cast(DockerEngine, _Engine("n1", {image_copy._present: False}))
    with pytest.raises(ImageBuildError) as got:
        await image_copy.ensure_image(dest, dest, "srb/x:1", registry="reg:5000")
    assert str(got.value) == ("node n1 (tcp://n1:2375) cannot pull srb/x:1 from the registry "
                              "reg:5000: n1 refused _pull")


async def test_a_failed_copy_names_both_engines_and_a_good_one_brings_the_image() -> None:
    dest = cast(DockerEngine, _Engine("n1", {image_copy._present: False}))
    source = cast(DockerEngine, _Engine("srb", {image_copy._present: True}))
    with pytest.raises(ImageBuildError) as got:
        await image_copy.ensure_image(dest, source, "srb/x:1")
    assert str(got.value) == ("cannot copy srb/x:1 from srb's engine (tcp://srb:2375) to node "
                              "n1 (tcp://n1:2375): srb refused _copy")
    source = cast(DockerEngine, _Engine("srb", {image_copy._present: True,
                                                image_copy._copy: None}))
    assert await image_copy.ensure_image(dest, source, "srb/x:1") is True
