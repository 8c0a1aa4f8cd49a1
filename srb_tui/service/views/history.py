"""Run history as the console and ``srb runs list`` show it, read from the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from srb_tui.store import Store, StoreError
from srb_tui.store.run_extra import LOCAL_NODE, read_node


@dataclass(frozen=True)
class RunRow:
    """One run, reduced to display strings."""

    run_id: str
    task_id: str
    agent: str
    status: str
    stop_reason: str | None
    score: float | None
    max_score: float | None
    valid: bool | None
    started: str | None
    duration_sec: float | None
    node: str = "local"  # the engine the run was placed on (``local``: srb's own)

    @property
    def score_text(self) -> str:
        if self.score is None:
            return "—"
        return f"{self.score:g}"

    @property
    def valid_text(self) -> str:
        return {None: "—", True: "valid", False: "invalid"}[self.valid]

    @property
    def started_text(self) -> str:
        """``2026-11-29 12:00:05`` (UTC) from the stored ISO timestamp."""
        if not self.started:
            return "—"
        return self.started.replace("T", " ")[:19]

    @property
    def duration_text(self) -> str:
        if self.duration_sec is None:
            return "—"
        minutes, seconds = divmod(int(self.duration_sec), 60)
        hours, minutes = divmod(minutes, 60)
        return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


@dataclass(frozen=True)
class RunRows:
    """The rows of the runs table, or the problem that kept them from loading."""

    rows: list[RunRow]
    problem: str | None = None


def _duration(started: str | None, finished: str | None) -> float | None:
    if not started:
        return None
    try:
        start = datetime.fromisoformat(started)
        end = datetime.fromisoformat(finished) if finished else None
    except ValueError:
        return None
    return None if end is None else (end - start).total_seconds()


async def load_run_rows(db_path: Path, limit: int = 1000,
                        filters: Mapping[str, Any] | None = None) -> RunRows:
    """Newest runs first, matching ``filters`` (the Runs screen's, as keyword arguments of
    ``Store.runs.list_runs``); a missing store is an empty history, a broken one a message."""
    if not db_path.exists():
        return RunRows([])
    try:
        async with await Store.open(db_path) as store:
            records = await store.runs.list_runs(limit=limit, **dict(filters or {}))
    except StoreError as exc:
        return RunRows([], str(exc))
    rows = [
        RunRow(
            run_id=r.id,
            task_id=r.task_id,
            agent=r.agent,
            status=r.status,
            stop_reason=r.stop_reason,
            score=r.score,
            max_score=r.max_score,
            valid=r.valid,
            started=r.started_at,
            duration_sec=_duration(r.started_at, r.finished_at),
            node=read_node(r.extra) or LOCAL_NODE,
        )
        for r in records
    ]
    return RunRows(rows)
