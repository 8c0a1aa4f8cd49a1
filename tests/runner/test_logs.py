"""Logs: stdout and stderr kept apart, batched, and resumable with no gap or duplicate."""

from __future__ import annotations

import asyncio

import pytest

from srb_tui.runner import (
    ContainerLogLine,
    DockerEngine,
    LogFollower,
    cursors_after,
    start,
    wait_with_budget,
)
from tests.runner.conftest import MakeContainer

pytestmark = pytest.mark.docker


async def test_streams_kept_apart_with_counts(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    script = (
        "for i in $(seq 1 3000); do echo out$i; done; "
        "for i in $(seq 1 1700); do echo err$i >&2; done; echo last"
    )
    handle, _ = await make_container(command=("bash", "-c", script))
    batches: list[list[ContainerLogLine]] = []

    async def sink(batch: list[ContainerLogLine]) -> None:
        batches.append(batch)

    follower = LogFollower(engine, handle, sink, batch_lines=500)
    task = asyncio.create_task(follower.run())
    # Let the follower reach the engine before the container starts: it must keep
    # following instead of ending on a container that has not run yet.
    deadline = asyncio.get_running_loop().time() + 10
    while follower.opened < 2 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert follower.opened >= 2
    await start(engine, handle)
    info = await wait_with_budget(engine, handle, 60)
    assert info.reason == "exited"
    delivered = await asyncio.wait_for(task, 30)
    lines = [line for batch in batches for line in batch]
    assert delivered == len(lines) == 4701
    assert all(0 < len(b) <= 500 for b in batches)
    out = [line.text for line in lines if line.stream == "stdout"]
    err = [line.text for line in lines if line.stream == "stderr"]
    assert out == [f"out{i}" for i in range(1, 3001)] + ["last"]
    assert err == [f"err{i}" for i in range(1, 1701)]
    stamps = [line.ts for line in lines if line.stream == "stdout"]
    assert stamps == sorted(stamps) and all(len(ts) == 30 for ts in stamps)


async def test_resume_has_no_gap_and_no_duplicate(
    engine: DockerEngine, make_container: MakeContainer
) -> None:
    total = 500
    script = f"for i in $(seq 1 {total}); do echo $i; echo e$i >&2; sleep 0.003; done"
    handle, _ = await make_container(command=("bash", "-c", script))
    stored: list[ContainerLogLine] = []
    enough = asyncio.Event()

    async def first_sink(batch: list[ContainerLogLine]) -> None:
        stored.extend(batch)
        if len(stored) >= 300:
            enough.set()

    first = LogFollower(engine, handle, first_sink, batch_lines=50, flush_sec=0.02)
    await start(engine, handle)
    task = asyncio.create_task(first.run())
    await asyncio.wait_for(enough.wait(), 30)
    first.close()  # the console went away mid-run
    await asyncio.wait_for(task, 10)
    cut = len(stored)
    assert cut < 2 * total  # the container was still printing when we let go

    async def second_sink(batch: list[ContainerLogLine]) -> None:
        stored.extend(batch)

    second = LogFollower(engine, handle, second_sink, resume=cursors_after(stored))
    await asyncio.wait_for(second.run(), 60)
    out = [int(line.text) for line in stored if line.stream == "stdout"]
    err = [int(line.text[1:]) for line in stored if line.stream == "stderr"]
    assert out == list(range(1, total + 1))
    assert err == list(range(1, total + 1))
    assert len(stored) > cut
