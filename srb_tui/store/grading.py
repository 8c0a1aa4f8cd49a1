"""Grading records: stage envelopes, Stage II modules and checks, Stage I gate votes and
outcomes, Stage III adversary rounds and counterexamples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import utc_now
from srb_tui.store.convert import (
    ADVERSARY_STATUSES,
    COUNTEREXAMPLE_VERDICTS,
    check_params,
    dump_json,
    maybe_str,
    module_params,
    need_choice,
    need_int,
    need_number,
    need_object,
    need_text,
    need_text_list,
    outcome_params,
    vote_params,
)
from srb_tui.store.errors import StoreError

if TYPE_CHECKING:
    from srb_tui.store.grading_records import (
        AdversaryRoundRecord,
        CheckRecord,
        CounterexampleRecord,
        GateOutcomeRecord,
        GateVoteRecord,
        ModuleResultRecord,
        StageResultRecord,
    )

# The record types live in :mod:`.grading_records` and load with the first grading read or
# write (each method imports them): opening a store for a launch does not build them.

STAGE_ORDER_SQL: Final = (
    "CASE stage WHEN 'audit' THEN 0 WHEN 'behavioural' THEN 1 WHEN 'verification' THEN 2"
    " ELSE 3 END, stage"
)


class GradingRepository(Repository):
    """Everything the three grading stages record (``store.grading``)."""

    # --- stage envelopes --------------------------------------------------------------------

    async def record_stage_result(
        self,
        run_id: str,
        stage: str,
        status: str,
        *,
        started_at: str | None = None,
        duration_sec: float | None = None,
        fingerprint: str | None = None,
        result: Any = None,
    ) -> StageResultRecord:
        """Store (or replace) the result of one stage; ``result`` is the envelope JSON."""
        from srb_tui.store import grading_records as rec

        what = f"run {run_id} stage {stage!r}"
        params = (
            run_id,
            need_text(stage, f"{what} name"),
            need_text(status, f"{what} status"),
            need_text(started_at, f"{what} started_at", optional=True),
            need_number(duration_sec, f"{what} duration_sec"),
            need_text(fingerprint, f"{what} fingerprint", optional=True),
            dump_json(result, f"{what} result"),
        )

        async def job(conn: aiosqlite.Connection) -> StageResultRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO stage_results (run_id, stage, status, started_at,"
                " duration_sec, fingerprint, result, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*params, utc_now()),
            )
            rows = await query(
                conn, "SELECT * FROM stage_results WHERE run_id = ? AND stage = ?", (run_id, stage)
            )
            return rec.stage_from_row(rows[0], self.path.parent)

        return await self._write(job)

    async def stage_results(self, run_id: str) -> list[StageResultRecord]:
        """A run's stage results in ladder order (audit, behavioural, verification, others)."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            f"SELECT * FROM stage_results WHERE run_id = ? ORDER BY {STAGE_ORDER_SQL}", (run_id,)
        )
        return [rec.stage_from_row(row, self.path.parent) for row in rows]

    async def clear_stage(self, run_id: str, stage: str) -> None:
        """Forget everything recorded for one stage of a run (before re-grading it)."""
        need_text(stage, f"run {run_id} stage")

        async def job(conn: aiosqlite.Connection) -> None:
            await self._require_in(conn, run_id)
            for table in ("stage_results", "module_results", "checks"):
                await conn.execute(
                    f"DELETE FROM {table} WHERE run_id = ? AND stage = ?", (run_id, stage)
                )
            extra_tables = {
                "audit": ("gate_votes", "gate_outcomes"),
                "verification": ("adversary_rounds", "counterexamples"),
            }.get(stage, ())
            for table in extra_tables:
                await conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

        await self._write(job)

    # --- Stage II -----------------------------------------------------------------------------

    async def record_module_results(
        self, run_id: str, stage: str, modules: Sequence[Mapping[str, Any]]
    ) -> list[ModuleResultRecord]:
        """Replace the module results of ``stage`` with ``modules`` (in this order).

        Each module: ``{id, status: ok|timeout|error|unreached, title?, weight?, rate?,
        passed?, failed?, skipped?, errors?, scored?, duration_sec?, detail?}``.
        """
        from srb_tui.store import grading_records as rec

        need_text(stage, f"run {run_id} stage")
        rows = module_params(run_id, stage, modules)

        async def job(conn: aiosqlite.Connection) -> list[ModuleResultRecord]:
            await self._require_in(conn, run_id)
            await conn.execute(
                "DELETE FROM module_results WHERE run_id = ? AND stage = ?", (run_id, stage)
            )
            await conn.executemany(
                "INSERT INTO module_results (run_id, stage, module_id, position, title, weight,"
                " status, rate, passed, failed, skipped, errors, scored, duration_sec, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            found = await query(
                conn,
                "SELECT * FROM module_results WHERE run_id = ? AND stage = ? ORDER BY position",
                (run_id, stage),
            )
            return [rec.module_from_row(row) for row in found]

        return await self._write(job)

    async def module_results(
        self, run_id: str, stage: str | None = None
    ) -> list[ModuleResultRecord]:
        """Module results of a run (one stage or all), in suite order."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM module_results WHERE run_id = ? AND (? IS NULL OR stage = ?)"
            f" ORDER BY {STAGE_ORDER_SQL}, position",
            (run_id, stage, stage),
        )
        return [rec.module_from_row(row) for row in rows]

    async def record_checks(
        self,
        run_id: str,
        stage: str,
        checks: Sequence[Mapping[str, Any]],
        *,
        module_id: str = "",
    ) -> Sequence[CheckRecord]:
        """Replace the checks of (``stage``, ``module_id``) with ``checks`` (in this order).

        Each check has the envelope shape ``{id, verdict: pass|fail|skip|error, weight?,
        summary?, detail?, evidence?}``; unknown keys are refused.
        """
        from srb_tui.store import grading_records as rec

        need_text(stage, f"run {run_id} stage")
        if not isinstance(module_id, str):
            raise StoreError(f"run {run_id} {stage}: module_id must be text")
        rows = check_params(run_id, stage, module_id, checks)

        async def job(conn: aiosqlite.Connection) -> Sequence[CheckRecord]:
            await self._require_in(conn, run_id)
            await conn.execute(
                "DELETE FROM checks WHERE run_id = ? AND stage = ? AND module_id = ?",
                (run_id, stage, module_id),
            )
            await conn.executemany(
                "INSERT INTO checks (run_id, stage, module_id, position, check_id, verdict,"
                " weight, summary, detail, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            # The records of what was just written, from its parameters (the columns'
            # order), made when read: reading 25,000 rows back would double the write.
            return rec.CheckRows(rows)

        return await self._write(job)

    async def checks(
        self, run_id: str, stage: str | None = None, module_id: str | None = None
    ) -> list[CheckRecord]:
        """Checks of a run, optionally of one stage and/or one module, in recorded order."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM checks WHERE run_id = ? AND (? IS NULL OR stage = ?)"
            " AND (? IS NULL OR module_id = ?)"
            f" ORDER BY {STAGE_ORDER_SQL}, module_id, position",
            (run_id, stage, stage, module_id, module_id),
        )
        return [rec.check_from_row(row) for row in rows]

    # --- Stage I ------------------------------------------------------------------------------

    async def record_gate_votes(
        self, run_id: str, votes: Sequence[Mapping[str, Any]]
    ) -> list[GateVoteRecord]:
        """Insert or replace votes ``{gate_id, sample, verdict: pass|fail|error, confidence?,
        reasoning?, evidence?, downgraded?, extra?}``; return the stored votes given."""
        from srb_tui.store import grading_records as rec

        rows = vote_params(run_id, votes)
        keys = {(row[1], row[2]) for row in rows}

        async def job(conn: aiosqlite.Connection) -> list[GateVoteRecord]:
            await self._require_in(conn, run_id)
            await conn.executemany(
                "INSERT OR REPLACE INTO gate_votes (run_id, gate_id, sample, verdict, confidence,"
                " reasoning, evidence, downgraded, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            found = await query(
                conn,
                "SELECT * FROM gate_votes WHERE run_id = ? ORDER BY gate_id, sample",
                (run_id,),
            )
            return [rec.vote_from_row(r) for r in found if (r["gate_id"], r["sample"]) in keys]

        return await self._write(job)

    async def gate_votes(self, run_id: str) -> list[GateVoteRecord]:
        """Every gate vote of a run, by gate then sample."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM gate_votes WHERE run_id = ? ORDER BY gate_id, sample", (run_id,)
        )
        return [rec.vote_from_row(row) for row in rows]

    async def record_gate_outcomes(
        self, run_id: str, outcomes: Sequence[Mapping[str, Any]]
    ) -> list[GateOutcomeRecord]:
        """Insert or replace gate outcomes ``{gate_id, verdict: pass|fail|error, title?,
        required?, votes_pass?, votes_fail?, votes_error?, tie?, extra?}``."""
        from srb_tui.store import grading_records as rec

        rows = outcome_params(run_id, outcomes)
        keys = {row[1] for row in rows}

        async def job(conn: aiosqlite.Connection) -> list[GateOutcomeRecord]:
            await self._require_in(conn, run_id)
            await conn.executemany(
                "INSERT OR REPLACE INTO gate_outcomes (run_id, gate_id, title, required, verdict,"
                " votes_pass, votes_fail, votes_error, tie, extra)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            found = await query(
                conn, "SELECT * FROM gate_outcomes WHERE run_id = ? ORDER BY gate_id", (run_id,)
            )
            return [rec.outcome_from_row(r) for r in found if r["gate_id"] in keys]

        return await self._write(job)

    async def gate_outcomes(self, run_id: str) -> list[GateOutcomeRecord]:
        """Every gate outcome of a run, by gate id."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM gate_outcomes WHERE run_id = ? ORDER BY gate_id", (run_id,)
        )
        return [rec.outcome_from_row(row) for row in rows]

    # --- Stage III ----------------------------------------------------------------------------

    async def record_adversary_round(
        self,
        run_id: str,
        adversary_id: str,
        *,
        status: str,
        model: str | None = None,
        driver: str | None = None,
        focus: str | None = None,
        started_at: str | None = None,
        duration_sec: float | None = None,
        candidates: int | None = None,
        notes: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> AdversaryRoundRecord:
        """Insert or replace one adversary lane (status pending|running|broken|survived|error)."""
        from srb_tui.store import grading_records as rec

        what = f"run {run_id} adversary {adversary_id!r}"
        params = (
            run_id,
            need_text(adversary_id, f"{what} id"),
            need_text(model, f"{what} model", optional=True),
            need_text(driver, f"{what} driver", optional=True),
            maybe_str(focus, f"{what} focus"),
            need_choice(status, ADVERSARY_STATUSES, f"{what} status"),
            need_text(started_at, f"{what} started_at", optional=True),
            need_number(duration_sec, f"{what} duration_sec"),
            need_int(candidates, f"{what} candidates"),
            dump_json(need_text_list(notes, f"{what} notes"), f"{what} notes"),
            dump_json(need_object(extra, f"{what} extra"), f"{what} extra"),
        )

        async def job(conn: aiosqlite.Connection) -> AdversaryRoundRecord:
            await self._require_in(conn, run_id)
            await conn.execute(
                "INSERT OR REPLACE INTO adversary_rounds (run_id, adversary_id, model, driver,"
                " focus, status, started_at, duration_sec, candidates, notes, extra)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                params,
            )
            rows = await query(
                conn,
                "SELECT * FROM adversary_rounds WHERE run_id = ? AND adversary_id = ?",
                (run_id, adversary_id),
            )
            return rec.adversary_from_row(rows[0])

        return await self._write(job)

    async def adversary_rounds(self, run_id: str) -> list[AdversaryRoundRecord]:
        """Every adversary lane of a run, by adversary id."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM adversary_rounds WHERE run_id = ? ORDER BY adversary_id", (run_id,)
        )
        return [rec.adversary_from_row(row) for row in rows]

    async def record_counterexample(
        self,
        run_id: str,
        adversary_id: str,
        *,
        code: str,
        verdict: str,
        reason: str | None = None,
        output_a: Any = None,
        output_b: Any = None,
        exit_a: int | None = None,
        exit_b: int | None = None,
        duration_a: float | None = None,
        duration_b: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> CounterexampleRecord:
        """Add one adjudicated candidate (verdict upheld|nondeterministic|invalid|rejected);
        return it."""
        from srb_tui.store import grading_records as rec

        what = f"run {run_id} counterexample of {adversary_id!r}"
        if not isinstance(code, str):
            raise StoreError(f"{what}: code must be text")
        params = (
            run_id,
            need_text(adversary_id, f"{what} adversary id"),
            code,
            need_choice(verdict, COUNTEREXAMPLE_VERDICTS, f"{what} verdict"),
            maybe_str(reason, f"{what} reason"),
            dump_json(output_a, f"{what} output_a"),
            dump_json(output_b, f"{what} output_b"),
            need_int(exit_a, f"{what} exit_a"),
            need_int(exit_b, f"{what} exit_b"),
            need_number(duration_a, f"{what} duration_a"),
            need_number(duration_b, f"{what} duration_b"),
            dump_json(need_object(extra, f"{what} extra"), f"{what} extra"),
        )

        async def job(conn: aiosqlite.Connection) -> CounterexampleRecord:
            await self._require_in(conn, run_id)
            inserted = await conn.execute_insert(
                "INSERT INTO counterexamples (run_id, adversary_id, code, verdict, reason,"
                " output_a, output_b, exit_a, exit_b, duration_a, duration_b, extra, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*params, utc_now()),
            )
            assert inserted is not None
            rows = await query(
                conn, "SELECT * FROM counterexamples WHERE id = ?", (int(inserted[0]),)
            )
            return rec.counterexample_from_row(rows[0])

        return await self._write(job)

    async def counterexamples(
        self, run_id: str, adversary_id: str | None = None
    ) -> list[CounterexampleRecord]:
        """Counterexamples of a run (optionally one adversary's), in the order handed in."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows(
            "SELECT * FROM counterexamples WHERE run_id = ? AND (? IS NULL OR adversary_id = ?)"
            " ORDER BY id",
            (run_id, adversary_id, adversary_id),
        )
        return [rec.counterexample_from_row(row) for row in rows]

    async def get_counterexample(self, counterexample_id: int) -> CounterexampleRecord | None:
        """One counterexample by its id, or None."""
        from srb_tui.store import grading_records as rec

        rows = await self._rows("SELECT * FROM counterexamples WHERE id = ?", (counterexample_id,))
        return rec.counterexample_from_row(rows[0]) if rows else None
