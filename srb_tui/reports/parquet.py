"""``srb export --parquet``: the selected runs and their grading records as Parquet tables.

One file per table — ``runs``, ``stage_results``, ``module_results``, ``checks``,
``gate_votes``, ``adversary_rounds``, ``counterexamples`` — and a ``README.md`` naming every
column with its type. Each table's columns are the store record's fields (JSON values —
documents, lists, objects — as JSON text); ``runs`` adds what the reports derive (the
configuration, Table 2's outcome, the fixed-check counts, spend) and the provenance, so
``SELECT config, outcome, count(*) FROM 'runs.parquet' GROUP BY ALL`` is Table 2.
Written with pyarrow (the ``stats`` extra); pandas, polars and DuckDB read them as they are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from srb_tui.reports.records import ReportRun
from srb_tui.store import Store
from srb_tui.store.grading_records import (
    AdversaryRoundRecord,
    CheckRecord,
    CounterexampleRecord,
    GateVoteRecord,
    ModuleResultRecord,
    StageResultRecord,
)
from srb_tui.store.provenance import Provenance
from srb_tui.store.records import RunRecord

CHILDREN: dict[str, tuple[type, str]] = {
    "stage_results": (StageResultRecord, "one row per run and grading stage: the envelope"),
    "module_results": (ModuleResultRecord, "one row per Stage II module of a run"),
    "checks": (CheckRecord, "one row per check of a stage (module_id '' outside modules)"),
    "gate_votes": (GateVoteRecord, "one row per Stage I reviewer sample and gate"),
    "adversary_rounds": (AdversaryRoundRecord, "one row per Stage III adversary lane"),
    "counterexamples": (CounterexampleRecord, "one row per candidate an adversary handed in"),
}
# Columns the reports derive for each run (name, type, meaning).
DERIVED: tuple[tuple[str, str, str], ...] = (
    ("config", "str", "the configuration label (campaign's, else agent · model · effort)"),
    ("outcome", "str", "Table 2's outcome: audit_fail, blindness, behavioural_fail, "
                       "counterexample, accepted; or invalid, cancelled, unfinished"),
    ("counted", "bool", "valid and finished (the runs every table counts)"),
    ("category", "str", "the task's debt class"),
    ("checks_passed", "int | None", "fixed checks passed (Stage II)"),
    ("checks_total", "int | None", "fixed checks in the denominator"),
    ("agent_cost_usd", "float | None", "the agent's spend (gateway ledger)"),
    ("imported", "bool", "an imported published trial"),
    ("source_commit", "str | None", "srb's source commit that ran it (provenance)"),
    ("task_digest", "str | None", "the task directory's digest as loaded (provenance)"),
    ("client", "str | None", "the agent client's name (provenance)"),
    ("client_version", "str | None", "the agent client's version (provenance)"),
    ("node", "str | None", "the node it ran on (provenance)"),
    ("image_digests", "json", "role → registry digest (else image id) of every image the "
                              "run used (provenance)"),
    ("provenance", "json", "the whole provenance record with its stage stamps"),
)
_RUN_SKIP = {"extra"}


def _pa() -> Any:
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError(f"Parquet needs pyarrow: pip install -e '.[stats]' ({exc})") from exc
    return pa


def _arrow_type(pa: Any, hint: str) -> Any:
    base = hint.replace(" | None", "").strip()
    return {"str": pa.string(), "int": pa.int64(), "float": pa.float64(),
            "bool": pa.bool_()}.get(base, pa.string())


def _is_json(hint: str) -> bool:
    return hint.replace(" | None", "").strip() not in ("str", "int", "float", "bool")


def _columns(record: type) -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in fields(record)]


def run_columns() -> list[tuple[str, str]]:
    own = [(n, t) for n, t in _columns(RunRecord) if n not in _RUN_SKIP]
    return own + [(n, t) for n, t, _m in DERIVED]


def _cell(value: Any, hint: str) -> Any:
    if value is None:
        return None
    if _is_json(hint):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _run_row(run: RunRecord, rec: ReportRun | None) -> dict[str, Any]:
    doc = run.to_json()
    prov = Provenance.read(run.extra)
    row = {n: doc[n] for n, _t in _columns(RunRecord) if n not in _RUN_SKIP}
    row.update({
        "config": rec.config if rec else None, "outcome": rec.outcome if rec else None,
        "counted": rec.counted if rec else False, "category": rec.category if rec else None,
        "checks_passed": rec.checks_passed if rec else None,
        "checks_total": rec.checks_total if rec else None,
        "agent_cost_usd": rec.cost if rec else None, "imported": bool(rec and rec.imported),
        "source_commit": prov.source_commit if prov else None,
        "task_digest": prov.task_digest if prov else None,
        "client": prov.client if prov else None,
        "client_version": prov.client_version if prov else None,
        "node": prov.node if prov else None,
        "image_digests": prov.image_digests if prov else None,
        "provenance": prov.full_json() if prov else None,
    })
    return row


def _write(pa: Any, path: Path, columns: list[tuple[str, str]],
           rows: list[dict[str, Any]]) -> int:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    schema = pa.schema([(n, _arrow_type(pa, t)) for n, t in columns])
    data = {n: [_cell(r.get(n), t) for r in rows] for n, t in columns}
    pq.write_table(pa.Table.from_pydict(data, schema=schema), path)
    return len(rows)


async def write_parquet(store: Store, runs: Sequence[ReportRun], out: Path) -> dict[str, int]:
    """Write every table for ``runs`` into ``out`` (created); rows written per table."""
    pa = _pa()
    out.mkdir(parents=True, exist_ok=True)
    run_rows: list[dict[str, Any]] = []
    children: dict[str, list[dict[str, Any]]] = {name: [] for name in CHILDREN}
    for rec in runs:
        detail = await store.run_detail(rec.run_id, events_limit=0)
        run_rows.append(_run_row(detail.run, rec))
        for name, attr in (("stage_results", "stage_results"),
                           ("module_results", "module_results"), ("checks", "checks"),
                           ("gate_votes", "gate_votes"),
                           ("adversary_rounds", "adversary_rounds"),
                           ("counterexamples", "counterexamples")):
            children[name] += [r.to_json() for r in getattr(detail, attr)]
    written = {"runs": _write(pa, out / "runs.parquet", run_columns(), run_rows)}
    for name, (record, _about) in CHILDREN.items():
        written[name] = _write(pa, out / f"{name}.parquet", _columns(record), children[name])
    (out / "README.md").write_text(readme(written), encoding="utf-8")
    return written


def readme(written: dict[str, int]) -> str:
    """The README of the exported tables: each table, its rows and its columns."""
    derived = {n: m for n, _t, m in DERIVED}
    lines = ["# srb export: Parquet tables", "",
             "One file per table; every table but `runs` has `run_id` to join on. Columns "
             "typed `json` hold JSON text (parse with `json_extract` in DuckDB, "
             "`json.loads` in Python). Table 2 is "
             "`SELECT config, outcome, count(*) FROM 'runs.parquet' GROUP BY ALL`.", ""]
    tables = [("runs", run_columns(), "one row per run")] + [
        (name, _columns(rec), about) for name, (rec, about) in CHILDREN.items()]
    for name, columns, about in tables:
        lines += [f"## {name}.parquet ({written.get(name, 0)} rows)", "", about + ".", "",
                  "| column | type | meaning |", "|---|---|---|"]
        for col, hint in columns:
            kind = "json" if _is_json(hint) else hint.replace(" | None", " (nullable)")
            lines.append(f"| `{col}` | {kind} | {derived.get(col, '')} |")
        lines.append("")
    return "\n".join(lines)
