"""The paper's count tables as pure functions over ``ReportRun`` lists.

Table 2 (funnel per configuration), Table 3 (leaderboard), Table 4 (by debt class),
Table 5 (conditional pass rates per stage and class), Table 9 (per task). Every table is
over the *counted* runs (valid and finished); invalid runs are excluded from every other
column and shown in a column of their own, cancelled and unfinished runs likewise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from srb_tui.reports.config_order import config_order
from srb_tui.reports.model import Cell, Column, Table, mean, pct
from srb_tui.reports.records import ReportRun

OUTCOME_TITLES = {
    "audit_fail": "Stage I fail · fixed checks also fail",
    "blindness": "Stage I fail · fixed checks pass (blindness)",
    "behavioural_fail": "Stage II · fixed checks fail",
    "counterexample": "Stage III · counterexample found",
    "accepted": "Accepted",
}


def group(runs: Iterable[ReportRun], key: Callable[[ReportRun], str],
          order: Sequence[str] = ()) -> dict[str, list[ReportRun]]:
    """Runs by ``key``; groups named in ``order`` first (even if empty), the rest sorted."""
    out: dict[str, list[ReportRun]] = {name: [] for name in order}
    rest: dict[str, list[ReportRun]] = {}
    for run in runs:
        name = key(run)
        (out if name in out else rest).setdefault(name, []).append(run)
    for name in sorted(rest):
        out[name] = rest[name]
    return out


def _first(runs: list[ReportRun], attr: str) -> str:
    values = sorted({getattr(r, attr) for r in runs if getattr(r, attr)})
    return values[0] if len(values) == 1 else ("mixed" if values else "")


CONFIG_COLUMNS = (
    Column("config", "Configuration", "text"),
    Column("harness", "Harness", "text"),
    Column("model", "Model", "text"),
    Column("effort", "Effort", "text"),
)
"""The head of a per-configuration row: its label, then what it ran."""


def _config_cells(name: str, members: list[ReportRun]) -> list[Cell]:
    """A configuration's cells under :data:`CONFIG_COLUMNS`."""
    return [name, _first(members, "harness"), _first(members, "model"), _first(members, "effort")]


def _mean_score(members: Sequence[ReportRun]) -> float | None:
    """The score of a group: the mean of (4) over its counted runs."""
    return mean([float(r.score or 0.0) for r in members if r.counted])


def _excluded(runs: list[ReportRun]) -> tuple[int, int]:
    invalid = sum(r.outcome == "invalid" for r in runs)
    other = sum(r.outcome in ("cancelled", "unfinished") for r in runs)
    return invalid, other


def funnel_table(runs: Sequence[ReportRun], order: Sequence[str] = ()) -> Table:
    """Table 2: where each run stops, per configuration; the five columns sum to Runs."""
    columns = [
        *CONFIG_COLUMNS,
        *(Column(key, title) for key, title in OUTCOME_TITLES.items()),
        Column("runs", "Runs"),
        Column("invalid", "Invalid (excluded)"),
        Column("other", "Cancelled/unfinished"),
    ]
    table = Table("table2", "Table 2 · the three-stage funnel per configuration", columns,
                  bar="accepted")
    totals = [0] * (len(OUTCOME_TITLES) + 3)
    for name, members in group(runs, lambda r: r.config, config_order(runs, order)).items():
        counts = [sum(r.outcome == key for r in members) for key in OUTCOME_TITLES]
        invalid, other = _excluded(members)
        values = [*counts, sum(counts), invalid, other]
        totals = [a + b for a, b in zip(totals, values, strict=True)]
        table.rows.append([*_config_cells(name, members), *values])
    table.total = ["All", "", "", "", *totals]
    table.notes.append("Outcome columns are mutually exclusive and sum to Runs (valid runs); "
                       "invalid runs are excluded and counted in their own column.")
    return table


def leaderboard_table(runs: Sequence[ReportRun], order: Sequence[str] = (),
                      has_ledger: bool = True) -> Table:
    """Table 3: behavioural pass rate (mean fraction of fixed checks passed), score, cost."""
    columns = [
        *CONFIG_COLUMNS,
        Column("runs", "Runs"),
        Column("behavioural", "Behavioural pass %", "pct"),
        Column("score", "Score (of 100)", "score"),
        Column("cost", "Agent USD/task", "usd"),
        Column("reviewer_cost", "Reviewer USD/task", "usd"),
        Column("verifier_cost", "Verifier USD/task", "usd"),
        Column("accepted", "Accepted"),
    ]
    table = Table("table3", "Table 3 · leaderboard", columns, bar="score")
    for name, members in group(runs, lambda r: r.config, config_order(runs, order)).items():
        counted = [r for r in members if r.counted]
        fractions = [r.fraction for r in counted if r.fraction is not None]
        costs = [r.cost for r in counted if r.cost is not None]
        reviewer = [r.reviewer_cost for r in counted if r.reviewer_cost is not None]
        verifier = [r.verifier_cost for r in counted if r.verifier_cost is not None]
        table.rows.append([
            *_config_cells(name, members), len(counted),
            None if not fractions else round(100 * sum(fractions) / len(fractions), 6),
            _mean_score(members),
            mean(costs),
            mean(reviewer),
            mean(verifier),
            sum(r.outcome == "accepted" for r in counted),
        ])
    table.notes.append("Behavioural pass % is the row mean of each run's share of fixed checks "
                       "passed (perfection not required); score is the mean of (4) over valid "
                       "runs.")
    if not has_ledger and not any(r.cost is not None for r in runs):
        table.notes.append("Cost: no ledger rows in this store (—).")
    else:
        table.notes.append("Cost: mean spend per run from the gateway ledger, by role: the "
                           "agent's (imported runs: their telemetry), the Stage I reviewer's "
                           "and the Stage III verifiers' apart, each over the runs where that "
                           "role spent anything priced; — where nothing was priced.")
    return table


