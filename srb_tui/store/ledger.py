"""The model gateway's records: per-run tokens, budgets, the ledger of model requests, probes.

Tokens are stored only as their SHA-256 (a token is 32 random bytes, so a plain hash is
enough), which lets a restarted srb accept the tokens its previous process handed out without
the store ever holding one. Ledger rows carry the tokens and cost the gateway read from each
response's own usage; ``cost_usd`` is NULL for a model the price table does not know
("unpriced"). Probes (paths the gateway answers locally) are counted per run, method and path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import utc_now
from srb_tui.store.errors import StoreError

if TYPE_CHECKING:
    from srb_tui.store.ledger_records import (
        BudgetRecord,
        LedgerRow,
        LedgerTotals,
        ProbeRecord,
        TokenRecord,
    )

# The record types live in :mod:`.ledger_records` and load with the first ledger read or
# write (each method imports them): opening a store for a launch does not build them.

GATEWAY_ROLES = frozenset({"agent", "reviewer", "adversary"})
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
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


class LedgerRepository(Repository):
    """Gateway tokens, run budgets, the ledger and probe counters (``store.ledger``)."""

    # ------------------------------------------------------------------ tokens

    async def add_gateway_token(
        self, token_hash: str, run_id: str, role: str, round: int | None = None
    ) -> TokenRecord:
        """Record a token (by hash) for ``run_id``/``role``/``round``."""
        from srb_tui.store import ledger_records as rec

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
            return rec.token_from_row(rows[0])

        return await self._write(job)

    async def gateway_token(self, token_hash: str) -> TokenRecord | None:
        """The record of a token hash, revoked or not; None when unknown."""
        from srb_tui.store import ledger_records as rec

        rows = await self._rows(
            "SELECT * FROM gateway_tokens WHERE token_hash = ?", (token_hash,)
        )
        return rec.token_from_row(rows[0]) if rows else None

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
        from srb_tui.store import ledger_records as rec

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
            return rec.budget_from_row(rows[0])

        return await self._write(job)

    async def run_budget(self, run_id: str) -> BudgetRecord | None:
        from srb_tui.store import ledger_records as rec

        rows = await self._rows("SELECT * FROM run_budgets WHERE run_id = ?", (run_id,))
        return rec.budget_from_row(rows[0]) if rows else None

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
        from srb_tui.store import ledger_records as rec

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
            return rec.ledger_row_from_row(rows[0])

        return await self._write(job)

    async def ledger_rows(
        self, run_id: str, *, after_id: int = 0, limit: int = 10_000
    ) -> list[LedgerRow]:
        """A run's ledger rows in the order they were written."""
        from srb_tui.store import ledger_records as rec

        rows = await self._rows(
            "SELECT * FROM ledger WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?",
            (run_id, after_id, limit),
        )
        return [rec.ledger_row_from_row(row) for row in rows]

    async def ledger_totals(self, run_id: str) -> LedgerTotals:
        """A run's totals over its whole ledger, and per role."""
        from srb_tui.store import ledger_records as rec

        async with self._readers.snapshot() as conn:
            total = await query(conn, f"SELECT {_SUMS} FROM ledger WHERE run_id = ?", (run_id,))
            per_role = await query(
                conn,
                f"SELECT role, {_SUMS} FROM ledger WHERE run_id = ? GROUP BY role",
                (run_id,),
            )
        return rec.LedgerTotals(
            run_id, rec.totals_from_row(total[0]),
            {str(row["role"]): rec.totals_from_row(row) for row in per_role},
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
        from srb_tui.store import ledger_records as rec

        if run_id is None:
            rows = await self._rows("SELECT * FROM gateway_probes ORDER BY run_id, path, method")
        else:
            rows = await self._rows(
                "SELECT * FROM gateway_probes WHERE run_id = ? ORDER BY path, method", (run_id,)
            )
        return [rec.probe_from_row(r) for r in rows]
