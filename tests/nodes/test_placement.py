"""Placement over a pool's nodes by their capacity (no engine is asked: each node's health is
set as a probe would set it, fresh, so the backend does not probe)."""

from __future__ import annotations

import asyncio
import time

import pytest

from srb_tui.runner.backend_config import EngineSpec
from srb_tui.runner.backends import Backend, Need, Node, NodeHealth
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import EngineUnavailable


def _node(name: str, cpus: float, up: bool = True) -> Node:
    url = f"tcp://192.0.2.1:{2375}"
    node = Node(EngineSpec(name, url), DockerEngine(base_url=url, name=name))
    node.health = NodeHealth(name, url, up, cpus=cpus, memory_mb=4096,
                             error="" if up else "refused", checked_at=time.monotonic() + 3600)
    node.last_error = node.health.error
    return node


def test_runs_fill_the_pool_and_wait_for_room() -> None:
    async def body() -> None:
        pool = Backend("engines", [_node("a", 2), _node("b", 4), _node("c", 2, up=False)])
        two = Need(2, 1024)
        first = await pool.place("r1", two)
        second = await pool.place("r2", two)
        third = await pool.place("r3", two)
        assert first.name == "b" and {second.name, third.name} == {"a", "b"}
        waiting = asyncio.ensure_future(pool.place("r4", two, poll_sec=0.05))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # no room anywhere, the down node is never used
        await pool.release("r1")
        assert (await asyncio.wait_for(waiting, 5)).name == "b"
        assert pool.capacity() == (6.0, 8192)
    asyncio.run(body())


def test_a_task_larger_than_every_node_runs_alone_and_no_node_up_is_named() -> None:
    async def body() -> None:
        pool = Backend("engines", [_node("a", 2), _node("b", 1)])
        assert (await pool.place("big", Need(8, 1024))).name == "a"
        down = Backend("engines", [_node("a", 2, up=False)])
        with pytest.raises(EngineUnavailable, match=r"a .*refused"):
            await down.place("r", Need(1, 1))
    asyncio.run(body())
