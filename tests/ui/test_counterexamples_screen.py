"""Pilot tests of the Counterexamples screen over a real store (no engine needed here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.counterexamples import CounterexamplesScreen
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app

CANDIDATE = "#!/bin/bash\nprintf 'a,b\\n\\001x,y\\n' | \"$CSVTAB\" | grep -q '\\^Ax'\n"
RUN_ID = "r-20261129-120000-cc01"


async def seed_counterexamples(settings: Settings) -> None:
    async with await Store.open(settings.db_path) as store:
        await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                    agent="replay:subtle", run_id=RUN_ID)
        for adversary in ("f01-bytes-default-table", "f02-bytes-all-formats"):
            await store.grading.record_adversary_round(RUN_ID, adversary, status="broken",
                                                       model="fuzz", driver="fuzz", candidates=1)
        await store.grading.record_counterexample(
            RUN_ID, "f01-bytes-default-table", code=CANDIDATE, verdict="upheld",
            reason="passes on State A and fails on the submission, reproduced 3 times",
            output_a={"stdout": "+-----+\n| ^Ax |\n+-----+\n", "stderr": ""},
            output_b={"stdout": "+-----+\n| \u0001x |\n+-----+\n", "stderr": ""},
            exit_a=0, exit_b=1, duration_a=0.12, duration_b=0.08,
        )
        await store.grading.record_counterexample(
            RUN_ID, "f02-bytes-all-formats", code="#!/bin/bash\nexit 3\n", verdict="invalid",
            reason="does not pass on State A (exit 3)", output_a="", output_b="",
            exit_a=3, exit_b=3, duration_a=0.01, duration_b=0.01,
        )


async def test_candidates_code_and_outputs(builtin_settings: Settings) -> None:
    await seed_counterexamples(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = CounterexamplesScreen(app.run_host, RUN_ID)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = screen.query_one("#cx-table", DataTable)
        assert table.row_count == 2
        first = table.get_row_at(0)
        assert first[1] == "f01-bytes-default-table" and str(first[2]) == "upheld"
        assert (first[4], first[5], first[6]) == ("0", "1", "0.12 s")
        summary = str(screen.query_one("#cx-summary", Static).render())
        assert "2 candidates from 2 adversary rounds" in summary and "1 upheld" in summary
        output_a = str(screen.query_one("#cx-output-a", Static).render())
        output_b = str(screen.query_one("#cx-output-b", Static).render())
        assert "State A · exit 0" in output_a and "^Ax" in output_a
        assert "submission · exit 1" in output_b
        await pilot.press("down")
        await pilot.pause()
        assert screen.selected is not None and screen.records[screen.selected].verdict == "invalid"
        assert "exit 3" in str(screen.query_one("#cx-output-a", Static).render())


async def test_export_writes_a_runnable_folder(builtin_settings: Settings,
                                               tmp_path: Path) -> None:
    await seed_counterexamples(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = CounterexamplesScreen(app.run_host, RUN_ID)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        cid = screen.selected
        assert cid is not None and cid in screen.exported
    folder = builtin_settings.state_dir / "exports" / f"{RUN_ID}-cx{cid}"
    assert (folder / "candidate.sh").read_text() == CANDIDATE
    assert (folder / "run-candidate.sh").is_file()
    readme = (folder / "README.md").read_text()
    assert "bash run-both.sh" in readme and "upheld" in readme
    if shutil.which("node") is None or shutil.which("python3") is None:
        return
    import subprocess

    done = subprocess.run(
        ["bash", str(folder / "run-both.sh"), str(DEMO_TASK / "submissions" / "untouched"),
         str(DEMO_TASK / "submissions" / "subtle")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert "original: exit 0" in done.stdout and "submission: exit 1" in done.stdout


async def test_unknown_run_is_explained(builtin_settings: Settings) -> None:
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = CounterexamplesScreen(app.run_host, "r-20261129-120000-dddd")
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "r-20261129-120000-dddd" in str(screen.query_one("#cx-summary", Static).render())


@pytest.mark.docker  # the console connects to the engine before it looks at the images
async def test_rerun_without_verification_image_is_explained(builtin_settings: Settings) -> None:
    await seed_counterexamples(builtin_settings)
    submission = builtin_settings.runs_dir / RUN_ID / "submission"
    shutil.copytree(DEMO_TASK / "submissions" / "subtle", submission)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = CounterexamplesScreen(app.run_host, RUN_ID)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = str(screen.query_one("#cx-rerun", Static).render())
        assert "failed:" in panel
        assert "no verification image is recorded" in panel
