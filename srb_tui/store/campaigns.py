"""Campaigns in the store: the V6 schema step and the campaign, cell and retry records.

A campaign is a named plan (its TOML text kept verbatim) of cells, one per (task,
configuration, repeat). Every cell is written before anything runs, so a crash loses no
part of the plan. A cell points at its current run; every attempt it made (the first run
and each retry of an invalid or infra_error run) is a row of ``cell_attempts``.

The tables are created by the V6 step (``schema_v6.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import utc_now
from srb_tui.store.errors import StoreError

if TYPE_CHECKING:
    from srb_tui.store.campaign_records import (
        AttemptRecord,
        CampaignConfigRecord,
        CampaignRecord,
        CellRecord,
        PlannedCell,
    )

# The record types live in :mod:`.campaign_records` and load with the first campaign read
# (each method imports them): opening a store for a launch does not build them.

CAMPAIGN_STATUSES = ("planned", "running", "stopped", "done", "cancelled")
CELL_STATES = ("planned", "running", "done", "failed", "cancelled")


class CampaignsRepository(Repository):
    """Campaign plans, their cells and the attempts of each cell (``store.campaigns``)."""

    async def plan_campaign(
        self,
        campaign_id: str,
        *,
        file: str | None,
        source: str,
        max_parallel: int,
        retry_limit: int,
        max_cost: float | None,
        configs: Sequence[CampaignConfigRecord],
        cells: Sequence[PlannedCell],
    ) -> tuple[CampaignRecord, int]:
        """Create the campaign (or extend its plan) and every cell not yet planned, in one
        transaction; return the campaign and how many cells were added. Cells already planned
        keep their state and run."""
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> int:
            have = await query(conn, "SELECT id FROM campaigns WHERE id = ?", (campaign_id,))
            if have:
                await conn.execute(
                    "UPDATE campaigns SET file = ?, source = ?, max_parallel = ?, "
                    "retry_limit = ?, max_cost = ?, updated_at = ? WHERE id = ?",
                    (file, source, max_parallel, retry_limit, max_cost, now, campaign_id),
                )
            else:
                await conn.execute(
                    "INSERT INTO campaigns (id, file, source, status, max_parallel, retry_limit,"
                    " max_cost, created_at, updated_at) VALUES (?, ?, ?, 'planned', ?, ?, ?, ?, ?)",
                    (campaign_id, file, source, max_parallel, retry_limit, max_cost, now, now),
                )
            for position, config in enumerate(configs):
                await conn.execute(
                    "INSERT INTO campaign_configs (campaign_id, position, label, agent, model,"
                    " effort, max_cost) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (campaign_id, label) DO UPDATE SET position = excluded.position,"
                    " agent = excluded.agent, model = excluded.model, effort = excluded.effort,"
                    " max_cost = excluded.max_cost",
                    (campaign_id, position, config.label, config.agent, config.model,
                     config.effort, config.max_cost),
                )
            rows = await query(
                conn,
                "SELECT coalesce(max(position), -1) FROM campaign_cells WHERE campaign_id = ?",
                (campaign_id,),
            )
            next_position = int(rows[0][0]) + 1
            added = 0
            for cell in cells:
                cursor = await conn.execute(
                    "INSERT OR IGNORE INTO campaign_cells (campaign_id, task_id, config, repeat,"
                    " position, task_path, state, updated_at) VALUES (?, ?, ?, ?, ?, ?,"
                    " 'planned', ?)",
                    (campaign_id, cell.task_id, cell.config, cell.repeat, next_position + added,
                     cell.task_path, now),
                )
                added += cursor.rowcount
            return added

        return await self._write_then_read(job, lambda: self.campaign(campaign_id))

    async def campaign(self, campaign_id: str) -> CampaignRecord | None:
        """The campaign ``campaign_id``, or None."""
        from srb_tui.store import campaign_records as rec

        rows = await self._rows("SELECT * FROM campaigns WHERE id = ?", (campaign_id,))
        if not rows:
            return None
        configs = await self._rows(
            "SELECT label, agent, model, effort, max_cost FROM campaign_configs"
            " WHERE campaign_id = ? ORDER BY position", (campaign_id,),
        )
        row = rows[0]
        return rec.CampaignRecord(
            id=row["id"], file=row["file"], source=row["source"], status=row["status"],
            max_parallel=int(row["max_parallel"]), retry_limit=int(row["retry_limit"]),
            max_cost=row["max_cost"], created_at=row["created_at"], updated_at=row["updated_at"],
            configs=tuple(rec.CampaignConfigRecord(**dict(c)) for c in configs),
        )

    async def campaigns(self) -> list[CampaignRecord]:
        """Every stored campaign, newest first."""
        rows = await self._rows("SELECT id FROM campaigns ORDER BY created_at DESC, id")
        found = [await self.campaign(str(r["id"])) for r in rows]
        return [c for c in found if c is not None]

    async def set_campaign_status(self, campaign_id: str, status: str) -> None:
        if status not in CAMPAIGN_STATUSES:
            raise StoreError(f"campaign {campaign_id}: unknown status {status!r}")

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE campaigns SET status = ?, updated_at = ? WHERE id = ?",
                (status, utc_now(), campaign_id),
            )

        await self._write(job)

    async def cells(self, campaign_id: str) -> list[CellRecord]:
        """Every cell of the campaign in plan order."""
        from srb_tui.store import campaign_records as rec

        rows = await self._rows(
            "SELECT * FROM campaign_cells WHERE campaign_id = ? ORDER BY position",
            (campaign_id,),
        )
        return [rec.cell_from_row(r) for r in rows]

    async def start_attempt(self, cell: CellRecord, run_id: str) -> CellRecord:
        """Point the cell at a new run and record the attempt (one transaction)."""
        now = utc_now()
        key = (cell.campaign_id, cell.task_id, cell.config, cell.repeat)

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE campaign_cells SET state = 'running', run_id = ?, attempts = attempts + 1,"
                " updated_at = ? WHERE campaign_id = ? AND task_id = ? AND config = ?"
                " AND repeat = ?", (run_id, now, *key),
            )
            rows = await query(
                conn, "SELECT attempts FROM campaign_cells WHERE campaign_id = ? AND task_id = ?"
                " AND config = ? AND repeat = ?", key,
            )
            await conn.execute(
                "INSERT INTO cell_attempts (campaign_id, task_id, config, repeat, attempt, run_id,"
                " started_at) VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, int(rows[0][0]), run_id, now),
            )

        await self._write(job)
        return await self._one_cell(*key)

    async def end_attempt(
        self, cell: CellRecord, state: str, outcome: str, reason: str | None = None
    ) -> CellRecord:
        """Close the cell's current attempt with ``outcome`` and set the cell's state."""
        if state not in CELL_STATES:
            raise StoreError(f"cell {cell.key}: unknown state {state!r}")
        now = utc_now()
        key = (cell.campaign_id, cell.task_id, cell.config, cell.repeat)

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE campaign_cells SET state = ?, updated_at = ? WHERE campaign_id = ?"
                " AND task_id = ? AND config = ? AND repeat = ?", (state, now, *key),
            )
            await conn.execute(
                "UPDATE cell_attempts SET outcome = ?, reason = ?, ended_at = ? WHERE id ="
                " (SELECT max(id) FROM cell_attempts WHERE campaign_id = ? AND task_id = ?"
                " AND config = ? AND repeat = ?)", (outcome, reason, now, *key),
            )

        await self._write(job)
        return await self._one_cell(*key)

    async def set_cell_state(self, cell: CellRecord, state: str) -> None:
        key = (cell.campaign_id, cell.task_id, cell.config, cell.repeat)

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE campaign_cells SET state = ?, updated_at = ? WHERE campaign_id = ?"
                " AND task_id = ? AND config = ? AND repeat = ?", (state, utc_now(), *key),
            )

        await self._write(job)

    async def _one_cell(self, campaign_id: str, task_id: str, config: str, repeat: int
                        ) -> CellRecord:
        from srb_tui.store import campaign_records as rec

        rows = await self._rows(
            "SELECT * FROM campaign_cells WHERE campaign_id = ? AND task_id = ? AND config = ?"
            " AND repeat = ?", (campaign_id, task_id, config, repeat),
        )
        if not rows:
            raise StoreError(f"campaign {campaign_id}: no cell {task_id} × {config} #{repeat}")
        return rec.cell_from_row(rows[0])

    async def attempts(self, campaign_id: str) -> list[AttemptRecord]:
        """Every attempt of every cell of the campaign, oldest first."""
        from srb_tui.store import campaign_records as rec

        rows = await self._rows(
            "SELECT * FROM cell_attempts WHERE campaign_id = ? ORDER BY id", (campaign_id,)
        )
        return [rec.attempt_from_row(r) for r in rows]


def chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    """``items`` in slices small enough for one ``IN (...)`` list."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
