"""Fixtures for runner tests: a real engine, containers that are always removed, and a
final check that no container of these tests is left behind."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from srb_tui.runner import ContainerHandle, ContainerSpec, DockerEngine, RunnerPool, create, remove

BASE_IMAGE = "srb/base:bookworm"
RUN_PREFIX = "rt-"

MakeContainer = Callable[..., Awaitable[tuple[ContainerHandle, ContainerSpec]]]


def leftover_test_containers() -> list[str]:
    out = subprocess.run(
        [
            "docker",
            "ps",
            "-a",
            "--filter",
            "label=srb.managed=1",
            "--format",
            '{{.Names}} {{.Label "srb.run"}}',
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [line for line in out.splitlines() if line.split(" ")[-1].startswith(RUN_PREFIX)]


@pytest.fixture(scope="session", autouse=True)
def no_leftover_containers() -> Iterator[None]:
    yield
    left = leftover_test_containers()
    assert left == [], f"runner tests left srb-managed containers behind: {left}"


def new_run_id() -> str:
    return f"{RUN_PREFIX}{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def engine() -> AsyncIterator[DockerEngine]:
    eng = DockerEngine(RunnerPool(2))
    yield eng
    eng.close()


@pytest.fixture
async def make_container(engine: DockerEngine) -> AsyncIterator[MakeContainer]:
    """``await make_container(command=(...), **spec_fields)`` → (handle, spec); removed after."""
    made: list[ContainerHandle] = []

    async def factory(**fields: Any) -> tuple[ContainerHandle, ContainerSpec]:
        fields.setdefault("image", BASE_IMAGE)
        fields.setdefault("run_id", new_run_id())
        fields.setdefault("role", "agent")
        spec = ContainerSpec(**fields)
        handle = await create(engine, spec)
        made.append(handle)
        return handle, spec

    yield factory
    for handle in made:
        await remove(engine, handle)
