"""The run's own lines in its log: what srb did, beside what the agent printed.

A run's log held only the agent container's output, so during grading (often most of a
run) the Log tab stood still. Every status change, progress line and stage end that the
process driving the run announces is also written to the run's log under the stream
``srb`` (:data:`srb_tui.store.logs.HARNESS_STREAM`) and announced as :class:`LogLines`,
so the Log tab, its search and its stream filter show the whole run in order.

Writing is ordered per run and never blocks the caller: lines wait in a list that one task
per run drains; :meth:`HarnessLog.flush` waits for it (the run service flushes before it
announces a run's end and when it lets a run go). A store that refuses the lines loses only
these lines: the run's records go through their own writes, which report the problem.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from srb_tui.service.events import EventBus, LogLines
from srb_tui.store import Store
from srb_tui.store.logs import HARNESS_STREAM

HARNESS_ROLE = "srb"  # the LogLines role of these lines (the agent's are "agent")
Row = tuple[str, str, str]  # (ts, stream, text)


def stamp() -> str:
    """Now as the log's timestamps are written (RFC 3339, nine fraction digits, Z)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond * 1000:09d}Z"


class HarnessLog:
    """Lines srb writes into the logs of the runs this process drives."""

    def __init__(self, store: Store, bus: EventBus) -> None:
        self.store = store
        self.bus = bus
        self._pending: dict[str, list[Row]] = {}
        self._drains: dict[str, asyncio.Task[None]] = {}

    def note(self, run_id: str, text: str) -> None:
        """Queue ``text`` (one line per line of it) for the run's log."""
        rows = [(stamp(), HARNESS_STREAM, line) for line in text.splitlines() or [""]]
        self._pending.setdefault(run_id, []).extend(rows)
        drain = self._drains.get(run_id)
        if drain is None or drain.done():
            self._drains[run_id] = asyncio.get_running_loop().create_task(
                self._drain(run_id), name=f"harness-log-{run_id}")

    async def flush(self, run_id: str) -> None:
        """Wait until every line queued for the run so far is stored and announced."""
        drain = self._drains.pop(run_id, None)
        if drain is not None:
            with contextlib.suppress(Exception):
                await drain
        if self._pending.get(run_id):
            await self._drain(run_id)

    async def _drain(self, run_id: str) -> None:
        while rows := self._pending.pop(run_id, None):
            try:
                last = await self.store.logs.append_log_lines(run_id, rows)
            except Exception:
                return  # see the module docstring: only these lines are lost
            self.bus.publish(LogLines(run_id, HARNESS_ROLE, tuple(rows), last))
