"""The agent log's record types (rounds, transcript events) and the row conversion.

Kept apart from the store's methods (:mod:`.agent_log`) so that opening a store does not
build them: only a real client's run and the screens that show its rounds read them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AgentRound:
    """One round of a real client's agent phase as stored."""

    run_id: str
    round: int
    prompt_kind: str
    started_at: str
    ended_at: str | None
    exit_code: int | None
    first_log_seq: int
    session_id: str | None
    final_message: str | None
    tree_before: str | None
    tree_after: str | None
    acted: bool | None
    failed: bool | None
    error: str | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    client_cost_usd: float | None
    verdict: str | None

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens \
            + self.cache_write_tokens


@dataclass(frozen=True)
class AgentEventRecord:
    """One stored transcript event of an agent round."""

    run_id: str
    round: int
    seq: int
    ts: str
    kind: str
    data: dict[str, Any]


def round_from_row(row: sqlite3.Row) -> AgentRound:
    d = dict(row)
    for key in ("acted", "failed"):
        d[key] = None if d[key] is None else bool(d[key])
    return AgentRound(**d)


__all__ = ["AgentEventRecord", "AgentRound", "round_from_row"]
