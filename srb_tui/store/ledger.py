"""The model gateway's records: per-run tokens, budgets, the ledger of model requests, probes.

Tokens are stored only as their SHA-256 (a token is 32 random bytes, so a plain hash is
enough), which lets a restarted srb accept the tokens its previous process handed out without
the store ever holding one. Ledger rows carry the tokens and cost the gateway read from each
response's own usage; ``cost_usd`` is NULL for a model the price table does not know
("unpriced"). Probes (paths the gateway answers locally) are counted per run, method and path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import aiosqlite

from srb_tui.store.base import StoreBase, query
from srb_tui.store.clock import utc_now
from srb_tui.store.errors import StoreError

GATEWAY_ROLES = frozenset({"agent", "reviewer", "adversary"})
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


@dataclass(frozen=True)
class TokenRecord:
    """What a gateway token stands for (the token itself is never stored)."""

    token_hash: str
    run_id: str
    role: str
    round: int | None
    issued_at: str
    revoked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BudgetRecord:
    """A run's model budget as set at launch (cost and/or tokens)."""

    run_id: str
    max_cost_usd: float | None
    max_tokens: int | None
    set_at: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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
class ProbeRecord:
    """A path the gateway answered locally, counted (``run_id`` '' when no valid token)."""

    run_id: str
    method: str
    path: str
    status: int
    count: int
    first_at: str
    last_at: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _token(row: sqlite3.Row) -> TokenRecord:
    return TokenRecord(
        str(row["token_hash"]), str(row["run_id"]), str(row["role"]),
        None if row["round"] is None else int(row["round"]),
        str(row["issued_at"]), None if row["revoked_at"] is None else str(row["revoked_at"]),
    )


def _ledger(row: sqlite3.Row) -> LedgerRow:
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


def _totals(row: sqlite3.Row) -> Totals:
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


_SUMS = (
    "count(*) AS requests,"
    " sum(CASE WHEN error IS NOT NULL OR status >= 500 THEN 1 ELSE 0 END) AS errors,"
    " sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,"
    " sum(cache_read_tokens) AS cache_read_tokens,"
    " sum(cache_write_tokens) AS cache_write_tokens,"
    " sum(reasoning_tokens) AS reasoning_tokens, sum(cost_usd) AS cost_usd,"
    " sum(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced"
)


def _role(role: str, run_id: str) -> str:
    if role not in GATEWAY_ROLES:
        raise StoreError(
            f"run {run_id}: gateway role {role!r} is not one of {', '.join(sorted(GATEWAY_ROLES))}"
        )
    return role


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(f"{what}: must be a whole number >= 0, got {value!r}")
    return value


