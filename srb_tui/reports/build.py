"""Assemble a Report (every table and figure) from ReportRun records — pure — and load the
records from a store in one pass (``load_runs``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from srb_tui.reports.agreement import agreement_table
from srb_tui.reports.figures import (
    adversary_table,
    family_table,
    levels_figure,
    missed_alone_table,
    stage1_table,
    survivors_figure,
    times_table,
    verifier_table,
)
from srb_tui.reports.model import Report
from srb_tui.reports.records import EXCLUDED, OUTCOMES, ReportRun, runs_from_source
from srb_tui.reports.tables import (
    class_table,
    conditional_table,
    funnel_table,
    leaderboard_table,
    task_table,
)
from srb_tui.reports.uncertainty import interval_table
from srb_tui.store import Store

TABLE_IDS = ("table2", "table3", "table3i", "table4", "table5", "table9", "figure5a",
             "missed_alone", "figure5b", "stage3_times", "stage1", "figure6", "figure6_adversaries",
             "figure6_family", "table6")


def build_report(
    runs: Sequence[ReportRun],
    *,
    title: str = "srb report",
    selection: str = "all runs",
    config_order: Sequence[str] = (),
    has_ledger: bool = True,
) -> Report:
    """Every table over ``runs`` (pure: no store, no files)."""
    counts = {key: sum(r.outcome == key for r in runs) for key in (*OUTCOMES, *EXCLUDED)}
    counts["runs"] = len(runs)
    counts["counted"] = sum(r.counted for r in runs)
    counts["imported"] = sum(r.imported for r in runs)
    return Report(
        title=title,
        selection=selection,
        counts=counts,
        tables=[
            funnel_table(runs, config_order),
            leaderboard_table(runs, config_order, has_ledger),
            interval_table(runs, config_order),
            class_table(runs),
            conditional_table(runs),
            task_table(runs),
            levels_figure(runs),
            missed_alone_table(runs),
            survivors_figure(runs),
            times_table(runs),
            stage1_table(runs),
            verifier_table(runs),
            adversary_table(runs),
            family_table(runs),
            agreement_table(runs),
        ],
    )


async def load_runs(
    store: Store,
    *,
    campaign: str | None = None,
    filters: Mapping[str, Any] | None = None,
    categories: Mapping[str, str] | None = None,
    efforts: Mapping[tuple[str, str], str] | None = None,
) -> tuple[list[ReportRun], list[str], bool]:
    """Records of the selected runs, the campaign's configuration order, whether a ledger
    exists. The failed check ids are read only for runs that miss exactly one check."""
    src = await store.reports.report_source(campaign=campaign, **dict(filters or {}))
    runs = runs_from_source(src, categories, efforts=efforts)
    single = {r.run_id for r in runs if r.migrated and r.missed_count == 1}
    if single:
        missed = await store.reports.missed_checks(sorted(single))
        runs = [
            replace(r, missed=tuple(missed.get(r.run_id, ()))) if r.run_id in single else r
            for r in runs
        ]
    return runs, list(src.campaign_configs), src.has_ledger


