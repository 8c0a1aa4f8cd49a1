"""Follow a container's stdout and stderr separately and deliver them in batches.

Two docker-py log streams (one per stream) are read on srb's pool; lines are handed
to an async ``sink`` in batches (by size, or every ``flush_sec``). A follower can
resume where a previous one stopped: pass the per-stream :class:`LogCursor` of the
last *stored* lines; the engine is asked for logs ``since`` the whole second before
it, and lines at or before the cursor are dropped, so there is no gap and no
duplicate. Following ends when the container stops or :meth:`LogFollower.close`.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import ContainerHandle
from srb_tui.runner.engine import DockerEngine, outcome_seen
from srb_tui.runner.spec import ContainerLogLine, Stream
from srb_tui.timestamps import normalize_ts, ts_epoch

Sink = Callable[[list[ContainerLogLine]], Awaitable[None]]
STREAMS: tuple[Stream, Stream] = ("stdout", "stderr")
REOPEN_WAIT_SEC = 0.05


@dataclass(frozen=True)
class LogCursor:
    """The last stored line of one stream: its timestamp, and how many stored lines
    carry exactly that timestamp (Docker can stamp two lines alike)."""

    ts: str
    seen_at_ts: int = 1


def cursors_after(lines: Iterable[ContainerLogLine]) -> dict[Stream, LogCursor]:
    """Per-stream cursors just past ``lines`` (lines of one stream in stored order)."""
    out: dict[Stream, LogCursor] = {}
    for line in lines:
        prev = out.get(line.stream)
        if prev is not None and prev.ts == line.ts:
            out[line.stream] = LogCursor(line.ts, prev.seen_at_ts + 1)
        else:
            out[line.stream] = LogCursor(line.ts, 1)
    return out


def parse_frame(frame: bytes, stream: Stream) -> ContainerLogLine:
    """``b"<rfc3339nano> text\\n"`` → ContainerLogLine (invalid UTF-8 is replaced, not fatal)."""
    raw = frame.decode("utf-8", "replace")
    stamp, _, text = raw.partition(" ")
    if text.endswith("\n"):
        text = text[:-1]
    return ContainerLogLine(normalize_ts(stamp), stream, text)


class LogFollower:
    """Follows one container; ``await run()`` returns the number of lines delivered."""

    def __init__(
        self,
        engine: DockerEngine,
        handle: ContainerHandle,
        sink: Sink,
        *,
        resume: Mapping[Stream, LogCursor] | None = None,
        batch_lines: int = 1000,
        flush_sec: float = 0.05,
        max_pending: int = 50_000,
    ) -> None:
        self.engine = engine
        self.handle = handle
        self.sink = sink
        self.resume = dict(resume or {})
        self.batch_lines = batch_lines
        self.flush_sec = flush_sec
        self.max_pending = max_pending
        self._pending: dict[Stream, deque[ContainerLogLine]] = {s: deque() for s in STREAMS}
        self._cond = threading.Condition()
        self._streams: list[Any] = []
        self._closed = False
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def opened(self) -> int:
        """How many log streams have been opened so far (re-opens included)."""
        with self._cond:
            return len(self._streams)

    # -- pool side -------------------------------------------------------------------

    def _open(self, api: Any, stream: Stream, cursor: LogCursor | None) -> Any:
        since = max(1, math.floor(ts_epoch(cursor.ts)) - 1) if cursor else None
        it = api.logs(
            self.handle.id,
            stdout=stream == "stdout",
            stderr=stream == "stderr",
            stream=True,
            follow=True,
            timestamps=True,
            since=since,
        )
        with self._cond:
            self._streams.append(it)
            if self._closed:
                it.close()
        return it

    def _push(self, queue: deque[ContainerLogLine], line: ContainerLogLine) -> bool:
        """Queue one line (waiting while the sink is behind); False once closed."""
        with self._cond:
            while len(queue) >= self.max_pending and not self._closed:
                self._cond.wait(0.5)
            if self._closed:
                return False
            queue.append(line)
            first = len(queue) == 1
        if first and self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)
        return True

    def _should_reopen(self, api: Any) -> bool:
        """After a stream ended: follow again if the container has not run yet or still
        runs (a follower opened before ``start``, or a dropped connection)."""
        try:
            status = api.inspect_container(self.handle.id)["State"]["Status"]
        except sdk.NotFound:
            return False
        if status in ("created", "paused"):
            with self._cond:
                if not self._closed:
                    self._cond.wait(REOPEN_WAIT_SEC)
            return not self._closed
        return status in ("running", "restarting") and not self._closed

    def _pump(self, api: Any, stream: Stream) -> None:
        cursor = self.resume.get(stream)
        queue = self._pending[stream]
        while not self._closed:
            try:
                it = self._open(api, stream, cursor)
            except sdk.NotFound:
                return
            skip = cursor.seen_at_ts if cursor else 0
            for frame in it:
                line = parse_frame(frame, stream)
                if cursor is not None and line.ts <= cursor.ts:
                    if line.ts < cursor.ts:
                        continue
                    if skip > 0:
                        skip -= 1
                        continue
                if not self._push(queue, line):
                    return
                if cursor is not None and cursor.ts == line.ts:
                    cursor = LogCursor(line.ts, cursor.seen_at_ts + 1)
                else:
                    cursor = LogCursor(line.ts, 1)
                skip = 0
            if not self._should_reopen(api):
                return

    # -- loop side -------------------------------------------------------------------

    def _pending_count(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._pending.values())

    def _take(self) -> list[ContainerLogLine]:
        with self._cond:
            taken = {s: list(q) for s, q in self._pending.items()}
            for q in self._pending.values():
                q.clear()
            self._cond.notify_all()
        return list(heapq.merge(*taken.values(), key=lambda line: line.ts))

    async def _deliver(self, lines: list[ContainerLogLine]) -> int:
        for i in range(0, len(lines), self.batch_lines):
            if self._closed:
                return i
            await self.sink(lines[i : i + self.batch_lines])
        return len(lines)

    async def run(self) -> int:
        """Deliver lines until both streams end (container stopped) or close()."""
        self._loop = asyncio.get_running_loop()
        api = await self.engine.api()
        pumps = [asyncio.ensure_future(self.engine.call(self._pump, api, s)) for s in STREAMS]
        delivered = 0
        try:
            while not self._closed:
                done = all(p.done() for p in pumps)
                if self._pending_count() == 0:
                    if done:
                        break
                    self._wake.clear()
                    waiters = [*pumps, asyncio.ensure_future(self._wake.wait())]
                    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                    waiters[-1].cancel()
                    continue
                if not done and self._pending_count() < self.batch_lines:
                    await asyncio.sleep(self.flush_sec)
                delivered += await self._deliver(self._take())
            for p in pumps:
                if p.done():
                    p.result()
        finally:
            self.close()
            for p in pumps:  # closed early: a pump may still end in an error (engine gone)
                p.add_done_callback(outcome_seen)
        return delivered

    def close(self) -> None:
        """Stop following; lines not yet handed to the sink are dropped (resume re-reads)."""
        with self._cond:
            self._closed = True
            streams = list(self._streams)
            self._cond.notify_all()
        for it in streams:
            it.close()

