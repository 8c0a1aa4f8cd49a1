"""The engine state the screens show: ``up`` with the version on the real engine, ``down``
with the reason where no daemon listens, and the watcher announces each change once.
(Stopping the real engine itself is in test_engine_restart.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.service.engine_state import EngineStateChanged, EngineWatch, engine_state
from srb_tui.service.events import EventBus

pytestmark = pytest.mark.docker


async def test_up_down_and_the_change_announced(tmp_path: Path) -> None:
    real = DockerEngine(RunnerPool(1))
    dead = DockerEngine(RunnerPool(1), base_url=f"unix://{tmp_path / 'no-daemon.sock'}")
    bus = EventBus()
    try:
        up = await engine_state(real)
        assert up.status == "up" and up.version
        down = await engine_state(dead)
        assert down.status == "down" and "no-daemon.sock" in down.detail
        async with bus.subscribe() as queue:
            watch = EngineWatch(dead, bus)
            await watch.check()
            await watch.check()  # no change: nothing more announced
            watch.engine = real  # the engine "comes back"
            await watch.check()
            seen = [queue.get_nowait() for _ in range(queue.qsize())]
        states = [e.state.status for e in seen if isinstance(e, EngineStateChanged)]
        assert states == ["down", "up"]
    finally:
        real.close()
        dead.close()
