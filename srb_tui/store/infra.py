"""Infrastructure records of a run: images used, containers created, and service events."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import utc_now
from srb_tui.store.convert import (
    container_from_row,
    dump_json,
    event_from_row,
    image_from_row,
    need_int,
    need_text,
)
from srb_tui.store.errors import StoreError
from srb_tui.store.records import ContainerRecord, EventRecord, ImageRecord

PAYLOAD_BATCH = 500  # run ids per query (SQLite binds at most 32766 parameters)


def _opt_text(value: Any, what: str) -> Any:
    return need_text(value, what, optional=True)


UPDATABLE_CONTAINER_FIELDS: Final[Mapping[str, Callable[[Any, str], Any]]] = {
    "last_log_ts": _opt_text,
    "exit_code": need_int,
    "removed_at": _opt_text,
}


class InfraRepository(Repository):
    """Images, containers and events (``store.infra``)."""

    async def record_image(
        self,
        run_id: str,
        role: str,
        *,
        tag: str,
        image_id: str | None = None,
        digest: str | None = None,
    ) -> ImageRecord:
        """Insert or replace the image a run used for ``role`` (agent, audit, …)."""
        what = f"run {run_id} image {role!r}"
        params = (
            run_id,
            need_text(role, f"{what} role"),
            need_text(tag, f"{what} tag"),
            _opt_text(image_id, f"{what} image_id"),
            _opt_text(digest, f"{what} digest"),
        )

        async def job(conn: aiosqlite.Connection) -> ImageRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO images (run_id, role, tag, image_id, digest, recorded_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (*params, utc_now()),
            )
            rows = await query(
                conn, "SELECT * FROM images WHERE run_id = ? AND role = ?", (run_id, role)
            )
            return image_from_row(rows[0])

        return await self._write(job)

    async def images(self, run_id: str) -> list[ImageRecord]:
        """The images of a run, by role."""
        rows = await self._rows("SELECT * FROM images WHERE run_id = ? ORDER BY role", (run_id,))
        return [image_from_row(row) for row in rows]

    async def record_container(
        self,
        run_id: str,
        role: str,
        *,
        container_id: str,
        name: str,
        created_at: str | None = None,
    ) -> ContainerRecord:
        """Record a container srb created for a run (``created_at`` defaults to now)."""
        what = f"run {run_id} container {role!r}"
        params = (
            need_text(container_id, f"{what} id"),
            run_id,
            need_text(role, f"{what} role"),
            need_text(name, f"{what} name"),
            _opt_text(created_at, f"{what} created_at") or utc_now(),
        )

        async def job(conn: aiosqlite.Connection) -> ContainerRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO containers (container_id, run_id, role, name, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                params,
            )
            rows = await query(
                conn, "SELECT * FROM containers WHERE container_id = ?", (container_id,)
            )
            return container_from_row(rows[0])

        return await self._write(job)

    async def update_container(self, container_id: str, **fields: Any) -> ContainerRecord:
        """Change ``last_log_ts``, ``exit_code`` or ``removed_at`` of a recorded container."""
        unknown = sorted(set(fields) - set(UPDATABLE_CONTAINER_FIELDS))
        if unknown:
            raise StoreError(f"container {container_id}: cannot change {', '.join(unknown)}")
        encoded = {
            name: UPDATABLE_CONTAINER_FIELDS[name](value, f"container {container_id} {name}")
            for name, value in fields.items()
        }

        async def job(conn: aiosqlite.Connection) -> ContainerRecord:
            if encoded:
                sets = ", ".join(f"{name} = ?" for name in encoded)  # whitelisted names only
                await conn.execute(
                    f"UPDATE containers SET {sets} WHERE container_id = ?",
                    (*encoded.values(), container_id),
                )
            rows = await query(
                conn, "SELECT * FROM containers WHERE container_id = ?", (container_id,)
            )
            if not rows:
                raise StoreError(f"{self._label}: no container {container_id!r} recorded")
            return container_from_row(rows[0])

        return await self._write(job)

    async def mark_container_removed(self, container_id: str) -> bool:
        """Set ``removed_at`` (now) of a recorded container that has none yet; False when
        srb never recorded it (a relay sidecar, a container of an older srb)."""
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute(
                "UPDATE containers SET removed_at = ? WHERE container_id = ?"
                " AND removed_at IS NULL", (now, container_id))
            return cursor.rowcount > 0

        return await self._write(job)

    async def containers(
        self, run_id: str | None = None, *, present_only: bool = False
    ) -> list[ContainerRecord]:
        """Recorded containers (of one run or all), oldest first; ``present_only`` skips
        those marked removed."""
        clauses = ["1"]
        params: list[Any] = []
        if run_id is not None:
            clauses.append("run_id = ?")
            params.append(run_id)
        if present_only:
            clauses.append("removed_at IS NULL")
        rows = await self._rows(
            f"SELECT * FROM containers WHERE {' AND '.join(clauses)}"
            " ORDER BY created_at, container_id",
            params,
        )
        return [container_from_row(row) for row in rows]

    async def add_event(self, run_id: str | None, kind: str, payload: Any = None) -> EventRecord:
        """Append a service event (``run_id`` None for events about no run); return it."""
        where = f"run {run_id} " if run_id is not None else ""
        need_text(kind, f"{where}event kind")
        body = dump_json(payload, f"{where}event {kind!r} payload")

        async def job(conn: aiosqlite.Connection) -> EventRecord:
            if run_id is not None:
                await self._require_in(conn, run_id)
            at = utc_now()
            inserted = await conn.execute_insert(
                "INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, ?, ?)",
                (run_id, at, kind, body),
            )
            assert inserted is not None
            rows = await query(conn, "SELECT * FROM events WHERE seq = ?", (int(inserted[0]),))
            return event_from_row(rows[0])

        return await self._write(job)

    async def events(
        self, run_id: str | None = None, *, after_seq: int = 0, limit: int = 1000
    ) -> list[EventRecord]:
        """Events with ``seq > after_seq`` (of one run, or of all when ``run_id`` is None)."""
        if run_id is None:
            sql = "SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?"
            params: tuple[Any, ...] = (after_seq, limit)
        else:
            sql = "SELECT * FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?"
            params = (run_id, after_seq, limit)
        rows = await self._rows(sql, params)
        return [event_from_row(row) for row in rows]

    async def latest_payloads(self, kind: str, run_ids: Sequence[str]) -> dict[str, Any]:
        """The payload of the newest ``kind`` event of each of ``run_ids`` (runs without
        one are absent). The ladder records each score envelope as a ``score`` event, so
        this is how views read verdicts without the files on disk."""
        out: dict[str, Any] = {}
        ids = list(dict.fromkeys(run_ids))
        for start in range(0, len(ids), PAYLOAD_BATCH):
            chunk = ids[start:start + PAYLOAD_BATCH]
            marks = ", ".join("?" for _ in chunk)  # placeholders only; values are bound
            rows = await self._rows(
                "SELECT run_id, payload FROM events WHERE seq IN ("
                f" SELECT max(seq) FROM events WHERE kind = ? AND run_id IN ({marks})"
                " GROUP BY run_id)",
                (kind, *chunk),
            )
            for row in rows:
                try:
                    out[str(row["run_id"])] = json.loads(row["payload"])
                except ValueError as exc:
                    raise StoreError(
                        f"{self._label}: run {row['run_id']}: {kind} event is not JSON ({exc})"
                    ) from exc
        return out

    async def change_mark(self) -> tuple[int, str]:
        """A cheap watermark of the run history: it changes whenever a run is created or
        any run's row is updated (status, score, …), by this process or another."""
        rows = await self._rows("SELECT count(*) AS n, max(updated_at) AS last FROM runs")
        return int(rows[0]["n"]), str(rows[0]["last"] or "")
