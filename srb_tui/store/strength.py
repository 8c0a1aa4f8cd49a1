"""Strength campaigns in the store (issue 36): one record family, reached as
``store.strength``, like every record family of :class:`Store` (issue 34).

A strength campaign is planned whole before anything is graded — every sampled mutant is a
row — so a crash loses no part of the plan and a resumed campaign grades only what has no
outcome yet: a mutant without ``stage_ii``, then a survivor whose Stage III is not done.
Equivalent-mutant marks belong to the task and the mutant's key (the same change of the
same file), so a mark made in one campaign holds in every later one of that task.

The tables are created by the V7 step (``schema_v7.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import utc_now
from srb_tui.store.errors import StoreError

if TYPE_CHECKING:
    from srb_tui.store.strength_records import MutantRow, StrengthCampaign

STRENGTH_STATUSES = ("planned", "running", "stopped", "done")
STAGE_II = ("killed", "survived", "invalid")
OF_TREES = ("state-a", "reference")


# The record types live in :mod:`.strength_records` and load with the first campaign read:
# every Store builds this repository, and `srb run` never reads a campaign.


class StrengthRepository(Repository):
    """Strength campaigns, their mutants and equivalent marks (``store.strength``)."""

    async def plan(
        self,
        campaign_id: str,
        *,
        task_id: str,
        task_path: str,
        of_tree: str,
        asked: int,
        seed: int,
        panel: Sequence[str],
        budget_sec: float | None,
        mutants: Sequence[Mapping[str, Any]],
    ) -> tuple[StrengthCampaign, int]:
        """Create the campaign (or find it) and every mutant not yet planned, in one
        transaction; the campaign and how many mutants were added. A campaign id already
        used for another task, tree, size or seed is refused."""
        if of_tree not in OF_TREES:
            raise StoreError(f"strength campaign {campaign_id}: of {of_tree!r} is not one of "
                             f"{', '.join(OF_TREES)}")
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> int:
            have = await query(conn, "SELECT task_id, of_tree, asked, seed FROM "
                               "strength_campaigns WHERE id = ?", (campaign_id,))
            if have:
                old = tuple(have[0])
                if old != (task_id, of_tree, asked, seed):
                    raise StoreError(
                        f"strength campaign {campaign_id} is of {old[0]} ({old[1]}, "
                        f"{old[2]} mutants, seed {old[3]}), not of {task_id} ({of_tree}, "
                        f"{asked} mutants, seed {seed})")
            else:
                await conn.execute(
                    "INSERT INTO strength_campaigns (id, task_id, task_path, of_tree, asked, "
                    "seed, panel, budget_sec, status, created_at, updated_at) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?)",
                    (campaign_id, task_id, task_path, of_tree, asked, seed,
                     json.dumps(list(panel)), budget_sec, now, now))
            added = 0
            for position, doc in enumerate(mutants):
                cursor = await conn.execute(
                    "INSERT OR IGNORE INTO strength_mutants (campaign_id, mutant_id, key, "
                    "position, path, line, operator, doc, updated_at) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (campaign_id, str(doc["id"]), str(doc["key"]), position, str(doc["path"]),
                     int(doc["line"]), str(doc["operator"]), json.dumps(dict(doc)), now))
                added += cursor.rowcount
            return added

        return await self._write_then_read(job, lambda: self.campaign(campaign_id))

    async def campaign(self, campaign_id: str) -> StrengthCampaign | None:
        rows = await self._rows("SELECT * FROM strength_campaigns WHERE id = ?",
                                       (campaign_id,))
        from srb_tui.store import strength_records as rec

        return rec.campaign_from_row(rows[0]) if rows else None

    async def campaigns(self, task_id: str | None = None) -> list[StrengthCampaign]:
        """Every strength campaign (of one task), newest first."""
        sql = "SELECT * FROM strength_campaigns"
        params: tuple[str, ...] = ()
        if task_id is not None:
            sql, params = sql + " WHERE task_id = ?", (task_id,)
        rows = await self._rows(sql + " ORDER BY created_at DESC, id", params)
        from srb_tui.store import strength_records as rec

        return [rec.campaign_from_row(row) for row in rows]

    async def set_node(self, campaign_id: str, node: str | None) -> None:
        """Where this sitting grades (a pool's node; None for the local engine)."""

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE strength_campaigns SET node = ?, updated_at = ? "
                               "WHERE id = ?", (node, utc_now(), campaign_id))

        await self._write(job)

    async def set_status(self, campaign_id: str, status: str) -> None:
        if status not in STRENGTH_STATUSES:
            raise StoreError(f"strength campaign {campaign_id}: unknown status {status!r}")

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE strength_campaigns SET status = ?, updated_at = ? "
                               "WHERE id = ?", (status, utc_now(), campaign_id))

        await self._write(job)

    async def set_baseline(self, campaign_id: str, doc: Mapping[str, Any]) -> None:
        """Store the campaign's baseline document (the service's shape)."""

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE strength_campaigns SET baseline = ?, updated_at = ? "
                               "WHERE id = ?", (json.dumps(dict(doc)), utc_now(),
                                                campaign_id))

        await self._write(job)

    async def start_stage_iii(self, campaign_id: str, mutant_id: str, run_id: str) -> None:
        """Name the run that grades a survivor by Stage III, before it starts (so a
        resumed campaign finds a run a SIGKILL left behind and ends it)."""

        async def job(conn: aiosqlite.Connection) -> None:
            cursor = await conn.execute(
                "UPDATE strength_mutants SET stage_iii_run = ?, updated_at = ? WHERE "
                "campaign_id = ? AND mutant_id = ? AND stage_ii = 'survived'",
                (run_id, utc_now(), campaign_id, mutant_id))
            if cursor.rowcount != 1:
                raise StoreError(f"strength {campaign_id}: {mutant_id} is not a Stage II "
                                 "survivor of it")

        await self._write(job)

    async def record_stage_ii(self, campaign_id: str, mutant_id: str, outcome: str,
                              doc: Mapping[str, Any]) -> None:
        if outcome not in STAGE_II:
            raise StoreError(f"strength {campaign_id}/{mutant_id}: Stage II outcome "
                             f"{outcome!r} is not one of {', '.join(STAGE_II)}")

        async def job(conn: aiosqlite.Connection) -> None:
            cursor = await conn.execute(
                "UPDATE strength_mutants SET stage_ii = ?, stage_ii_doc = ?, updated_at = ? "
                "WHERE campaign_id = ? AND mutant_id = ?",
                (outcome, json.dumps(dict(doc)), utc_now(), campaign_id, mutant_id))
            if cursor.rowcount != 1:
                raise StoreError(f"strength {campaign_id}: no mutant {mutant_id}")

        await self._write(job)

    async def record_stage_iii(self, campaign_id: str, mutant_id: str, run_id: str | None,
                               catches: Mapping[str, tuple[str, int | None]]) -> None:
        """Stage III's panel on one survivor: adversary → (outcome, counterexample id)."""

        async def job(conn: aiosqlite.Connection) -> None:
            cursor = await conn.execute(
                "UPDATE strength_mutants SET stage_iii_run = ?, stage_iii_done = 1, "
                "updated_at = ? WHERE campaign_id = ? AND mutant_id = ? AND stage_ii = "
                "'survived'", (run_id, utc_now(), campaign_id, mutant_id))
            if cursor.rowcount != 1:
                raise StoreError(f"strength {campaign_id}: {mutant_id} is not a Stage II "
                                 "survivor of it")
            await conn.execute("DELETE FROM strength_catches WHERE campaign_id = ? AND "
                               "mutant_id = ?", (campaign_id, mutant_id))
            await conn.executemany(
                "INSERT INTO strength_catches (campaign_id, mutant_id, adversary, outcome, "
                "counterexample_id) VALUES (?, ?, ?, ?, ?)",
                [(campaign_id, mutant_id, name, outcome, ce)
                 for name, (outcome, ce) in catches.items()])

        await self._write(job)

    async def mutants(self, campaign_id: str) -> list[MutantRow]:
        """Every mutant of the campaign in planned order, with its catches and any
        equivalent mark of its task."""
        rows = await self._rows(
            "SELECT m.*, e.task_id AS e_task, e.marked_by, e.reason, e.marked_at "
            "FROM strength_mutants m JOIN strength_campaigns c ON c.id = m.campaign_id "
            "LEFT JOIN strength_equivalents e ON e.task_id = c.task_id AND e.key = m.key "
            "WHERE m.campaign_id = ? ORDER BY m.position", (campaign_id,))
        caught: dict[str, dict[str, str]] = {}
        for row in await self._rows(
                "SELECT mutant_id, adversary, outcome FROM strength_catches "
                "WHERE campaign_id = ?", (campaign_id,)):
            caught.setdefault(row["mutant_id"], {})[row["adversary"]] = row["outcome"]
        from srb_tui.store import strength_records as rec

        return [rec.MutantRow(
            campaign_id=row["campaign_id"], mutant_id=row["mutant_id"], key=row["key"],
            position=int(row["position"]), path=row["path"], line=int(row["line"]),
            operator=row["operator"], doc=rec.json_doc(row["doc"]) or {},
            stage_ii=row["stage_ii"], stage_ii_doc=rec.json_doc(row["stage_ii_doc"]),
            stage_iii_run=row["stage_iii_run"],
            stage_iii_done=bool(row["stage_iii_done"]),
            catches=caught.get(row["mutant_id"], {}),
            equivalent=None if row["e_task"] is None else rec.EquivalentMark(
                row["e_task"], row["key"], row["marked_by"], row["reason"], row["marked_at"]),
        ) for row in rows]

    async def mark_equivalent(self, task_id: str, key: str, *, by: str, reason: str) -> None:
        """The author's word that the mutant ``key`` of ``task_id`` changes no behaviour."""
        if not by.strip() or not reason.strip():
            raise StoreError(f"equivalent mark of {task_id} {key}: say who marks it and why")
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "INSERT INTO strength_equivalents (task_id, key, marked_by, reason, "
                "marked_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, key) DO UPDATE SET "
                "marked_by = excluded.marked_by, reason = excluded.reason, "
                "marked_at = excluded.marked_at", (task_id, key, by, reason, now))

        await self._write(job)

    async def unmark_equivalent(self, task_id: str, key: str) -> bool:
        async def job(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute("DELETE FROM strength_equivalents WHERE task_id = ? "
                                        "AND key = ?", (task_id, key))
            return cursor.rowcount > 0

        return await self._write(job)
