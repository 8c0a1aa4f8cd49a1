"""The gateway's record types and how a row of its tables becomes one.

Kept apart from the store's methods (:mod:`.ledger`) so that opening a store does not
build them: only a process that serves model traffic or reports on it reads the ledger.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from srb_tui.store.convert import record_from_row
from srb_tui.store.records import JsonRecord


@dataclass(frozen=True)
class TokenRecord(JsonRecord):
    """What a gateway token stands for (the token itself is never stored)."""

    token_hash: str
    run_id: str
    role: str
    round: int | None
    issued_at: str
    revoked_at: str | None


@dataclass(frozen=True)
class BudgetRecord(JsonRecord):
    """A run's model budget as set at launch (cost and/or tokens)."""

    run_id: str
    max_cost_usd: float | None
    max_tokens: int | None
    set_at: str


@dataclass(frozen=True)
class LedgerRow:
    """One forwarded model request and what its response said it used."""

    id: int
    run_id: str
    role: str
    round: int | None
    route: str
    model: str | None
    upstream_model: str | None
    status: int
    latency_ms: float
    streamed: bool
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    error: str | None
    at: str

    @property
    def total_tokens(self) -> int:
        """Input (uncached + cache read + cache write) plus output; reasoning is inside
        output already."""
        return (
            self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
            + self.output_tokens
        )

    @property
    def priced(self) -> bool:
        return self.cost_usd is not None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"total_tokens": self.total_tokens}


@dataclass(frozen=True)
class Totals:
    """Sums over ledger rows. ``cost_usd`` adds the priced rows; ``unpriced_requests``
    counts the rows without a price (their tokens are in the token sums)."""

    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_requests: int = 0

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
            + self.output_tokens
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"total_tokens": self.total_tokens}


@dataclass(frozen=True)
class LedgerTotals:
    """A run's totals, and the same per role (agent / reviewer / adversary)."""

    run_id: str
    total: Totals
    by_role: Mapping[str, Totals] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "total": self.total.to_json(),
            "by_role": {role: t.to_json() for role, t in sorted(self.by_role.items())},
        }


@dataclass(frozen=True)
class ProbeRecord(JsonRecord):
    """A path the gateway answered locally, counted (``run_id`` '' when no valid token)."""

    run_id: str
    method: str
    path: str
    status: int
    count: int
    first_at: str
    last_at: str


def token_from_row(row: sqlite3.Row) -> TokenRecord:
    return record_from_row(TokenRecord, row)


def ledger_row_from_row(row: sqlite3.Row) -> LedgerRow:
    return LedgerRow(
        id=int(row["id"]),
        run_id=str(row["run_id"]),
        role=str(row["role"]),
        round=None if row["round"] is None else int(row["round"]),
        route=str(row["route"]),
        model=row["model"],
        upstream_model=row["upstream_model"],
        status=int(row["status"]),
        latency_ms=float(row["latency_ms"]),
        streamed=bool(row["streamed"]),
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cache_read_tokens=int(row["cache_read_tokens"]),
        cache_write_tokens=int(row["cache_write_tokens"]),
        reasoning_tokens=int(row["reasoning_tokens"]),
        cost_usd=None if row["cost_usd"] is None else float(row["cost_usd"]),
        error=row["error"],
        at=str(row["at"]),
    )


def totals_from_row(row: sqlite3.Row) -> Totals:
    return Totals(
        requests=int(row["requests"] or 0),
        errors=int(row["errors"] or 0),
        input_tokens=int(row["input_tokens"] or 0),
        output_tokens=int(row["output_tokens"] or 0),
        cache_read_tokens=int(row["cache_read_tokens"] or 0),
        cache_write_tokens=int(row["cache_write_tokens"] or 0),
        reasoning_tokens=int(row["reasoning_tokens"] or 0),
        cost_usd=float(row["cost_usd"] or 0.0),
        unpriced_requests=int(row["unpriced"] or 0),
    )


def budget_from_row(row: sqlite3.Row) -> BudgetRecord:
    return record_from_row(BudgetRecord, row)


def probe_from_row(r: sqlite3.Row) -> ProbeRecord:
    return ProbeRecord(
        str(r["run_id"]), str(r["method"]), str(r["path"]), int(r["status"]),
        int(r["count"]), str(r["first_at"]), str(r["last_at"]),
    )


__all__ = [
    "BudgetRecord",
    "LedgerRow",
    "LedgerTotals",
    "ProbeRecord",
    "TokenRecord",
    "Totals",
    "budget_from_row",
    "ledger_row_from_row",
    "probe_from_row",
    "token_from_row",
    "totals_from_row",
]  # fmt: skip
