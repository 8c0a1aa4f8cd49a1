"""Stage II while it runs: the grader's per-module lines, passed on as they come.

The grader's ``suite`` command prints one ``@srb-progress {json}`` line on its stdout as
each module starts and as it ends (``grader/suite/lines_out.py``; the modules' own output
goes to their log files, never there). Each line becomes a :class:`Progress` event for this
process's watchers and a record in the run's ``behavioural_progress`` table, so a console in
another process sees which module runs and which have ended before the stage's results
are recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from srb_tui.grader.contract import SUITE_PROGRESS_MARK
from srb_tui.service.events import Progress
from srb_tui.store import Store, StoreError
from srb_tui.store.run_extra import BEHAVIOURAL_PROGRESS
from srb_tui.store.run_extra_more import ModuleProgress

from .common import Publish

PROGRESS_MARK = SUITE_PROGRESS_MARK.encode()


def progress_text(rec: ModuleProgress) -> str:
    """``behavioural: module 2/4 cli running`` / ``… cli ok, 12/12 checks pass``."""
    head = f"behavioural: module {rec.index}/{rec.total} {rec.module}"
    if rec.state == "running":
        return f"{head} running"
    counts = f", {rec.passed}/{rec.scored} checks pass" if rec.scored else ""
    return f"{head} {rec.state}{counts}"


class SuiteProgress:
    """An ``on_line`` for the grader's stream, and the store writes it started."""

    def __init__(self, store: Store | None, run_id: str, publish: Publish) -> None:
        self.store = store
        self.run_id = run_id
        self.publish = publish
        self._last: asyncio.Task[None] | None = None
        self.seen: list[ModuleProgress] = []

    async def begin(self) -> None:
        """Forget an earlier attempt's table (a stage graded again starts empty)."""
        if self.store is not None:
            await self.store.runs.merge_extra(self.run_id, drop=[BEHAVIOURAL_PROGRESS])

    def on_line(self, raw: bytes) -> None:
        if not raw.startswith(PROGRESS_MARK):
            return
        try:
            rec = ModuleProgress.of(json.loads(raw[len(PROGRESS_MARK):]))
        except ValueError:
            return
        if rec is None:
            return
        self.seen.append(rec)
        self.publish(Progress(self.run_id, progress_text(rec)))
        if self.store is not None:  # one write after the other, in the grader's order
            self._last = asyncio.get_running_loop().create_task(self._write(rec, self._last))

    async def _write(self, rec: ModuleProgress, before: asyncio.Task[None] | None) -> None:
        if before is not None:
            with contextlib.suppress(StoreError):
                await before
        assert self.store is not None
        await self.store.runs.merge_extra(self.run_id,
                                          into={BEHAVIOURAL_PROGRESS: {rec.module: rec.to_json()}})

    async def drain(self) -> None:
        """Wait for the writes started so far (a failed write is a lost progress line,
        never the stage's failure)."""
        if self._last is not None:
            with contextlib.suppress(StoreError):
                await self._last
