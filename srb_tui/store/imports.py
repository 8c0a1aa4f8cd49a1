"""Runs imported from a published-harness job directory, stored beside srb's own.

``import_runs`` writes every trial in one transaction: the run row (status ``scored``, agent
``imported:…``), its transitions, the score event the reports read, Stage II module rows,
Stage III rounds, Stage I's gate outcomes with their vote tallies (the same rows a native
audit writes, so the Stage I consistency table counts both alike), the raw stage results,
and an ``imported_runs`` row with the source folder, agent cost and telemetry. A source
folder already imported is refused (naming it), and then nothing of the batch is stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aiosqlite

from srb_tui.store.base import StoreBase, query
from srb_tui.store.clock import new_run_id, utc_now
from srb_tui.store.convert import dump_json, outcome_params
from srb_tui.store.errors import StoreError

_PATH = ("pending", "preparing", "agent", "collecting", "audit", "scored")


class ImportsMixin(StoreBase):
    """The imported_runs table and the rows an import writes."""

    async def import_runs(self, trials: Sequence[Mapping[str, Any]]) -> list[str]:
        """Store every trial (all or none); return the new run ids in order."""
        now = utc_now()

        async def job(conn: aiosqlite.Connection) -> list[str]:
            ids: list[str] = []
            for t in trials:
                source = str(t["source_dir"])
                known = await query(
                    conn, "SELECT run_id FROM imported_runs WHERE source_dir = ?", (source,)
                )
                if known:
                    raise StoreError(
                        f"{source}: already imported as run {known[0][0]}; nothing imported"
                    )
                rid = new_run_id()
                while await query(conn, "SELECT 1 FROM runs WHERE id = ?", (rid,)) or rid in ids:
                    rid = new_run_id()
                await conn.execute(
                    "INSERT INTO runs (id, task_id, task_path, agent, model, effort, status,"
                    " created_at, updated_at, started_at, finished_at, valid, score, max_score,"
                    " blocked_by, harness_error, notes, extra) VALUES (?, ?, ?, ?, ?, ?,"
                    " 'scored', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rid, t["task"], source, t["agent"], t["model"], t["effort"], now, now, now,
                     now, int(bool(t["valid"])), t["score"], t["max_score"], t["blocked_by"],
                     t["harness_error"], dump_json([f"imported from {source}"], "notes"),
                     dump_json({"imported": {"source_dir": source}}, "extra")),
                )
                previous: str | None = None
                for status in _PATH:
                    await conn.execute(
                        "INSERT INTO run_transitions (run_id, from_status, to_status, at, reason)"
                        " VALUES (?, ?, ?, ?, 'imported')", (rid, previous, status, now),
                    )
                    previous = status
                for stage, result in dict(t["stage_results"]).items():
                    stage_status = result.get("status") if isinstance(result, Mapping) else None
                    await conn.execute(
                        "INSERT INTO stage_results (run_id, stage, status, result, recorded_at)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (rid, stage, str(stage_status or "ok"),
                         dump_json(result, f"{source} {stage}"), now),
                    )
                for position, m in enumerate(t["modules"]):
                    await conn.execute(
                        "INSERT INTO module_results (run_id, stage, module_id, position, weight,"
                        " status, rate, passed, failed, scored) VALUES (?, 'behavioural', ?, ?,"
                        " ?, ?, ?, ?, ?, ?)",
                        (rid, m["id"], position, m["weight"], m["status"], m["rate"],
                         m["passed"], max(0, m["scored"] - m["passed"]), m["scored"]),
                    )
                gate_rows = outcome_params(rid, t.get("gates") or [])
                if gate_rows:
                    await conn.executemany(
                        "INSERT INTO gate_outcomes (run_id, gate_id, title, required, verdict,"
                        " votes_pass, votes_fail, votes_error, tie, extra)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", gate_rows,
                    )
                for rd in t["rounds"]:
                    await conn.execute(
                        "INSERT INTO adversary_rounds (run_id, adversary_id, model, status,"
                        " duration_sec, extra) VALUES (?, ?, ?, ?, ?, ?)",
                        (rid, rd["adversary"], rd["model"], rd["status"], rd["duration_sec"],
                         dump_json({"effort": rd["effort"]} if rd.get("effort") else {},
                                   f"{source} round")),
                    )
                await conn.execute(
                    "INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, 'score', ?)",
                    (rid, now, dump_json(t["envelope"], f"{source} score")),
                )
                await conn.execute(
                    "INSERT INTO imported_runs (run_id, source_dir, job, category, cost_usd,"
                    " imported_at, telemetry) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (rid, source, t.get("job"), t.get("category"), t.get("cost_usd"), now,
                     dump_json(t.get("telemetry"), f"{source} telemetry")),
                )
                ids.append(rid)
            return ids

        return await self._write(job)
