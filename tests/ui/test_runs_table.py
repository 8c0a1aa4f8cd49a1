"""Pilot tests of the Runs screen's table: filters, sort, paging, live updates, funnel,
stage marks and comparing two runs, over a real store seeded through its API."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, Static

from srb_tui.config import Settings
from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.service.events import StatusChanged
from srb_tui.service.views.runs_table import marks_from_score, parse_filter
from srb_tui.store import Store
from srb_tui.ui.screens.run_compare import RunCompareScreen
from srb_tui.ui.screens.runs import RunsScreen
from srb_tui.ui.widgets.diff_runs import RunComparison
from srb_tui.ui.widgets.runs_columns import (
    COLUMNS,
    next_sort_column,
    reversed_sort,
    run_id_of,
    sort_for_column,
)
from tests.ui.helpers import quiet_app, until

MAIN_LINE = ("preparing", "agent", "collecting", "audit", "behavioural", "verification",
             "scored")
POLICY = ScoringPolicy(max_score=100.0, behavioural_points=40.0, verification_points=60.0,
                       verification_models=2, points_per_survived_model=30.0)


async def _runs(pilot: Any) -> tuple[RunsScreen, DataTable[Any]]:
    await pilot.press("r")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, RunsScreen)
    return screen, screen.query_one("#runs-table", DataTable)


def _keys(table: DataTable[Any]) -> list[str]:
    return [str(r.key.value) for r in table.ordered_rows]


async def _scored(store: Store, settings: Settings, run_id: str, *, audit: str,
                  complete: bool | None, adversaries: dict[str, str] | None) -> None:
    for status in MAIN_LINE:
        if status == "verification" and adversaries is None:
            continue
        await store.runs.transition(run_id, status)
    envelope = score_run(audit, complete, [], adversaries, POLICY)
    await store.infra.add_event(run_id, "score", envelope.to_json())  # as the ladder records it
    await store.runs.update_run(run_id, score=envelope.score, max_score=envelope.max_score,
                                valid=envelope.valid, blocked_by=envelope.blocked_by,
                                started_at="2026-11-29T12:00:00.000000+00:00",
                                finished_at="2026-11-29T12:42:05.000000+00:00")


async def _seed(settings: Settings) -> dict[str, str]:
    ids: dict[str, str] = {}
    async with await Store.open(settings.db_path) as store:
        for n, (task, agent) in enumerate((("demo01", "replay:reference"),
                                           ("demo01", "untouched"),
                                           ("lang02", "replay:reference"))):
            run = await store.runs.create_run(task_id=task, task_path=f"tasks/{task}", agent=agent,
                                              model=f"m{n}", run_id=f"r-20261129-12000{n}-ab0{n}")
            ids[agent + task] = run.id
        await _scored(store, settings, "r-20261129-120000-ab00", audit="pass", complete=True,
                      adversaries={"a1": "survived", "a2": "broken"})
        await _scored(store, settings, "r-20261129-120002-ab02", audit="fail", complete=True,
                      adversaries=None)
    return ids


def test_filter_parsing_reports_every_problem() -> None:
    found, problems = parse_filter("task:demo01 status:nope agent: csv words")
    assert found.task == "demo01" and found.status is None and found.text == "csv words"
    assert len(problems) == 2 and "status:nope" in problems[1]


def test_marks_from_score_documents() -> None:
    broken = score_run("pass", True, [], {"a1": "survived", "a2": "broken"}, POLICY).to_json()
    assert marks_from_score(broken).text == "✓ ✓ ✗"
    blind = score_run("fail", True, [], None, POLICY).to_json()
    assert marks_from_score(blind).text == "✗ ✓ —"
    error = score_run("error", None, [], None, POLICY).to_json()
    assert marks_from_score(error).text == "! — —"


def test_sort_keys_follow_the_columns() -> None:
    """A header picks its store key (score and start time newest first), the same header
    again reverses it, a column without a key sorts nothing, ``s`` walks the sortable ones."""
    assert sort_for_column("-created_at", "agent") == "agent"
    assert sort_for_column("agent", "agent") == "-agent"
    assert sort_for_column("-agent", "agent") == "agent"
    assert sort_for_column("agent", "score") == "-score"
    assert sort_for_column("agent", "started") == "-started_at"
    assert sort_for_column("agent", "stages") is None
    walked, run_sort = [], "-created_at"
    for _ in range(len(COLUMNS)):
        column = next_sort_column(run_sort)
        walked.append(column)
        run_sort = sort_for_column(run_sort, column) or run_sort
    sortable = [key for _, key, sort in COLUMNS if sort]
    assert walked[:len(sortable)] == sortable and walked[len(sortable)] == sortable[0]
    assert reversed_sort("-score") == "score" and reversed_sort("task") == "-task"
    assert run_id_of("r-1") == "r-1" and run_id_of("● r-1") == "r-1"


async def test_columns_marks_and_funnel(builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 30)) as pilot:
        screen, table = await _runs(pilot)
        assert [c.label.plain for c in table.ordered_columns][:4] == [
            "Run", "Task", "Agent", "Status"]
        first = "r-20261129-120000-ab00"
        assert str(table.get_cell(first, "stages")) == "✓  ✓  ✗"
        assert table.get_cell(first, "model") == "m0"
        assert str(table.get_cell("r-20261129-120002-ab02", "stages")) == "✗  ✓  —"
        assert str(table.get_cell("r-20261129-120001-ab01", "stages")) == "—  —  —"
        funnel = str(screen.query_one("#runs-funnel", Static).render())
        assert "2 scored of 3" in funnel
        assert "migrated 1" in funnel and "blindness 1" in funnel and "accepted 0" in funnel


async def test_filter_bar_and_sort(builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 30)) as pilot:
        screen, table = await _runs(pilot)
        assert _keys(table)[0] == "r-20261129-120002-ab02"  # newest first
        await pilot.press("slash", *"task:demo01", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert sorted(_keys(table)) == ["r-20261129-120000-ab00", "r-20261129-120001-ab01"]
        funnel = str(screen.query_one("#runs-funnel", Static).render())
        assert "1 scored of 2" in funnel
        await pilot.press("slash", "escape")
        # the cleared filter applies after the box's debounce: wait for the rows
        await until(pilot, lambda: len(_keys(table)) == 3, "the unfiltered rows")
        screen.sort_by("agent")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [table.get_row(k)[2] for k in _keys(table)] == [
            "replay:reference", "replay:reference", "untouched"]
        screen.sort_by("agent")  # again: reversed
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert table.get_row(_keys(table)[0])[2] == "untouched"
        status = str(screen.query_one("#runs-status", Static).render())
        assert "sorted by agent ↓" in status
        await pilot.press("slash", *"nothing-like-this", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        message = str(screen.query_one("#runs-message", Static).render())
        assert "No run matches" in message
        await pilot.press("slash", "escape")
        await until(pilot, lambda: len(_keys(table)) == 3, "the unfiltered rows")
        await pilot.press("slash", *"node:local status:scored", "enter")  # local: no node
        await until(pilot, lambda: sorted(_keys(table)) == [
            "r-20261129-120000-ab00", "r-20261129-120002-ab02"], "the local scored runs")


async def test_rows_update_in_place(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        run = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                          agent="replay:reference")
        other = await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                            agent="untouched")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 30)) as pilot:
        _, table = await _runs(pilot)
        keys_before = list(table.rows)
        table.move_cursor(row=table.get_row_index(other.id))
        async with await Store.open(builtin_settings.db_path) as store:
            await store.runs.transition(run.id, "preparing")
            await store.runs.transition(run.id, "agent")
        app.run_host.bus.publish(StatusChanged(run.id, "agent"))
        await until(pilot, lambda: str(table.get_row(run.id)[3]) == "agent", "the agent status",
                    timeout=5)
        assert list(table.rows) == keys_before  # same RowKey objects: never cleared
        assert all(a is b for a, b in zip(list(table.rows), keys_before, strict=True))
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == other.id
        # no bus event this time (another process): the store's change watermark shows it
        async with await Store.open(builtin_settings.db_path) as store:
            await store.runs.transition(run.id, "cancelled", "operator")
        await until(pilot, lambda: str(table.get_row(run.id)[3]) == "cancelled",
                    "the cancelled status", timeout=5)


async def test_pages_of_a_long_history(builtin_settings: Settings) -> None:
    async with await Store.open(builtin_settings.db_path) as store:
        for n in range(230):
            await store.runs.create_run(task_id="demo01", task_path="tasks/demo01",
                                        agent=f"agent{n:03d}",
                                        run_id=f"r-20261129-{n // 60:02d}{n % 60:02d}00-aaaa")
    app = quiet_app(builtin_settings)  # history rows, left pending: not for driving
    async with app.run_test(size=(160, 30)) as pilot:
        screen, table = await _runs(pilot)
        first = _keys(table)
        assert len(first) == 100 and first[0] == "r-20261129-034900-aaaa"
        await pilot.press("right_square_bracket")
        await app.workers.wait_for_complete()
        await pilot.pause()
        second = _keys(table)
        assert len(second) == 100 and not set(first) & set(second)
        assert "101–200 of 230 runs · page 2/3" in str(
            screen.query_one("#runs-status", Static).render())
        await pilot.press("right_square_bracket")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(_keys(table)) == 30 and _keys(table)[-1] == "r-20261129-000000-aaaa"


async def test_mark_two_runs_and_compare(builtin_settings: Settings) -> None:
    await _seed(builtin_settings)
    async with await Store.open(builtin_settings.db_path) as store:
        await store.grading.record_gate_outcomes("r-20261129-120000-ab00",
                                                 [{"gate_id": "no-python", "verdict": "pass"}])
        await store.grading.record_gate_outcomes("r-20261129-120002-ab02",
                                                 [{"gate_id": "no-python", "verdict": "fail"}])
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(160, 40)) as pilot:
        screen, table = await _runs(pilot)
        table.move_cursor(row=table.get_row_index("r-20261129-120000-ab00"))
        await pilot.press("space")
        await pilot.pause()
        assert screen.marked == ["r-20261129-120000-ab00"]
        assert str(table.get_row("r-20261129-120000-ab00")[0]).startswith("● ")
        table.move_cursor(row=table.get_row_index("r-20261129-120002-ab02"))
        await pilot.press("space", "c")
        await until(pilot, lambda: isinstance(app.screen, RunCompareScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        comparison = app.screen.query_one(RunComparison)
        rows = {(r.section, r.label): r for r in comparison.compared}
        assert rows[("score", "score")].left == "70/100"
        assert rows[("score", "score")].right == "0/100"
        assert rows[("gates", "no-python")].differs
        assert rows[("stages", "III verification")].left.startswith("✗")
        task = rows[("run", "task")]
        assert (task.left, task.right, task.differs) == ("demo01", "lang02", True)
        assert not rows[("run", "effort")].differs
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_compare_shows_both_runs_at_80x24(builtin_settings: Settings) -> None:
    """Issue 35 item 2: at 80×24 the dialog showed only the first run's column. Both runs'
    columns now lie inside the table's width, and a resize shares the width out again."""
    await _seed(builtin_settings)
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        _screen, table = await _runs(pilot)
        for run_id in ("r-20261129-120000-ab00", "r-20261129-120002-ab02"):
            table.move_cursor(row=table.get_row_index(run_id))
            await pilot.press("space")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, RunCompareScreen))
        await app.workers.wait_for_complete()
        comparison = app.screen.query_one(RunComparison)

        def right_edge() -> int:
            return sum(c.get_render_width(comparison) for c in comparison.columns.values())

        await until(pilot, lambda: comparison.compared and comparison.size.width
                    and right_edge() <= comparison.size.width, "both columns inside the table")
        assert len(comparison.columns) == 5
        assert comparison.size.width >= 70, "the dialog takes the whole width under 100"
        await pilot.resize_terminal(160, 40)
        await until(pilot, lambda: comparison.size.width > 120, "the wider dialog")
        await until(pilot, lambda: right_edge() > 100, "wider columns after the resize")
        assert right_edge() <= comparison.size.width


