"""Issue 37 in the reports: runs whose submission addressed the judge (the audit's
``judge-addressed`` checks) are counted in the Stage I table."""

from __future__ import annotations

from pathlib import Path

from srb_tui.reports.figures import stage1_table
from srb_tui.reports.records import ReportRun
from srb_tui.service.grading.probe_variants import make_variant
from srb_tui.service.grading.stages.audit_defence import Defences
from srb_tui.store import Store
from tests.conftest import DEMO_TASK


async def test_the_store_counts_judge_addressed_findings_per_run(tmp_path: Path) -> None:
    tree = make_variant(DEMO_TASK / "submissions" / "untouched", tmp_path / "t", "all", ["g"])
    defences = Defences.prepare(tree)
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                          agent="replay:untouched")
        clean = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                            agent="replay:reference")
        await store.grading.record_checks(run.id, "audit", defences.finding_checks(),
                                          module_id="judge-addressed")
        src = await store.reports.report_source()
    assert src.addressed == {run.id: len(defences.findings)} and clean.id not in src.addressed


def test_the_stage1_table_flags_submissions_that_addressed_the_judge() -> None:
    runs = [ReportRun(run_id=f"r{n}", task="t", config="c", audit_gate="fail",
                      addressed_judge=3 if n < 2 else 0) for n in range(4)]
    table = stage1_table(runs)
    assert table.cell("submissions that addressed the judge", "n") == 2
    assert table.cell("submissions that addressed the judge", "share") == 50.0
