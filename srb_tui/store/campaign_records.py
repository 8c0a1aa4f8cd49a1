"""The campaign record types and how a row of the campaign tables becomes one.

Kept apart from the store's methods (:mod:`.campaigns`) so that opening a store does not
build them: only the campaign scheduler, its screen and the reports read campaigns.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from srb_tui.store.convert import record_from_row
from srb_tui.store.records import JsonRecord


@dataclass(frozen=True)
class CampaignConfigRecord(JsonRecord):
    """One configuration of a campaign (a column of its matrix): a ``[[config]]`` table of
    the campaign file as read (``campaigns.spec``) and as stored. ``max_tokens`` and
    ``budget_sec`` are not stored columns: they come from the campaign file's text (stored
    with the campaign), which ``srb campaign run|resume`` plans from every time."""

    label: str
    agent: str
    model: str | None = None
    effort: str | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    budget_sec: float | None = None


@dataclass(frozen=True)
class CampaignRecord:
    """A stored campaign: its plan's source text and run settings."""

    id: str
    file: str | None
    source: str
    status: str
    max_parallel: int
    retry_limit: int
    max_cost: float | None
    created_at: str
    updated_at: str
    configs: tuple[CampaignConfigRecord, ...]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("source")
        return out


@dataclass(frozen=True)
class CellRecord(JsonRecord):
    """One (task, configuration, repeat) cell and its current run."""

    campaign_id: str
    task_id: str
    config: str
    repeat: int
    position: int
    task_path: str
    state: str
    run_id: str | None
    attempts: int
    updated_at: str

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.config, self.repeat)


@dataclass(frozen=True)
class AttemptRecord(JsonRecord):
    """One attempt of a cell: the run it started and how that run ended."""

    id: int
    campaign_id: str
    task_id: str
    config: str
    repeat: int
    attempt: int
    run_id: str | None
    outcome: str | None
    reason: str | None
    started_at: str
    ended_at: str | None


@dataclass(frozen=True)
class PlannedCell:
    """What the planner hands the store for one cell."""

    task_id: str
    task_path: str
    config: str
    repeat: int


def cell_from_row(row: sqlite3.Row) -> CellRecord:
    return record_from_row(CellRecord, row)


def attempt_from_row(row: sqlite3.Row) -> AttemptRecord:
    return record_from_row(AttemptRecord, row)


__all__ = [
    "AttemptRecord", "CampaignConfigRecord", "CampaignRecord", "CellRecord", "PlannedCell",
    "attempt_from_row", "cell_from_row",
]  # fmt: skip