class LedgerMixin(StoreBase):
    """Gateway tokens, run budgets, the ledger and probe counters."""

    # ------------------------------------------------------------------ tokens

    async def add_gateway_token(
        self, token_hash: str, run_id: str, role: str, round: int | None = None
    ) -> TokenRecord:
        """Record a token (by hash) for ``run_id``/``role``/``round``."""
        _role(role, run_id)

        async def job(conn: aiosqlite.Connection) -> TokenRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT INTO gateway_tokens (token_hash, run_id, role, round, issued_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (token_hash, run_id, role, round, utc_now()),
            )
            rows = await query(
                conn, "SELECT * FROM gateway_tokens WHERE token_hash = ?", (token_hash,)
            )
            return _token(rows[0])

        return await self._write(job)

    async def gateway_token(self, token_hash: str) -> TokenRecord | None:
        """The record of a token hash, revoked or not; None when unknown."""
        rows = await self._rows(
            "SELECT * FROM gateway_tokens WHERE token_hash = ?", (token_hash,)
        )
        return _token(rows[0]) if rows else None

    async def set_gateway_token_round(self, token_hash: str, round: int | None) -> None:
        async def job(conn: aiosqlite.Connection) -> None:
            cursor = await conn.execute(
                "UPDATE gateway_tokens SET round = ? WHERE token_hash = ?", (round, token_hash)
            )
            if cursor.rowcount == 0:
                raise StoreError(f"{self._label}: no such gateway token")

        await self._write(job)

    async def revoke_gateway_tokens(self, run_id: str) -> int:
        """Revoke every live token of a run; how many were revoked."""

        async def job(conn: aiosqlite.Connection) -> int:
            cursor = await conn.execute(
                "UPDATE gateway_tokens SET revoked_at = ? WHERE run_id = ? AND revoked_at IS NULL",
                (utc_now(), run_id),
            )
            return int(cursor.rowcount)

        return await self._write(job)

    # ------------------------------------------------------------------ budgets

    async def set_run_budget(
        self, run_id: str, *, max_cost_usd: float | None, max_tokens: int | None
    ) -> BudgetRecord:
        """Set (or clear, with both None) a run's gateway budget."""
        if max_cost_usd is not None and not (
            isinstance(max_cost_usd, int | float) and max_cost_usd >= 0
        ):
            raise StoreError(f"run {run_id}: max_cost_usd must be >= 0, got {max_cost_usd!r}")
        if max_tokens is not None:
            _count(max_tokens, f"run {run_id} max_tokens")

        async def job(conn: aiosqlite.Connection) -> BudgetRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO run_budgets (run_id, max_cost_usd, max_tokens, set_at)"
                " VALUES (?, ?, ?, ?)",
                (run_id, None if max_cost_usd is None else float(max_cost_usd), max_tokens,
                 utc_now()),
            )
            rows = await query(conn, "SELECT * FROM run_budgets WHERE run_id = ?", (run_id,))
            return _budget(rows[0])

        return await self._write(job)

    async def run_budget(self, run_id: str) -> BudgetRecord | None:
        rows = await self._rows("SELECT * FROM run_budgets WHERE run_id = ?", (run_id,))
        return _budget(rows[0]) if rows else None

    # ------------------------------------------------------------------ ledger

    async def add_ledger_row(
        self,
        run_id: str,
        role: str,
        *,
        round: int | None,
        route: str,
        model: str | None,
        upstream_model: str | None,
        status: int,
        latency_ms: float,
        streamed: bool = False,
        usage: Mapping[str, int] | None = None,
        cost_usd: float | None = None,
        error: str | None = None,
    ) -> LedgerRow:
        """Append one model request to the ledger."""
        _role(role, run_id)
        counts = dict.fromkeys(TOKEN_FIELDS, 0)
        for name, value in (usage or {}).items():
            if name not in counts:
                raise StoreError(f"run {run_id} ledger: unknown usage field {name!r}")
            counts[name] = _count(value, f"run {run_id} ledger {name}")

        async def job(conn: aiosqlite.Connection) -> LedgerRow:
            await self._require_in(conn, run_id)
            inserted = await conn.execute_insert(
                "INSERT INTO ledger (run_id, role, round, route, model, upstream_model, status,"
                " latency_ms, streamed, input_tokens, output_tokens, cache_read_tokens,"
                " cache_write_tokens, reasoning_tokens, cost_usd, error, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, role, round, route, model, upstream_model, int(status),
                 float(latency_ms), int(bool(streamed)), *(counts[f] for f in TOKEN_FIELDS),
                 cost_usd, error, utc_now()),
            )
            assert inserted is not None
            rows = await query(conn, "SELECT * FROM ledger WHERE id = ?", (int(inserted[0]),))
            return _ledger(rows[0])

        return await self._write(job)

    async def ledger_rows(
        self, run_id: str, *, after_id: int = 0, limit: int = 10_000
    ) -> list[LedgerRow]:
        """A run's ledger rows in the order they were written."""
        rows = await self._rows(
            "SELECT * FROM ledger WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?",
            (run_id, after_id, limit),
        )
        return [_ledger(row) for row in rows]

    async def ledger_totals(self, run_id: str) -> LedgerTotals:
        """A run's totals over its whole ledger, and per role."""
        async with self._readers.snapshot() as conn:
            total = await query(conn, f"SELECT {_SUMS} FROM ledger WHERE run_id = ?", (run_id,))
            per_role = await query(
                conn,
                f"SELECT role, {_SUMS} FROM ledger WHERE run_id = ? GROUP BY role",
                (run_id,),
            )
        return LedgerTotals(
            run_id, _totals(total[0]), {str(row["role"]): _totals(row) for row in per_role}
        )

    # ------------------------------------------------------------------ probes

    async def record_probe(
        self, run_id: str | None, method: str, path: str, status: int
    ) -> None:
        """Count one locally answered request (``run_id`` None: no valid token)."""
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "INSERT INTO gateway_probes (run_id, method, path, status, count, first_at,"
                " last_at) VALUES (?, ?, ?, ?, 1, ?, ?)"
                " ON CONFLICT (run_id, method, path) DO UPDATE SET count = count + 1,"
                " status = excluded.status, last_at = excluded.last_at",
                (run_id or "", method, path, int(status), now, now),
            )

        await self._write(job)

    async def gateway_probes(self, run_id: str | None = None) -> list[ProbeRecord]:
        """Probe counters (of one run; ``run_id=''`` for those without a valid token)."""
        if run_id is None:
            rows = await self._rows("SELECT * FROM gateway_probes ORDER BY run_id, path, method")
        else:
            rows = await self._rows(
                "SELECT * FROM gateway_probes WHERE run_id = ? ORDER BY path, method", (run_id,)
            )
        return [
            ProbeRecord(
                str(r["run_id"]), str(r["method"]), str(r["path"]), int(r["status"]),
                int(r["count"]), str(r["first_at"]), str(r["last_at"]),
            )
            for r in rows
        ]


def _budget(row: sqlite3.Row) -> BudgetRecord:
    return BudgetRecord(
        str(row["run_id"]),
        None if row["max_cost_usd"] is None else float(row["max_cost_usd"]),
        None if row["max_tokens"] is None else int(row["max_tokens"]),
        str(row["set_at"]),
    )
