"""Runs: creation, lifecycle transitions, whitelisted updates, listing and counting
(``store.runs``); the columns' checks, filters and sort keys are in ``run_sql``."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

import aiosqlite

from srb_tui import faultpoint
from srb_tui.store.base import Repository, query
from srb_tui.store.clock import RUN_ID_PATTERN, new_run_id, utc_now
from srb_tui.store.convert import (
    dump_json,
    maybe_str,
    need_int,
    need_number,
    need_text,
    run_from_row,
    transition_from_row,
)
from srb_tui.store.errors import IllegalTransition, RunNotFound, StoreError
from srb_tui.store.lifecycle import FINAL_STATUSES, GRADING_STATUSES, is_legal, is_status
from srb_tui.store.records import RunRecord, TransitionRecord
from srb_tui.store.run_extra import MUTANT_AGENT_PREFIX
from srb_tui.store.run_sql import (
    UPDATABLE_RUN_FIELDS,
    RunFilters,
    encode_extra,
    encode_notes,
    opt_text,
    run_filter_sql,
    run_order_sql,
)


class RunsRepository(Repository):
    """Run rows and their lifecycle (``store.runs``)."""

    async def create_run(
        self,
        *,
        task_id: str,
        task_path: str,
        agent: str,
        model: str | None = None,
        effort: str | None = None,
        budget_sec: float | None = None,
        batch_id: str | None = None,
        notes: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
        run_id: str | None = None,
    ) -> RunRecord:
        """Insert a new ``pending`` run (and its creation transition); return it.

        ``run_id`` defaults to a fresh ``r-YYYYMMDD-HHMMSS-xxxx``; a given id must have that
        shape and be unused.
        """
        need_text(task_id, "create_run task_id")
        need_text(task_path, "create_run task_path")
        need_text(agent, "create_run agent")
        if run_id is not None and not RUN_ID_PATTERN.match(run_id):
            raise StoreError(f"run id {run_id!r} does not look like r-YYYYMMDD-HHMMSS-xxxx")
        params = (
            task_id,
            task_path,
            agent,
            opt_text(model, "create_run model"),
            opt_text(effort, "create_run effort"),
            need_number(budget_sec, "create_run budget_sec"),
            opt_text(batch_id, "create_run batch_id"),
            encode_notes(notes, "create_run notes"),
            encode_extra(extra, "create_run extra"),
        )

        async def job(conn: aiosqlite.Connection) -> RunRecord:
            rid = run_id or new_run_id()
            while await query(conn, "SELECT 1 FROM runs WHERE id = ?", (rid,)):
                if run_id is not None:
                    raise StoreError(f"{self._label}: run {rid} already exists")
                rid = new_run_id()
            now = utc_now()
            await conn.execute(
                "INSERT INTO runs (id, task_id, task_path, agent, model, effort, budget_sec,"
                " batch_id, notes, extra, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                (rid, *params, now, now),
            )
            await conn.execute(
                "INSERT INTO run_transitions (run_id, from_status, to_status, at, reason)"
                " VALUES (?, NULL, 'pending', ?, 'created')",
                (rid, now),
            )
            return await self._run_in(conn, rid)

        return await self._write(job)

    async def transition(
        self,
        run_id: str,
        to_status: str,
        reason: str | None = None,
        *,
        expect: str | None = None,
    ) -> TransitionRecord:
        """Move ``run_id`` to ``to_status`` (row + status in one transaction).

        Raises IllegalTransition when the lifecycle forbids the step, or when ``expect`` is
        given and the run is not in that status (a lost race). Entering ``preparing`` stamps
        ``started_at`` (once); entering a final status stamps ``finished_at``; re-grading a
        scored run clears it.
        """
        if not is_status(to_status):
            raise StoreError(f"run {run_id}: unknown status {to_status!r}")
        maybe_str(reason, f"run {run_id} transition reason")

        async def job(conn: aiosqlite.Connection) -> TransitionRecord:
            rows = await query(conn, "SELECT status FROM runs WHERE id = ?", (run_id,))
            if not rows:
                raise RunNotFound(run_id, self._label)
            current = str(rows[0][0])
            if (expect is not None and current != expect) or not is_legal(current, to_status):
                raise IllegalTransition(run_id, current, to_status)
            now = utc_now()
            sets = ["status = ?", "updated_at = ?"]
            values: list[Any] = [to_status, now]
            if to_status == "preparing":
                sets.append("started_at = coalesce(started_at, ?)")
                values.append(now)
            if to_status in FINAL_STATUSES:
                sets.append("finished_at = ?")
                values.append(now)
            elif current == "scored" and to_status in GRADING_STATUSES:
                sets.append("finished_at = NULL")
            await conn.execute(f"UPDATE runs SET {', '.join(sets)} WHERE id = ?", (*values, run_id))
            inserted = await conn.execute_insert(
                "INSERT INTO run_transitions (run_id, from_status, to_status, at, reason)"
                " VALUES (?, ?, ?, ?, ?)",
                (run_id, current, to_status, now, reason),
            )
            assert inserted is not None
            return TransitionRecord(
                id=int(inserted[0]),
                run_id=run_id,
                from_status=current,
                to_status=to_status,
                at=now,
                reason=reason,
            )

        done = await self._write(job)
        faultpoint.reached(f"status:{to_status}")  # test-only; off unless SRB_FAULT_KILL_AT
        return done

    async def update_run(self, run_id: str, **fields: Any) -> RunRecord:
        """Change whitelisted fields (``UPDATABLE_RUN_FIELDS``) of a run; return the run.

        Status changes go through ``transition``; any other name is a StoreError.
        """
        unknown = sorted(set(fields) - set(UPDATABLE_RUN_FIELDS))
        if unknown:
            raise StoreError(
                f"run {run_id}: update_run cannot change {', '.join(unknown)}"
                + (" (use transition)" if "status" in unknown else "")
            )
        encoded = {
            name: UPDATABLE_RUN_FIELDS[name](value, f"run {run_id} {name}")
            for name, value in fields.items()
        }

        async def job(conn: aiosqlite.Connection) -> RunRecord:
            await self._require_in(conn, run_id)
            if encoded:
                # Column names come from the whitelist above, never from the caller's text.
                sets = ", ".join(f"{name} = ?" for name in encoded)
                await conn.execute(
                    f"UPDATE runs SET {sets}, updated_at = ? WHERE id = ?",
                    (*encoded.values(), utc_now(), run_id),
                )
            return await self._run_in(conn, run_id)

        return await self._write(job)

    async def claim_extra(
        self, run_id: str, key: str, value: Any, *, held: Callable[[Any], bool]
    ) -> Any:
        """Set ``extra[key] = value`` unless the current ``extra[key]`` is still ``held``
        (a predicate, e.g. "its process is alive"); in one write transaction, so of two
        processes claiming at once exactly one wins. Returns None when claimed, else the
        value that holds it."""
        encode = UPDATABLE_RUN_FIELDS["extra"]

        async def job(conn: aiosqlite.Connection) -> Any:
            run = await self._run_in(conn, run_id)
            current = run.extra.get(key)
            if current is not None and held(current):
                return current
            extra = {**run.extra, key: value}
            await conn.execute("UPDATE runs SET extra = ?, updated_at = ? WHERE id = ?",
                               (encode(extra, f"run {run_id} extra"), utc_now(), run_id))
            return None

        return await self._write(job)

    async def merge_extra(
        self,
        run_id: str,
        changes: Mapping[str, Any] | None = None,
        *,
        into: Mapping[str, Mapping[str, Any]] | None = None,
        drop: Iterable[str] = (),
        **fields: Any,
    ) -> RunRecord:
        """Change some keys of ``extra`` in one write transaction, so writers of other keys
        lose nothing: ``extra[k] = v`` for ``changes``, the table at ``extra[k]`` updated
        with ``into[k]``, the ``drop`` keys removed; ``fields`` (as :meth:`update_run`
        takes them) in the same transaction. Returns the run."""
        unknown = sorted(set(fields) - set(UPDATABLE_RUN_FIELDS) | ({"extra"} & set(fields)))
        if unknown:
            raise StoreError(f"run {run_id}: merge_extra cannot change {', '.join(unknown)}")
        encoded = {name: UPDATABLE_RUN_FIELDS[name](value, f"run {run_id} {name}")
                   for name, value in fields.items()}
        dropped = list(drop)
        encode = UPDATABLE_RUN_FIELDS["extra"]

        async def job(conn: aiosqlite.Connection) -> RunRecord:
            run = await self._run_in(conn, run_id)
            extra = {**run.extra, **(changes or {})}
            for key, table in (into or {}).items():
                current = extra.get(key)
                extra[key] = {**(current if isinstance(current, Mapping) else {}), **table}
            for key in dropped:
                extra.pop(key, None)
            values = {**encoded, "extra": encode(extra, f"run {run_id} extra")}
            sets = ", ".join(f"{name} = ?" for name in values)
            await conn.execute(f"UPDATE runs SET {sets}, updated_at = ? WHERE id = ?",
                               (*values.values(), utc_now(), run_id))
            return await self._run_in(conn, run_id)

        return await self._write(job)

    async def add_run_note(self, run_id: str, note: str) -> RunRecord:
        """Append one note to a run's notes (read-modify-write inside the writer)."""
        need_text(note, f"run {run_id} note")

        async def job(conn: aiosqlite.Connection) -> RunRecord:
            run = await self._run_in(conn, run_id)
            await conn.execute(
                "UPDATE runs SET notes = ?, updated_at = ? WHERE id = ?",
                (dump_json([*run.notes, note], "notes"), utc_now(), run_id),
            )
            return await self._run_in(conn, run_id)

        return await self._write(job)

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and everything recorded for it (an imported run's result files
        too, once the rows are gone); False if there was no such run."""

        async def job(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            self._writer.forget_run(run_id)
            return cursor.rowcount > 0

        gone = await self._write(job)
        if gone:
            for folder in (self.path.parent / "imports").glob(f"[!.]*/{run_id}"):
                shutil.rmtree(folder, ignore_errors=True)
        return gone

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or None if there is no such id."""
        rows = await self._rows("SELECT * FROM runs WHERE id = ?", (run_id,))
        return run_from_row(rows[0]) if rows else None

    async def resolve_run_id(self, ref: str) -> str:
        """The id of the run ``ref`` names: the id itself or a unique prefix of one.

        RunNotFound when no run starts with ``ref``; AmbiguousRunId (a RunNotFound)
        naming the candidates when more than one does."""
        from srb_tui.store.errors import AmbiguousRunId

        if not ref:
            raise RunNotFound(ref, self._label)
        rows = await self._rows(
            "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 11",
            (len(ref), ref),
        )
        ids = [str(r[0]) for r in rows]
        if ref in ids:
            return ref
        if not ids:
            raise RunNotFound(ref, self._label)
        if len(ids) > 1:
            raise AmbiguousRunId(ref, self._label, ids)
        return ids[0]

    async def require_run(self, run_id: str) -> RunRecord:
        """The run; RunNotFound (a StoreError naming run and file) if there is none."""
        run = await self.get_run(run_id)
        if run is None:
            raise RunNotFound(run_id, self._label)
        return run

    async def list_runs(
        self,
        *,
        sort: str = "-created_at",
        limit: int | None = 100,
        offset: int = 0,
        **filters: Unpack[RunFilters],
    ) -> list[RunRecord]:
        """Runs matching every given filter (a filter may be one value or several).

        ``text`` is a case-insensitive substring of id, task, agent, model, phase, notes or
        harness error. ``sort`` is a key of ``RUN_SORT_KEYS``, ``-`` prefix for descending.
        """
        where, params = run_filter_sql(**filters)
        order = run_order_sql(sort)
        page = need_int(limit, "limit")
        start = need_int(offset, "offset", optional=False)
        if (page is not None and page < 0) or (start is not None and start < 0):
            raise StoreError("limit and offset must not be negative")
        rows = await self._rows(
            f"SELECT * FROM runs {where} {order} LIMIT ? OFFSET ?",
            (*params, -1 if page is None else page, start),
        )
        return [run_from_row(row) for row in rows]

    async def count_runs(self, **filters: Unpack[RunFilters]) -> int:
        """How many runs ``list_runs`` with the same filters would return without a limit."""
        where, params = run_filter_sql(**filters)
        rows = await self._rows(f"SELECT count(*) FROM runs {where}", params)
        return int(rows[0][0])

    async def live_runs(self) -> list[RunRecord]:
        """Runs not in a final status, oldest first (what re-attach looks at on start-up);
        a strength campaign's mutant runs are its own to resume and are left out."""
        marks = ", ".join("?" for _ in FINAL_STATUSES)
        rows = await self._rows(
            f"SELECT * FROM runs WHERE status NOT IN ({marks}) AND agent NOT LIKE ? "
            "ORDER BY created_at, id", (*sorted(FINAL_STATUSES), MUTANT_AGENT_PREFIX + "%"),
        )
        return [run_from_row(row) for row in rows]

    async def runs_per_node(self) -> dict[str, tuple[int, int]]:
        """Runs by the node they were placed on (the run's extra ``node``; ``""`` for runs
        of the local backend, which record none): ``node -> (all, not finished)``."""
        marks = ", ".join("?" for _ in FINAL_STATUSES)
        rows = await self._rows(
            "SELECT COALESCE(json_extract(extra, '$.node'), ''), count(*),"
            f" sum(CASE WHEN status NOT IN ({marks}) THEN 1 ELSE 0 END)"
            " FROM runs GROUP BY 1", sorted(FINAL_STATUSES))
        return {str(row[0]): (int(row[1]), int(row[2] or 0)) for row in rows}

    async def known_run_ids(self, run_ids: Sequence[str]) -> set[str]:
        """Which of ``run_ids`` are runs of this store (the reaper's ownership test for
        containers that carry no store label)."""
        wanted = sorted(set(run_ids))
        found: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = await self._rows(f"SELECT id FROM runs WHERE id IN ({marks})", chunk)
            found.update(str(row[0]) for row in rows)
        return found

    async def transitions(self, run_id: str) -> list[TransitionRecord]:
        """A run's status history, oldest first."""
        rows = await self._rows(
            "SELECT * FROM run_transitions WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [transition_from_row(row) for row in rows]
