"""Whether the Docker engine answers, for the screens: a one-shot probe and a watcher.

:func:`engine_state` asks the engine for its version under a short timeout and never
raises: the result says ``up`` (with the version) or ``down`` (with the reason). An
:class:`EngineWatch` probes every few seconds and publishes :class:`EngineStateChanged`
on the event bus when the state flips, so the console can show "engine down since
14:02" while dockerd is restarted, and "engine back" when runs can be resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from srb_tui.runner import DockerEngine
from srb_tui.service.events import Event, EventBus
from srb_tui.store import utc_now

DEFAULT_TIMEOUT_SEC = 5.0


@dataclass(frozen=True)
class EngineState:
    """Whether the Docker engine answered the last probe, and when."""

    status: str  # "up" | "down"
    version: str = ""
    detail: str = ""
    checked_at: str = ""


@dataclass(frozen=True)
class EngineStateChanged(Event):
    """The engine went down or came back (``run_id`` is empty: it concerns every run)."""

    state: EngineState


async def engine_state(engine: DockerEngine, *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
                       ) -> EngineState:
    """Probe the engine once; ``down`` (never an exception) when it does not answer."""
    now = utc_now()
    try:
        info = await asyncio.wait_for(engine.ping(), timeout_sec)
    except TimeoutError:
        return EngineState("down", detail=f"no answer within {timeout_sec:g} s",
                           checked_at=now)
    if not info.ok:
        return EngineState("down", detail=info.error, checked_at=now)
    return EngineState("up", version=info.version, checked_at=now)


class EngineWatch:
    """Probes the engine every ``interval_sec`` and announces each change of state."""

    def __init__(self, engine: DockerEngine, bus: EventBus, *, interval_sec: float = 5.0
                 ) -> None:
        self.engine, self.bus, self.interval_sec = engine, bus, interval_sec
        self.state: EngineState | None = None
        self._task: asyncio.Task[None] | None = None

    async def check(self) -> EngineState:
        state = await engine_state(self.engine)
        if self.state is None or state.status != self.state.status:
            self.bus.publish(EngineStateChanged("", state))
        self.state = state
        return state

    async def _loop(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.interval_sec)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(),
                                                                name="srb-engine-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


__all__ = ["EngineState", "EngineStateChanged", "EngineWatch", "engine_state"]