def _class_counts(members: list[ReportRun]) -> dict[str, int]:
    counted = [r for r in members if r.counted]
    return {
        "runs": len(counted),
        "migrated": sum(r.migrated for r in counted),
        "all_pass": sum(r.all_pass for r in counted),
        "entered": sum(r.entered_stage3 for r in counted),
        "broken": sum(r.outcome == "counterexample" for r in counted),
        "accepted": sum(r.outcome == "accepted" for r in counted),
        "blindness": sum(r.outcome == "blindness" for r in counted),
    }


def class_table(runs: Sequence[ReportRun]) -> Table:
    """Table 4: per debt class (task.toml [metadata].category)."""
    columns = [
        Column("class", "Class", "text"),
        Column("tasks", "Tasks"),
        Column("runs", "Runs"),
        Column("migrated", "Migrated n"),
        Column("migrated_pct", "Migrated %", "pct"),
        Column("all_pass", "All tests pass n"),
        Column("accepted", "Accepted n"),
        Column("broken_pct", "Broken %", "pct"),
        Column("blindness", "Blindness n"),
        Column("score", "Score", "score"),
        Column("invalid", "Invalid (excluded)"),
    ]
    table = Table("table4", "Table 4 · by debt class", columns, bar="score")
    for name, members in group(runs, lambda r: r.category).items():
        c = _class_counts(members)
        table.rows.append([
            name, len({r.task for r in members}), c["runs"], c["migrated"],
            pct(c["migrated"], c["runs"]), c["all_pass"], c["accepted"],
            pct(c["broken"], c["entered"]), c["blindness"],
            _mean_score(members), _excluded(members)[0],
        ])
    table.notes.append("Broken % is over the runs that met the verifiers (— when none did).")
    return table


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def conditional_table(runs: Sequence[ReportRun]) -> Table:
    """Table 5: each stage's pass rate over the runs that entered it, per class and overall."""
    columns = [
        Column("class", "Category", "text"),
        Column("runs", "Runs"),
        Column("stage1", "Stage I n", "text"),
        Column("stage1_pct", "Stage I %", "pct"),
        Column("stage2", "Stage II n", "text"),
        Column("stage2_pct", "Stage II %", "pct"),
        Column("stage3", "Stage III n", "text"),
        Column("stage3_pct", "Stage III %", "pct"),
        Column("accepted", "Acc."),
        Column("score", "Score", "score"),
    ]
    table = Table("table5", "Table 5 · conditional pass rate per stage", columns,
                  bar="stage3_pct")

    def row(name: str, members: list[ReportRun]) -> list[Cell]:
        c = _class_counts(members)
        return [
            name, c["runs"],
            _ratio(c["migrated"], c["runs"]), pct(c["migrated"], c["runs"]),
            _ratio(c["entered"], c["migrated"]), pct(c["entered"], c["migrated"]),
            _ratio(c["accepted"], c["entered"]), pct(c["accepted"], c["entered"]),
            c["accepted"], _mean_score(members),
        ]

    for name, members in group(runs, lambda r: r.category).items():
        table.rows.append(row(name, members))
    table.total = row("All", list(runs))
    table.notes.append("Stage II is over the runs that cleared Stage I (blindness does not "
                       "count); Stage III over the runs that met the verifiers.")
    return table


def task_table(runs: Sequence[ReportRun]) -> Table:
    """Table 9: per task (all tests pass regardless of Stage I; blindness is a subset)."""
    columns = [
        Column("task", "Task", "text"),
        Column("class", "Class", "text"),
        Column("runs", "n"),
        Column("migrated", "Migrated"),
        Column("all_pass", "All tests pass"),
        Column("blindness", "Blindness"),
        Column("accepted", "Accepted"),
        Column("score", "Score", "score"),
        Column("invalid", "Invalid (excluded)"),
    ]
    table = Table("table9", "Table 9 · per task", columns, bar="score")

    def row(name: str, category: str, members: list[ReportRun]) -> list[Cell]:
        c = _class_counts(members)
        return [name, category, c["runs"], c["migrated"], c["all_pass"], c["blindness"],
                c["accepted"], _mean_score(members),
                _excluded(members)[0]]

    for name, members in group(runs, lambda r: r.task).items():
        table.rows.append(row(name, _first(members, "category"), members))
    table.total = row("All tasks", "", list(runs))
    table.notes.append("All tests pass − blindness = the runs that reached Stage III.")
    return table