async def test_score_stays_in_view_at_80x24_and_names_return_when_wide(
        builtin_settings: Settings) -> None:
    """Issue 35 item 2: at 80 columns a long task id, agent and status pushed Score off the
    screen. Under 100 columns the Task and Agent cells are cut; wider, they are whole again
    and the row under the cursor stays under it."""
    async with await Store.open(builtin_settings.db_path) as store:
        for n in range(3):
            await store.runs.create_run(task_id="fw03-a-very-long-task-identifier",
                                        task_path="tasks/fw03", agent="claude-code:claude-opus-5",
                                        run_id=f"r-20261129-12000{n}-cd0{n}")
            await store.runs.transition(f"r-20261129-12000{n}-cd0{n}", "preparing")
    app = quiet_app(builtin_settings)
    async with app.run_test(size=(80, 24)) as pilot:
        _screen, table = await _runs(pilot)
        keys = list(table.columns)
        score_at = keys.index(next(k for k in keys if k.value == "score"))
        right = sum(table.columns[k].get_render_width(table) for k in keys[:score_at + 1])
        assert right <= table.size.width, "Score lies inside the table at 80 columns"
        assert str(table.get_cell("r-20261129-120001-cd01", "agent")).endswith("…")
        table.move_cursor(row=table.get_row_index("r-20261129-120001-cd01"))
        await pilot.resize_terminal(160, 40)
        await until(pilot, lambda: str(table.get_cell("r-20261129-120001-cd01", "agent"))
                    == "claude-code:claude-opus-5", "the whole agent name when wide")
        await pilot.pause()
        cursor_key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert cursor_key == "r-20261129-120001-cd01"
