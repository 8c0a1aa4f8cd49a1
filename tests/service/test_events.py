"""The event bus's drop policy under a full queue: old log events go first, never the
status, stage or finish events a view needs to stay right."""

from __future__ import annotations

import asyncio

import pytest

from srb_tui.service.events import (
    Event,
    EventBus,
    LogLines,
    Progress,
    RunCreated,
    RunFinished,
    StageFinished,
    StatusChanged,
    Subscription,
)


def _log(seq: int) -> LogLines:
    return LogLines("r1", "agent", (("ts", "stdout", f"line {seq}"),), last_seq=seq)


def _drain(sub: Subscription) -> list[Event]:
    out: list[Event] = []
    while not sub.empty():
        out.append(sub.get_nowait())
    return out


async def test_full_queue_drops_the_oldest_log_batch_not_the_newest() -> None:
    bus = EventBus(maxsize=3)
    async with bus.subscribe() as sub:
        for seq in range(1, 6):
            bus.publish(_log(seq))
        assert sub.qsize() == 3
        assert sub.dropped == 2
        assert [e.last_seq for e in _drain(sub) if isinstance(e, LogLines)] == [3, 4, 5]


async def test_status_stage_and_finish_events_evict_logs_and_are_never_dropped() -> None:
    bus = EventBus(maxsize=3)
    async with bus.subscribe() as sub:
        bus.publish(StatusChanged("r1", "agent"))
        bus.publish(_log(1))
        bus.publish(_log(2))
        bus.publish(StageFinished("r1", "audit", "pass"))  # evicts log 1
        bus.publish(RunFinished("r1", "scored", 100.0, True))  # evicts log 2
        bus.publish(_log(3))  # nothing droppable left to evict: this batch is lost
        events = _drain(sub)
    assert [type(e).__name__ for e in events] == ["StatusChanged", "StageFinished",
                                                   "RunFinished"]
    assert sub.dropped == 3


async def test_undroppable_events_queue_past_the_bound() -> None:
    bus = EventBus(maxsize=2)
    async with bus.subscribe() as sub:
        bus.publish(RunCreated("r1", "t", "untouched"))
        for status in ("preparing", "agent", "collecting", "audit"):
            bus.publish(StatusChanged("r1", status))
        events = _drain(sub)
    assert [getattr(e, "status", "created") for e in events] == [
        "created", "preparing", "agent", "collecting", "audit"]
    assert sub.dropped == 0


async def test_logs_go_before_progress_lines() -> None:
    bus = EventBus(maxsize=3)
    async with bus.subscribe() as sub:
        bus.publish(Progress("r1", "building image"))
        bus.publish(_log(1))
        bus.publish(_log(2))
        bus.publish(StatusChanged("r1", "agent"))  # evicts log 1, keeps the older progress
        bus.publish(StatusChanged("r1", "collecting"))  # evicts log 2
        bus.publish(StatusChanged("r1", "audit"))  # only progress left: it goes
        events = _drain(sub)
    assert [type(e).__name__ for e in events] == ["StatusChanged"] * 3


async def test_get_waits_for_the_next_event_and_each_subscriber_has_its_own_queue() -> None:
    bus = EventBus(maxsize=2)
    async with bus.subscribe() as slow, bus.subscribe() as fast:
        waiter = asyncio.create_task(fast.get())
        assert not waiter.done()
        bus.publish(_log(1))
        got = await asyncio.wait_for(waiter, timeout=5)
        assert isinstance(got, LogLines) and got.last_seq == 1
        for seq in range(2, 5):
            bus.publish(_log(seq))
        assert slow.dropped == 2 and fast.dropped == 1
        assert [e.last_seq for e in _drain(slow) if isinstance(e, LogLines)] == [3, 4]
    bus.publish(_log(9))  # no subscribers left: nothing to deliver, nothing raised
    with pytest.raises(asyncio.QueueEmpty):
        slow.get_nowait()


def test_a_subscription_needs_room_for_one_event() -> None:
    with pytest.raises(ValueError, match="maxsize must be >= 1"):
        Subscription(0)
