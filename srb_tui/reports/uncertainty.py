"""Table 3i (intervals) and the paired comparison of two configurations (``--compare``).

The per-run values are the leaderboard's: a counted run's score (0 when none), 100 when it
was accepted else 0, and 100 × its share of fixed checks passed (runs Stage II measured).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from srb_tui.reports.model import Cell, Column, Report, Table
from srb_tui.reports.records import ReportRun
from srb_tui.reports.stats import (
    RESAMPLES,
    Interval,
    StatsUnavailable,
    interval,
    method_note,
    paired,
)
from srb_tui.reports.tables import group

Metric = Callable[[ReportRun], float | None]


def _score(run: ReportRun) -> float | None:
    return float(run.score or 0.0)


def _accepted(run: ReportRun) -> float | None:
    return 100.0 if run.outcome == "accepted" else 0.0


def _behavioural(run: ReportRun) -> float | None:
    return None if run.fraction is None else 100.0 * run.fraction


METRICS: dict[str, tuple[str, Metric]] = {
    "score": ("Score", _score),
    "accepted": ("Accepted %", _accepted),
    "behavioural": ("Behavioural pass %", _behavioural),
}


def by_task(runs: Sequence[ReportRun], metric: Metric) -> dict[str, list[float]]:
    """Each task's values of ``metric`` over the counted runs (None values left out)."""
    out: dict[str, list[float]] = {}
    for run in runs:
        if run.counted and (value := metric(run)) is not None:
            out.setdefault(run.task, []).append(value)
    return out


def _cells(found: Interval | None) -> list[Cell]:
    if found is None:
        return [None, None, None]
    return [found.mean, found.low, found.high]


def interval_table(runs: Sequence[ReportRun], order: Sequence[str] = (),
                   resamples: int = RESAMPLES) -> Table:
    """Table 3i: score, acceptance and behavioural pass rate per configuration, each with
    its 95% interval."""
    columns = [Column("config", "Configuration", "text"), Column("tasks", "Tasks"),
               Column("runs", "Runs")]
    for key, (title, _m) in METRICS.items():
        kind = "score" if key == "score" else "pct"
        columns += [Column(key, title, kind), Column(f"{key}_low", "95% low", kind),
                    Column(f"{key}_high", "95% high", kind)]
    table = Table("table3i", "Table 3i · scores with 95% intervals", columns, bar="score")
    try:
        for name, members in group(runs, lambda r: r.config, order).items():
            counted = [r for r in members if r.counted]
            row: list[Cell] = [name, len({r.task for r in counted}), len(counted)]
            for _key, (_title, metric) in METRICS.items():
                row += _cells(interval(by_task(counted, metric), resamples=resamples))
            table.rows.append(row)
    except StatsUnavailable as exc:
        table.rows.clear()
        table.notes.append(str(exc))
        return table
    table.notes.append(method_note(resamples))
    table.notes.append("— for an interval: fewer than two tasks. Behavioural pass % is over "
                       "the runs Stage II measured.")
    return table


def select(runs: Sequence[ReportRun], name: str) -> list[ReportRun]:
    """The runs of configuration ``name``, else of model ``name`` (none: an empty list)."""
    found = [r for r in runs if r.config == name]
    return found or [r for r in runs if r.model == name]


def compare_report(runs: Sequence[ReportRun], a: str, b: str, *, metric: str = "score",
                   selection: str = "all runs", resamples: int = RESAMPLES) -> Report:
    """The paired comparison of configurations (or models) ``a`` and ``b`` on ``metric``:
    a summary table and the per-task table of who won."""
    title, fn = METRICS[metric]
    kind = "score" if metric == "score" else "pct"
    runs_a, runs_b = select(runs, a), select(runs, b)
    result, rows = paired(by_task(runs_a, fn), by_task(runs_b, fn), resamples=resamples)
    summary = Table("compare", f"Compare · {title}: {a} − {b} over shared tasks", [
        Column("a", "A", "text"), Column("b", "B", "text"), Column("tasks", "Shared tasks"),
        Column("diff", "Mean A − B", kind), Column("low", "95% low", kind),
        Column("high", "95% high", kind), Column("p", "p-value", "num4"),
        Column("wins_a", "A won"), Column("wins_b", "B won"), Column("ties", "Tied"),
    ])
    summary.rows.append([a, b, result.tasks, result.mean_diff, result.low, result.high,
                         result.p_value, result.wins_a, result.wins_b, result.ties])
    summary.notes.append(f"Paired over the {result.tasks} tasks both ran (each task's mean "
                         f"over its counted runs); interval: percentile bootstrap over tasks, "
                         f"{resamples:,} resamples (seeded, scipy.stats.bootstrap); p-value: "
                         f"{result.test}, scipy.stats.wilcoxon.")
    summary.notes.append(verdict(a, b, result.mean_diff, result.low, result.high,
                                 result.p_value))
    per_task = Table("compare_tasks", "Compare · per task", [
        Column("task", "Task", "text"), Column("a", f"A {title}", kind),
        Column("b", f"B {title}", kind), Column("diff", "A − B", kind),
        Column("winner", "Winner", "text"),
    ])
    for task, ma, mb in rows:
        diff = round(ma - mb, 6)
        per_task.rows.append([task, round(ma, 6), round(mb, 6), diff,
                              "A" if diff > 0 else "B" if diff < 0 else "tie"])
    counts = {"runs": len(runs_a) + len(runs_b), "counted": sum(
        r.counted for r in (*runs_a, *runs_b)), "imported": sum(
        r.imported for r in (*runs_a, *runs_b))}
    return Report(title=f"srb report --compare — {selection}", selection=selection,
                  tables=[summary, per_task], counts=counts)


def verdict(a: str, b: str, diff: float | None, low: float | None, high: float | None,
            p_value: float | None) -> str:
    """One sentence: did one beat the other (the interval excludes 0 and p < 0.05)?"""
    if diff is None:
        return "No shared tasks: nothing to compare."
    if low is None or high is None or p_value is None:
        return "One shared task: no interval or test."
    excludes = low > 0 or high < 0
    if excludes and p_value < 0.05:
        lead, trail = (a, b) if diff > 0 else (b, a)
        return f"{lead} beat {trail}: the interval excludes 0 and p < 0.05."
    if excludes:
        return (f"No clear difference between {a} and {b}: the interval excludes 0 but "
                f"p = {p_value:.4g} ≥ 0.05 (too few shared tasks for the test to be sure: "
                "with n tasks of one sign the two-sided p is at least 2/2^n).")
    return f"No clear difference between {a} and {b}: the interval includes 0."
