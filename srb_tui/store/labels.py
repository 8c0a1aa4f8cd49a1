"""Human labels ("is this a genuine migration?") per run and annotator, for Table 6.

``import_labels`` stores a whole file's labels in one transaction: if any row names a run
the store does not hold, nothing is written and the error lists those rows. A label for the
same (run, annotator) replaces the earlier one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.campaigns import chunks
from srb_tui.store.clock import utc_now
from srb_tui.store.errors import ContentRefused


@dataclass(frozen=True)
class HumanLabel:
    """A human's verdict on whether a run's migration is genuine."""

    run_id: str
    annotator: str
    genuine: bool
    where: str = ""  # "file:line", for messages


class LabelsRepository(Repository):
    """The human_labels table (``store.labels``)."""

    async def import_labels(self, labels: Sequence[HumanLabel], source: str) -> int:
        """Store ``labels`` (all or none); return how many rows were written."""
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> int:
            ids = sorted({label.run_id for label in labels})
            known: set[str] = set()
            for part in chunks(ids):
                marks = ", ".join("?" for _ in part)
                rows = await query(conn, f"SELECT id FROM runs WHERE id IN ({marks})", part)
                known |= {str(r[0]) for r in rows}
            unknown = [label for label in labels if label.run_id not in known]
            if unknown:
                shown = "; ".join(f"{u.where or source}: no run {u.run_id!r}" for u in unknown[:10])
                more = f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""
                raise ContentRefused(f"{source}: nothing imported — {shown}{more}")
            await conn.executemany(
                "INSERT OR REPLACE INTO human_labels (run_id, annotator, genuine, source,"
                " imported_at) VALUES (?, ?, ?, ?, ?)",
                [(lb.run_id, lb.annotator, int(lb.genuine), source, now) for lb in labels],
            )
            return len(labels)

        return await self._write(job)

    async def labels(self, run_id: str) -> list[HumanLabel]:
        rows = await self._rows(
            "SELECT run_id, annotator, genuine FROM human_labels WHERE run_id = ?"
            " ORDER BY annotator", (run_id,),
        )
        return [HumanLabel(str(r[0]), str(r[1]), bool(r[2])) for r in rows]
