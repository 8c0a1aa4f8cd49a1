"""Typed events the run service publishes; the console and the headless CLI subscribe.

Every event is written to the store (where it matters) before it is published, so a
subscriber that misses events can always rebuild its view from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    run_id: str


@dataclass(frozen=True)
class RunCreated(Event):
    task_id: str
    agent: str


@dataclass(frozen=True)
class StatusChanged(Event):
    status: str
    reason: str | None = None


@dataclass(frozen=True)
class LogLines(Event):
    role: str
    lines: tuple[tuple[str, str, str], ...]  # (ts, stream, text)
    last_seq: int = 0


@dataclass(frozen=True)
class Progress(Event):
    """A human-readable step inside a phase (building an image, collecting, …)."""

    message: str


@dataclass(frozen=True)
class StageFinished(Event):
    stage: str
    status: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunFinished(Event):
    status: str
    score: float | None
    valid: bool | None
    detail: str | None = None


class EventBus:
    """Fan-out of events to any number of subscribers, each with a bounded queue.

    A slow subscriber loses the oldest log events first rather than blocking the
    service; status, stage and finish events are never dropped.
    """

    def __init__(self, maxsize: int = 10_000) -> None:
        self._queues: list[asyncio.Queue[Event]] = []
        self._maxsize = maxsize

    def publish(self, event: Event) -> None:
        for queue in list(self._queues):
            if queue.full() and isinstance(event, LogLines):
                continue
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[Event]]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._maxsize)
        self._queues.append(queue)
        try:
            yield queue
        finally:
            self._queues.remove(queue)
