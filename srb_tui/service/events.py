"""Typed events the run service publishes; the console and the headless CLI subscribe.

Every event is written to the store (where it matters) before it is published, so a
subscriber that misses events can always rebuild its view from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """Something that happened to a run (every event names its run)."""

    run_id: str


@dataclass(frozen=True)
class RunCreated(Event):
    """A run was created (pending) for a task and an agent."""

    task_id: str
    agent: str


@dataclass(frozen=True)
class StatusChanged(Event):
    """A run moved to another lifecycle status (after the store recorded it)."""

    status: str
    reason: str | None = None


@dataclass(frozen=True)
class LogLines(Event):
    """New lines of a container's log (stored up to ``last_seq``)."""

    role: str
    lines: tuple[tuple[str, str, str], ...]  # (ts, stream, text)
    last_seq: int = 0


@dataclass(frozen=True)
class Progress(Event):
    """A human-readable step inside a phase (building an image, collecting, …)."""

    message: str


@dataclass(frozen=True)
class StageFinished(Event):
    """A grading stage ended, with its status and summary."""

    stage: str
    status: str
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunFinished(Event):
    """A run reached a final status, with its score and validity."""

    status: str
    score: float | None
    valid: bool | None
    detail: str | None = None


#: Events a slow subscriber may lose (the store keeps them; a view rebuilds from it).
#: Every other kind — created, status, stage, finish — is always delivered.
DROPPABLE: tuple[type[Event], ...] = (LogLines, Progress)


class Subscription:
    """One subscriber's bounded queue with the bus's drop policy.

    When it is full, the oldest droppable event (a log batch, then a progress line) makes
    room; the incoming event is dropped only when it is itself droppable and nothing older
    is. An undroppable event is queued even past ``maxsize``: run lifecycles are short
    enough that status events cannot grow without bound. ``dropped`` counts losses.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"subscription maxsize must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self.dropped = 0
        self._items: deque[Event] = deque()
        self._droppable = 0
        self._ready = asyncio.Event()

    def offer(self, event: Event) -> None:
        droppable = isinstance(event, DROPPABLE)
        if len(self._items) >= self.maxsize:
            if self._droppable:
                self._evict_oldest_droppable()
            elif droppable:
                self.dropped += 1
                return
        self._items.append(event)
        self._droppable += droppable
        self._ready.set()

    def _evict_oldest_droppable(self) -> None:
        for kind in DROPPABLE:
            for index, item in enumerate(self._items):
                if isinstance(item, kind):
                    del self._items[index]
                    self._droppable -= 1
                    self.dropped += 1
                    return

    def get_nowait(self) -> Event:
        if not self._items:
            raise asyncio.QueueEmpty
        event = self._items.popleft()
        self._droppable -= isinstance(event, DROPPABLE)
        if not self._items:
            self._ready.clear()
        return event

    async def get(self) -> Event:
        while not self._items:
            await self._ready.wait()
        return self.get_nowait()

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)


class EventBus:
    """Fan-out of events to any number of subscribers, each with a bounded queue.

    A slow subscriber loses the oldest log events first rather than blocking the
    service; status, stage and finish events are never dropped (see :class:`Subscription`).
    """

    def __init__(self, maxsize: int = 10_000) -> None:
        self._subscriptions: list[Subscription] = []
        self._maxsize = maxsize

    def publish(self, event: Event) -> None:
        for subscription in list(self._subscriptions):
            subscription.offer(event)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[Subscription]:
        subscription = Subscription(self._maxsize)
        self._subscriptions.append(subscription)
        try:
            yield subscription
        finally:
            self._subscriptions.remove(subscription)
