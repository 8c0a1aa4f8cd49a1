"""What the reports read, in one snapshot and a handful of queries, whatever the run count.

``report_source`` selects runs by the Runs-screen filters or by campaign and returns plain
rows: the run row, the latest ``score`` event payload (the ladder's verdict record), the
Stage I gate tallies, the Stage III rounds, campaign configuration labels, imported-run
provenance, human labels, and each run's agent spend from the gateway's ledger when that
table exists. ``missed_checks`` reads the failed check ids of a few runs (Figure 5a).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.campaigns import chunks
from srb_tui.store.run_sql import ReportFilters, run_filter_sql

_RUN_COLUMNS = (
    "id, task_id, task_path, agent, model, effort, status, valid, score, max_score, blocked_by,"
    " created_at, started_at, finished_at, batch_id,"
    " coalesce(json_extract(extra, '$.provenance.grader_fingerprint'), grader_fingerprint)"
    " AS grader, json_extract(extra, '$.provenance.task_digest') AS task_digest"
)


@dataclass
class ReportSource:
    """Raw rows for the reports (see the module docstring); keyed by run id."""

    runs: list[sqlite3.Row] = field(default_factory=list)
    # run -> (audit_gate, behavioural complete, verification ran, survived, models total),
    # from the latest ``score`` event (the ladder's verdict record)
    scores: dict[str, tuple[str, bool | None, bool, int | None, int]] = field(
        default_factory=dict
    )
    # run -> [(module id, passed, scored)] for weighted modules of that score record
    modules: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    # run -> (verdicts, unanimous, tied, majority_only) over pass/fail gate verdicts
    gates: dict[str, tuple[int, int, int, bool]] = field(default_factory=dict)
    # run -> places where the submission addressed its judge (issue 37)
    addressed: dict[str, int] = field(default_factory=dict)
    # run -> [(adversary, model, status, duration_sec, effort)]
    rounds: dict[str, list[tuple[str, str, str, float | None, str]]] = field(
        default_factory=dict)
    configs: dict[str, str] = field(default_factory=dict)
    imported: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)
    # run -> {gateway role: USD} for every priced role (agent, reviewer, adversary)
    role_costs: dict[str, dict[str, float]] = field(default_factory=dict)
    has_ledger: bool = False
    campaign_configs: list[str] = field(default_factory=list)


async def _tables(conn: aiosqlite.Connection) -> set[str]:
    rows = await query(conn, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return {str(r[0]) for r in rows}


async def spend_by_role(
    conn: aiosqlite.Connection, selection: str, params: Sequence[Any]
) -> dict[str, dict[str, float]]:
    """Spend per run and gateway role (USD) from the ledger: the agent's, the Stage I
    reviewer's and the Stage III adversaries' apart (unpriced rows left out)."""
    rows = await query(
        conn, "SELECT run_id, role, sum(cost_usd) FROM ledger WHERE cost_usd IS NOT NULL"
        f" AND run_id IN ({selection}) GROUP BY run_id, role", params,
    )
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(str(r[0]), {})[str(r[1])] = float(r[2])
    return out


def _sql_text(value: Any) -> str:
    """``str()`` of what SQLite's ``json_extract`` gives for a decoded JSON value."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _sql_int(value: Any) -> int:
    """``int(coalesce(json_extract(...), 0))`` of a decoded JSON value."""
    return int(value or 0) if not isinstance(value, dict | list) else 0


def _weighted_modules(text: Any) -> list[tuple[str, int, int]]:
    """(id, passed, scored) of each module of a score record whose weight is not 0 or
    less (a missing weight counts as 1; SQLite orders text above every number)."""
    if not isinstance(text, str):
        return []
    try:
        items = json.loads(text)
    except ValueError:
        return []
    if isinstance(items, dict):
        items = list(items.values())
    if not isinstance(items, list):
        return []
    out: list[tuple[str, int, int]] = []
    for m in items:
        if type(m) is not dict:
            out.append(("None", 0, 0))
            continue
        weight = m.get("weight")
        if weight is None or (weight > 0 if type(weight) in _NUMBERS else
                              isinstance(weight, str | dict | list)):
            mid, passed, scored = m.get("id"), m.get("passed"), m.get("scored")
            out.append((mid if type(mid) is str else _sql_text(mid),
                        passed if type(passed) is int else _sql_int(passed),
                        scored if type(scored) is int else _sql_int(scored)))
    return out


_NUMBERS = (int, float, bool)


