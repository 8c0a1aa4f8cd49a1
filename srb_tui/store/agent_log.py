"""Agent rounds and transcript events of a run (schema step 3).

``agent_rounds`` holds one row per round of a real client: when it started, the first
log line that can belong to it, how it ended (exit code, session id, final message, tree
fingerprints, failure), its tokens and the client's own cost estimate, and what the round
loop made of it. ``agent_events`` holds the typed transcript events parsed from the
round's stream (message, tool_call, tool_result, usage, cost, error, session, result);
a round's events can be rebuilt from its stored log lines, so a resumed srb replaces them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import aiosqlite

from srb_tui.store.base import Repository
from srb_tui.store.clock import utc_now
from srb_tui.store.convert import dump_json, load_json

if TYPE_CHECKING:
    from srb_tui.store.agent_log_records import AgentEventRecord, AgentRound

# The record types live in :mod:`.agent_log_records` and load with the first read of a
# round or an event: opening a store for a launch does not build them.

ROUND_FIELDS = (
    "ended_at", "exit_code", "session_id", "final_message", "tree_before", "tree_after",
    "acted", "failed", "error", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "client_cost_usd", "verdict",
)


class AgentLogRepository(Repository):
    """Rounds and transcript events of the real agent clients (``store.agent``)."""

    async def start_agent_round(
        self, run_id: str, number: int, *, prompt_kind: str, first_log_seq: int
    ) -> None:
        async def job(conn: aiosqlite.Connection) -> None:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO agent_rounds (run_id, round, prompt_kind, started_at,"
                " first_log_seq) VALUES (?, ?, ?, ?, ?)",
                (run_id, number, prompt_kind, utc_now(), first_log_seq))

        await self._write(job)

    async def finish_agent_round(self, run_id: str, number: int, **fields: Any) -> None:
        unknown = set(fields) - set(ROUND_FIELDS)
        if unknown:
            raise ValueError(f"agent round: unknown fields {sorted(unknown)}")
        fields.setdefault("ended_at", utc_now())
        cols = ", ".join(f"{k} = ?" for k in fields)
        values = [int(v) if isinstance(v, bool) else v for v in fields.values()]

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(f"UPDATE agent_rounds SET {cols} WHERE run_id = ? AND round = ?",
                               (*values, run_id, number))

        await self._write(job)

    async def agent_rounds(self, run_id: str) -> list[AgentRound]:
        from srb_tui.store import agent_log_records as rec

        rows = await self._rows(
            "SELECT * FROM agent_rounds WHERE run_id = ? ORDER BY round", (run_id,))
        return [rec.round_from_row(r) for r in rows]

    async def replace_agent_events(
        self, run_id: str, number: int, events: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> None:
        """Drop round ``number``'s events and store ``events`` (ts, kind, data) instead."""
        payload = [(ts, kind, dump_json(data, f"run {run_id} agent event"))
                   for ts, kind, data in events]

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute("DELETE FROM agent_events WHERE run_id = ? AND round = ?",
                               (run_id, number))
            await conn.executemany(
                "INSERT INTO agent_events (run_id, round, seq, ts, kind, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, number, i + 1, ts, kind, data)
                 for i, (ts, kind, data) in enumerate(payload)])

        await self._write(job)

    async def append_agent_events(
        self, run_id: str, number: int, events: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> int:
        """Append events to round ``number``; returns the last seq."""
        payload = [(ts, kind, dump_json(data, f"run {run_id} agent event"))
                   for ts, kind, data in events]

        async def job(conn: aiosqlite.Connection) -> int:
            cur = await conn.execute(
                "SELECT coalesce(max(seq), 0) FROM agent_events WHERE run_id = ? AND round = ?",
                (run_id, number))
            row = await cur.fetchone()
            start = int(row[0]) if row else 0
            await conn.executemany(
                "INSERT INTO agent_events (run_id, round, seq, ts, kind, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, number, start + i + 1, ts, kind, data)
                 for i, (ts, kind, data) in enumerate(payload)])
            return start + len(payload)

        return await self._write(job)

    async def agent_events(
        self, run_id: str, *, round_no: int | None = None, after: tuple[int, int] = (0, 0),
        limit: int = 5000,
    ) -> list[AgentEventRecord]:
        """Events in (round, seq) order after ``after``; one round's with ``round_no``."""
        from srb_tui.store import agent_log_records as rec

        if round_no is not None:
            rows = await self._rows(
                "SELECT * FROM agent_events WHERE run_id = ? AND round = ? ORDER BY seq"
                " LIMIT ?", (run_id, round_no, limit))
        else:
            rows = await self._rows(
                "SELECT * FROM agent_events WHERE run_id = ? AND (round > ? OR (round = ?"
                " AND seq > ?)) ORDER BY round, seq LIMIT ?",
                (run_id, after[0], after[0], after[1], limit))
        return [rec.AgentEventRecord(r["run_id"], r["round"], r["seq"], r["ts"], r["kind"],
                                 load_json(r["data"], "agent event") or {}) for r in rows]

    async def stdout_lines_after(self, run_id: str, seq: int) -> list[tuple[int, str, str]]:
        """(seq, ts, text) of the run's stdout log lines after ``seq``."""
        rows = await self._rows(
            "SELECT seq, ts, text FROM log_lines WHERE run_id = ? AND stream = 'stdout'"
            " AND seq > ? ORDER BY seq", (run_id, seq))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def agent_totals(self, run_id: str) -> dict[str, Any]:
        """Tokens and the clients' own cost estimate over all rounds."""
        rows = await self._rows(
            "SELECT count(*), coalesce(sum(input_tokens),0), coalesce(sum(output_tokens),0),"
            " coalesce(sum(cache_read_tokens),0), coalesce(sum(cache_write_tokens),0),"
            " coalesce(sum(reasoning_tokens),0), sum(client_cost_usd)"
            " FROM agent_rounds WHERE run_id = ?", (run_id,))
        r = rows[0]
        return {"rounds": int(r[0]), "input_tokens": int(r[1]), "output_tokens": int(r[2]),
                "cache_read_tokens": int(r[3]), "cache_write_tokens": int(r[4]),
                "reasoning_tokens": int(r[5]),
                "client_cost_usd": None if r[6] is None else round(float(r[6]), 6)}

    async def ledger_brief(self, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per run: requests, total tokens, priced cost and unpriced requests of the model
        ledger, for many runs in one query (the Runs screen's column)."""
        if not run_ids:
            return {}
        marks = ",".join("?" for _ in run_ids)
        rows = await self._rows(
            "SELECT run_id, count(*), coalesce(sum(input_tokens + output_tokens"
            " + cache_read_tokens + cache_write_tokens), 0), sum(cost_usd),"
            " sum(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END)"
            f" FROM ledger WHERE run_id IN ({marks}) GROUP BY run_id", tuple(run_ids))
        return {str(r[0]): {"requests": int(r[1]), "total_tokens": int(r[2]),
                            "cost_usd": None if r[3] is None else float(r[3]),
                            "unpriced_requests": int(r[4])} for r in rows}
