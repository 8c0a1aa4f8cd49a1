"""The Strength screen (``i`` from every screen, issue 36) over a real store holding a
strength campaign: the campaign's figures, its mutants survivors-first with one cell per
adversary, a mutant's diff on Enter, its panel run on ``o``; a store without a campaign
says how to make one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, Static

from srb_tui.config import Settings
from srb_tui.store import Store
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.strength import ReasonDialog, StrengthScreen
from tests.conftest import BUILTIN_TASKS, DEMO_TASK
from tests.ui.helpers import quiet_app, until

PANEL = ("f01", "f02", "f03")
CAMPAIGN = "s-demo-state-a-n4-s0"


def _doc(mid: str, line: int, before: str, after: str) -> dict[str, Any]:
    return {"id": mid, "key": f"k{mid}", "path": "csvtab/width.py", "line": line,
            "column": 1, "operator": "comparison", "language": "python", "start": 0,
            "end": len(before), "before": before, "after": after,
            "diff": f"--- a/csvtab/width.py\n+++ b/csvtab/width.py\n@@ -{line} +{line} @@\n"
                    f"-{before}\n+{after}\n"}


def _seed(state: Path) -> str:
    async def seed() -> str:
        async with await Store.open(state / "srb.sqlite3") as store:
            await store.strength.plan(
                CAMPAIGN, task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                of_tree="state-a", asked=4, seed=0, panel=PANEL, budget_sec=30.0,
                mutants=[_doc("m001", 10, "a < b", "a <= b"),
                         _doc("m002", 20, "c == d", "c != d"),
                         _doc("m003", 30, "x < y", "x <= y"),
                         _doc("m004", 40, "p < q", "p <= q")])
            await store.strength.record_stage_ii(CAMPAIGN, "m001", "killed",
                                                 {"reason": "3 of 186 scored checks failed"})
            for mid in ("m002", "m003"):
                await store.strength.record_stage_ii(CAMPAIGN, mid, "survived",
                                                     {"reason": "all 186 passed"})
            await store.strength.record_stage_ii(CAMPAIGN, "m004", "invalid",
                                                 {"reason": "cannot start"})
            runs = {}
            for mid, catches in (("m002", {"f01": ("broken", None), "f02": ("survived", None),
                                           "f03": ("broken", None)}),
                                 ("m003", {name: ("survived", None) for name in PANEL})):
                run = await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                                  agent=f"mutant:{CAMPAIGN}/{mid}")
                await store.strength.start_stage_iii(CAMPAIGN, mid, run.id)
                await store.runs.transition(run.id, "verification", "test")
                await store.runs.transition(run.id, "scored", "test")
                await store.strength.record_stage_iii(CAMPAIGN, mid, run.id, catches)
                runs[mid] = run.id
            return runs["m003"]

    return asyncio.run(seed())


async def _strength(pilot: Any) -> StrengthScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, StrengthScreen)
                and app.screen.loads >= 1, "the Strength screen's campaigns", timeout=30)
    screen = app.screen
    assert isinstance(screen, StrengthScreen)
    return screen


def test_a_campaign_shows_its_figures_and_mutants_survivors_first(state_dir: Path) -> None:
    m003_run = _seed(state_dir)

    async def body() -> None:
        app = quiet_app(Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("i")
            screen = await _strength(pilot)
            campaigns = screen.query_one("#strength-campaigns", DataTable)
            assert [str(k.value) for k in campaigns.rows] == [CAMPAIGN]
            # suite: m001 killed of 3 valid (m004 invalid); panel: m002 caught of 2 graded
            assert campaigns.get_cell(CAMPAIGN, "Suite score") == "33% (1/3)"
            assert campaigns.get_cell(CAMPAIGN, "Panel strength") == "50% (1/2)"
            figures = str(screen.query_one("#strength-figures", Static).render())
            assert "panel strength 50%" in figures and "uncaught: m003" in figures
            assert "A1  f01" in figures and "A3  f03" in figures
            assert "k=0 1/1/1 · k=1 1/1/1 · k=2 2/1/2 · k=3 2/2/2" in figures  # one line
            mutants = screen.query_one("#strength-mutants", DataTable)
            order = [str(k.value) for k in mutants.rows]
            assert order == ["m003", "m002", "m001", "m004"]  # uncaught survivor on top
            assert [str(mutants.get_cell("m002", n)) for n in PANEL] == ["✓", "·", "✓"]
            assert [str(mutants.get_cell("m001", n)) for n in PANEL] == ["", "", ""]
            # Enter: the top mutant's diff against State A
            mutants.focus()
            await pilot.press("enter")
            await until(pilot, lambda: "+x <= y" in screen.diff_text, "the diff shown")
            assert screen.diff_text.startswith("# m003 · csvtab/width.py:30 · comparison")
            assert not screen.query_one("#strength-diff-box").has_class("-hidden")
            # e: mark the uncaught one equivalent, with a reason; the figures follow
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, ReasonDialog), "the dialog")
            app.screen.query_one(Input).value = "entry never runs"
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, StrengthScreen)
                        and app.screen.loads >= 2 and app.screen.campaigns[0].figures.
                        equivalent == 1, "the reload after the mark")
            campaigns = screen.query_one("#strength-campaigns", DataTable)
            assert campaigns.get_cell(CAMPAIGN, "Panel strength") == "100% (1/1)"
            mutants = screen.query_one("#strength-mutants", DataTable)
            assert str(mutants.get_cell("m003", "equivalent")).endswith(": entry never runs")
            # o: the run the panel graded it in
            mutants.focus()
            mutants.move_cursor(row=[str(k.value) for k in mutants.rows].index("m003"))
            await pilot.press("o")
            await until(pilot, lambda: isinstance(app.screen, RunScreen), "its run screen")
            assert app.screen.run_id == m003_run  # type: ignore[attr-defined]

    asyncio.run(body())


def test_without_a_campaign_the_screen_says_how_to_make_one(state_dir: Path) -> None:
    async def body() -> None:
        app = quiet_app(Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("i")
            screen = await _strength(pilot)
            said = str(screen.query_one("#strength-message", Static).render())
            assert "srb tasks strength ID --mutants N --seed S" in said

    asyncio.run(body())