class ReportRowsRepository(Repository):
    """The reports' one-pass reader (``store.reports``)."""

    async def report_source(
        self,
        *,
        campaign: str | None = None,
        **filters: Unpack[ReportFilters],
    ) -> ReportSource:
        """Rows for every run of ``campaign`` (its cells' current runs) or matching filters."""
        if campaign is not None:
            where = "WHERE id IN (SELECT run_id FROM campaign_cells WHERE campaign_id = ?)"
            params: list[Any] = [campaign]
            extra_where, extra_params = run_filter_sql(**filters)
            if extra_where:
                where += " AND " + extra_where.removeprefix("WHERE ")
                params += extra_params
        else:
            where, params = run_filter_sql(**filters)
        selection = f"SELECT id FROM runs {where}"
        src = ReportSource()
        async with self._readers.snapshot() as conn:
            tables = await _tables(conn)
            src.runs = list(
                await query(conn, f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY id", params)
            )
            last = (
                "SELECT e.run_id AS run_id, e.payload AS payload FROM events e JOIN"
                " (SELECT run_id, max(seq) AS seq FROM events WHERE kind = 'score'"
                f" AND run_id IN ({selection}) GROUP BY run_id) l ON e.seq = l.seq"
            )
            # the modules as JSON text, decoded here: json_each with four json_extract a
            # module cost ~60 ms over 7,280 modules, json.loads of 520 arrays a few
            for r in await query(
                conn,
                "SELECT run_id, json_extract(payload, '$.audit_gate'),"
                " json_extract(payload, '$.behavioural.complete'),"
                " json_extract(payload, '$.verification.ran'),"
                " json_extract(payload, '$.verification.models_survived'),"
                " json_extract(payload, '$.verification.models_total'),"
                f" json_extract(payload, '$.behavioural.modules') FROM ({last})",
                params,
            ):
                src.scores[str(r[0])] = (
                    r[1] if isinstance(r[1], str) else "",
                    None if r[2] is None else bool(r[2]),
                    bool(r[3]),
                    None if r[4] is None else int(r[4]),
                    int(r[5] or 6),
                )
                weighted = _weighted_modules(r[6])
                if weighted:
                    src.modules[str(r[0])] = weighted
            for r in await query(
                conn,
                "SELECT run_id, count(*), sum(votes_pass = 0 OR votes_fail = 0),"
                " sum(votes_pass = votes_fail AND votes_pass > 0),"
                " max(required AND verdict = 'pass' AND votes_fail > 0)"
                " FROM gate_outcomes WHERE verdict IN ('pass', 'fail')"
                f" AND run_id IN ({selection}) GROUP BY run_id",
                params,
            ):
                src.gates[str(r[0])] = (int(r[1]), int(r[2]), int(r[3]), bool(r[4]))
            for r in await query(
                conn,
                "SELECT run_id, count(*) FROM checks WHERE stage = 'audit'"
                f" AND module_id = 'judge-addressed' AND run_id IN ({selection}) GROUP BY run_id",
                params,
            ):
                src.addressed[str(r[0])] = int(r[1])
            for r in await query(
                conn,
                "SELECT run_id, adversary_id, coalesce(model, ''), status, duration_sec,"
                " coalesce(json_extract(extra, '$.effort'), '')"
                f" FROM adversary_rounds WHERE run_id IN ({selection})"
                " ORDER BY run_id, adversary_id",
                params,
            ):
                src.rounds.setdefault(str(r[0]), []).append(
                    (r[1], r[2], r[3], r[4], str(r[5] or "")))
            if "campaign_cells" in tables:
                cell_sql = "SELECT run_id, config FROM campaign_cells WHERE run_id IN" \
                    f" ({selection})"
                cell_params = list(params)
                if campaign is not None:
                    cell_sql += " AND campaign_id = ?"
                    cell_params.append(campaign)
                for r in await query(conn, cell_sql, cell_params):
                    src.configs[str(r[0])] = str(r[1])
                if campaign is not None:
                    src.campaign_configs = [
                        str(r[0]) for r in await query(
                            conn, "SELECT label FROM campaign_configs WHERE campaign_id = ?"
                            " ORDER BY position", (campaign,),
                        )
                    ]
                for r in await query(
                    conn, "SELECT run_id, category, cost_usd, job, source_dir FROM imported_runs"
                    f" WHERE run_id IN ({selection})", params,
                ):
                    src.imported[str(r[0])] = dict(r)
                for r in await query(
                    conn, "SELECT run_id, annotator, genuine FROM human_labels"
                    f" WHERE run_id IN ({selection}) ORDER BY run_id, annotator", params,
                ):
                    src.labels.setdefault(str(r[0]), []).append((str(r[1]), bool(r[2])))
            if "ledger" in tables and await query(conn, "SELECT 1 FROM ledger LIMIT 1", ()):
                src.has_ledger = True
                src.role_costs = await spend_by_role(conn, selection, params)
                src.costs = {rid: by_role["agent"] for rid, by_role in src.role_costs.items()
                             if "agent" in by_role}
        return src

    async def missed_checks(self, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """``module/check`` ids of the scored Stage II checks each run did not pass."""
        found: dict[str, list[str]] = {}
        for part in chunks(list(run_ids)):
            marks = ", ".join("?" for _ in part)
            rows: list[sqlite3.Row] = await self._rows(
                "SELECT run_id, module_id, check_id FROM checks WHERE stage = 'behavioural'"
                f" AND verdict <> 'pass' AND (weight IS NULL OR weight > 0) AND run_id IN ({marks})"
                " ORDER BY run_id, module_id, position", part,
            )
            for r in rows:
                module = str(r[1])
                found.setdefault(str(r[0]), []).append(
                    f"{module}/{r[2]}" if module else str(r[2])
                )
        return found
