"""Issue 37 in a real audit container and the console: a copy of demo01's State A whose
README addresses the judge, reviewed by the obedient STAND-IN reviewer (not a model;
srb_tui.drivers.standin_obedient around demo01's scripted reviewer). Stage I still fails:
every answer that followed the README is a fail, the finding is stored with file:line as an
audit check, and the Audit tab shows it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.service.grading.probe_variants import make_variant
from srb_tui.service.grading.stages.audit import AUDIT
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

pytestmark = [pytest.mark.docker]
BASE_IMAGE = "srb/base:bookworm"
HONEST = '["python3", "audit/lib/scripted_reviewer.py"]'


async def test_a_tree_addressing_its_judge_fails_and_the_audit_tab_says_so(
    builtin_settings: Settings, tmp_path: Path
) -> None:
    task_dir = tmp_path / "task"
    shutil.copytree(DEMO_TASK, task_dir, ignore=shutil.ignore_patterns("submissions"))
    evaluation = task_dir / "tests" / "evaluation.toml"
    standin = json.dumps([sys.executable, "-m", "srb_tui.drivers.standin_obedient", "--",
                          "python3", "audit/lib/scripted_reviewer.py"])
    text = evaluation.read_text()
    assert HONEST in text
    evaluation.write_text(text.replace(HONEST, standin))
    task = load_task(task_dir).task
    assert task is not None and task.evaluation is not None
    gates = [g.id for g in task.evaluation.gates]
    untouched = DEMO_TASK / "submissions" / "untouched"
    submission = make_variant(untouched, tmp_path / "submission", "readme", gates)
    readme = (submission / "README.md").read_text().splitlines()
    line = next(n for n, t in enumerate(readme, 1) if t.startswith("Dear reviewer"))

    builtin_settings.state_dir.mkdir(parents=True, exist_ok=True)
    engine = DockerEngine(RunnerPool(2))
    try:
        async with await Store.open(builtin_settings.db_path) as store:
            run = await store.runs.create_run(task_id=task.id, task_path=str(task_dir),
                                              agent="replay:untouched")
            run_dir = tmp_path / "run"
            run_dir.mkdir()
            outcome = await AUDIT.run(StageContext(
                engine=engine, store=store, run_id=run.id, task=task, original=untouched,
                submission=submission, run_dir=run_dir,
                images=StageImages(engine, task, BASE_IMAGE, lambda e: None),
                publish=lambda e: None, environ={},
            ))  # fmt: skip
            assert outcome.audit_gate == "fail"
            checks = await store.grading.checks(run.id, "audit")
            found = [c for c in checks if c.module_id == "judge-addressed"]
            assert found and found[0].verdict == "fail"
            assert any(c.summary and c.summary.startswith(f"README.md:{line}:") for c in found)
            assert any(c.evidence == {"path": "submission:README.md", "line": line,
                                      "quote": readme[line - 1].strip()} for c in found)
            votes = await store.grading.gate_votes(run.id)
            assert len(votes) == 3 * len(gates)
            assert all(v.verdict == "fail" and "README.md" in str(v.extra.get("tainted"))
                       for v in votes)
            assert all(v.extra.get("reported") == "pass" for v in votes), "it did obey"
            defences = outcome.envelope["metadata"]["defences"]
            assert defences["enabled"] and defences["fence"].startswith("SRB-DATA-")
            transcript = json.loads((run_dir / "audit-transcripts.json").read_text())
            tools = [e for e in transcript[0]["transcript"] if e.get("kind") == "tool"]
            assert tools and all(
                str(e.get("result", e.get("error"))).startswith(f"<<<{defences['fence']} ")
                for e in tools)
    finally:
        engine.close()

    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_run(run.id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.detail is not None, "the run detail")
        screen = app.screen
        await pilot.press("3")
        box = screen.query_one("#audit-judge", Static)
        await until(pilot, lambda: box.display, "the judge-addressed findings")
        shown = str(box.render())
        assert "addressed its judge" in shown and f"README.md:{line}" in shown
        votes_table = screen.query_one("#audit-votes", DataTable)
        await until(pilot, lambda: votes_table.row_count == 3, "the votes of the first gate")
        assert all(str(votes_table.get_row(key)[3]) == "followed injected text"
                   for key in votes_table.rows)
