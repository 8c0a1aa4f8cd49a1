"""Pilot tests of the Run screen over a real store seeded with a finished, graded run.

The seed (``seed_finished_run``) is deterministic so the snapshot tests use it too: fixed
run id and timestamps, gate votes with evidence, module results, failing checks, six
adversary lanes, a counterexample, and a 3,000-line log with stderr lines and a Traceback.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

from rich.console import Console
from textual.widgets import DataTable, Input, Static, TabbedContent

from srb_tui.config import Settings
from srb_tui.grader.fingerprint import fingerprint
from srb_tui.schema import load_task
from srb_tui.service.provenance import record_launch, task_digest
from srb_tui.store import Store
from srb_tui.ui.app import SrbApp
from srb_tui.ui.screens.run import RunScreen
from srb_tui.ui.screens.run_dialogs import ConfirmDialog, EvidenceDialog
from srb_tui.ui.widgets.log_view import LogView
from tests.conftest import DEMO_TASK
from tests.ui.helpers import quiet_app, until

RUN_ID = "r-20261129-120000-ab00"
LOG_LINES = 3000
FIRST_STDERR = 1200
TRACEBACK_AT = 900
LANES = ("f01-bytes-default-table", "f02-bytes-all-formats", "f03-quotes-and-line-ends",
         "f04-width-and-truncation", "f05-command-line", "f06-encodings")


def log_text(seq: int) -> tuple[str, str]:
    """(stream, text) of seeded line ``seq``."""
    if seq == TRACEBACK_AT:
        return "stdout", "Traceback (most recent call last):"
    if seq >= FIRST_STDERR and seq % 500 == 200:
        return "stderr", f"warning: slow step at line {seq}"
    return "stdout", f"line {seq}: editing lib/module_{seq % 13}.js"


async def _seed(settings: Settings, *, finished: bool) -> None:
    gates = ["no-python-sources", "node-present", "node-is-primary"]
    async with await Store.open(settings.db_path) as store:
        await store.runs.create_run(task_id=DEMO_TASK.name, task_path=str(DEMO_TASK),
                                    agent="replay:subtle", budget_sec=1800.0, run_id=RUN_ID,
                                    model="scripted", effort="high")
        await store.runs.transition(RUN_ID, "preparing")
        await store.runs.transition(RUN_ID, "agent")
        lines = []
        for seq in range(1, LOG_LINES + 1):
            stream, text = log_text(seq)
            lines.append((f"2026-11-29T12:00:{seq // 100:02d}.{seq:06d}000Z", stream, text))
        for start in range(0, LOG_LINES, 1000):
            await store.logs.append_log_lines(RUN_ID, lines[start:start + 1000])
        await store.runs.update_run(RUN_ID, started_at="2026-11-29T12:00:00.000000Z")
        if not finished:
            return
        for status in ("collecting", "audit", "behavioural", "verification", "scored"):
            await store.runs.transition(RUN_ID, status)
        await store.grading.record_stage_result(
            RUN_ID,
            "audit",
            "ok",
            duration_sec=95.0,
            fingerprint="sha256:aa11",
            result={"stage": "audit"},
        )
        await store.grading.record_stage_result(RUN_ID, "behavioural", "ok", duration_sec=240.0,
                                                fingerprint="sha256:bb22", result={})
        await store.grading.record_stage_result(RUN_ID, "verification", "ok", duration_sec=481.0,
                                                fingerprint="sha256:cc33", result={})
        votes = []
        for gate in gates:
            for sample in range(3):
                fail = gate == "node-is-primary" and sample < 2
                votes.append({
                    "gate_id": gate, "sample": sample, "verdict": "fail" if fail else "pass",
                    "confidence": 0.9 - 0.1 * sample,
                    "reasoning": (f"sample {sample}: bin/csvtab still execs python3"
                                  if fail else f"sample {sample}: looks right"),
                    "evidence": [
                        {"path": "submission:bin/csvtab", "line": 2, "quote": "node",
                         "grounded": True, "reason": "quote found"},
                        {"path": "original:csvtab/cli.py", "line": 5, "quote": "import",
                         "grounded": False, "reason": "quote not on that line"},
                    ] if fail else [],
                    "downgraded": False,
                })
        await store.grading.record_gate_votes(RUN_ID, votes)
        await store.grading.record_gate_outcomes(RUN_ID, [
            {"gate_id": g, "title": g.replace("-", " "), "required": True,
             "verdict": "fail" if g == "node-is-primary" else "pass",
             "votes_pass": 1 if g == "node-is-primary" else 3,
             "votes_fail": 2 if g == "node-is-primary" else 0, "votes_error": 0}
            for g in gates
        ])
        await store.grading.record_module_results(RUN_ID, "behavioural", [
            {"id": "formats", "status": "ok", "rate": 1.0, "passed": 40, "failed": 0,
             "scored": 40},
            {"id": "unicode", "status": "ok", "rate": 0.75, "passed": 30, "failed": 10,
             "scored": 40, "detail": {"notes": ["east-asian width differs"]}},
            {"id": "inputs", "status": "timeout", "rate": 0.5, "passed": 5, "failed": 0,
             "errors": 5, "scored": 10},
        ])
        await store.grading.record_checks(RUN_ID, "behavioural", [
            {"id": "wide-cjk", "verdict": "fail", "summary": "stdout differs",
             "detail": "argv: [\"--max-width\", \"8\"]\nexpected exit 0, stdout:\n| 漢字 |"
                               "\nactual exit 0, stdout:\n| 漢字  |"},
            {"id": "ascii", "verdict": "pass", "summary": "ok"},
        ], module_id="unicode")
        for n, lane in enumerate(LANES, 1):
            await store.grading.record_adversary_round(
                RUN_ID, lane, status="broken" if n == 3 else "survived",
                focus=f"focus of lane {n}", duration_sec=60.0 * n, candidates=n - 1,
                started_at="2026-11-29T12:06:00.000000Z",
            )
        await store.grading.record_counterexample(
            RUN_ID,
            LANES[2],
            code="printf 'a,\"b\\r' | csvtab",
            verdict="upheld",
            reason="outputs differ",
            output_a="a | b",
            output_b="a | b\\r",
            exit_a=0,
            exit_b=0,
        )
        await store.runs.update_run(
            RUN_ID, finished_at="2026-11-29T12:14:05.000000Z", score=0.0, max_score=100.0,
            valid=True, blocked_by="audit", stop_reason="completed",
            grader_fingerprint="sha256:0123456789abcdef",
        )


async def seed_run(settings: Settings, *, finished: bool = True) -> str:
    """Seed the store (and the run's submission folder) with the deterministic run."""
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    await _seed(settings, finished=finished)
    submission = settings.runs_dir / RUN_ID / "submission"
    shutil.copytree(DEMO_TASK / "submissions" / "subtle", submission)
    return RUN_ID


def seed_finished_run(settings: Settings, *, finished: bool = True) -> str:
    """``seed_run`` for synchronous callers (the snapshot tests)."""
    return asyncio.run(seed_run(settings, finished=finished))


def _app(settings: Settings) -> SrbApp:
    return quiet_app(settings)


async def _open(app: SrbApp, pilot: object) -> RunScreen:
    app.open_run(RUN_ID)
    await until(pilot, lambda: isinstance(app.screen, RunScreen)
                and app.screen.detail is not None, "the run detail")
    screen = app.screen
    assert isinstance(screen, RunScreen)
    log = screen.query_one("#run-log", LogView)
    await until(pilot, lambda: log.line_text(LOG_LINES) is not None, "the last log page")
    return screen


async def test_header_and_timeline_of_a_finished_run(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(app, pilot)
        header = str(screen.query_one("#run-header", Static).render())
        assert RUN_ID in header and "replay:subtle" in header
        assert "elapsed 14:05 / budget 30:00" in header
        assert "score 0/100" in header
        timeline = str(screen.query_one("#run-timeline", Static).render())
        assert "✓ audit" in timeline and "✓ scored" in timeline
        log = screen.query_one("#run-log", LogView)
        assert log.follow and log.line_count == LOG_LINES
        # Following scrolls to the end on the next refresh: wait for it (with a deadline).
        await until(pilot, lambda: LOG_LINES in log.visible_seqs(), "the last line in view")
        await pilot.press("6")  # a run from before provenance was kept says so
        prov = " ".join(str(screen.query_one("#score-provenance", Static).render()).split())
        assert "provenance not recorded" in prov


async def test_stage_detail_tables_are_keyed_by_record(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    async with await Store.open(builtin_settings.db_path) as store:
        task = load_task(DEMO_TASK).task
        assert task is not None
        await record_launch(store, await store.runs.require_run(RUN_ID), task, client=None,
                            client_version=None, backend="local")
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("3")
        gates = screen.query_one("#audit-gates", DataTable)
        assert {str(k.value) for k in gates.rows} >= {"node-is-primary", "node-present"}
        assert str(gates.get_row("node-is-primary")[2]) == "fail"
        gates.move_cursor(row=gates.get_row_index("node-is-primary"))
        await pilot.pause()
        votes = screen.query_one("#audit-votes", DataTable)
        assert [str(k.value) for k in votes.rows] == [f"node-is-primary:{n}" for n in range(3)]
        reasoning = str(screen.query_one("#audit-reasoning", Static).render())
        assert "execs python3" in reasoning
        evidence = screen.query_one("#audit-evidence", DataTable)
        assert "submission:bin/csvtab:2" in [str(evidence.get_row(k)[1]) for k in
                                             [r.value for r in evidence.rows]]

        await pilot.press("4")
        modules = screen.query_one("#behav-modules", DataTable)
        assert str(modules.get_row("unicode")[1]) == "75%"
        assert "east-asian width" in str(modules.get_row("unicode")[7])
        assert str(modules.get_row("inputs")[6]) == "timeout"
        modules.move_cursor(row=modules.get_row_index("unicode"))
        await pilot.pause()
        checks = screen.query_one("#behav-checks", DataTable)
        assert [str(checks.get_row(k.value)[0]) for k in checks.rows] == ["wide-cjk"]
        await pilot.pause()
        assert screen.query_one("#behav-check-detail", Static).visual is not None

        await pilot.press("5")
        lanes = screen.query_one("#verif-lanes", DataTable)
        assert [str(k.value) for k in lanes.rows] == list(LANES)
        assert str(lanes.get_row(LANES[2])[1]) == "broken"
        assert str(lanes.get_row(LANES[2])[3]) == "3:00"
        assert str(lanes.get_row(LANES[5])[2]) == "5"
        lanes.move_cursor(row=2)
        await pilot.pause()
        candidates = screen.query_one("#verif-candidates", DataTable)
        assert candidates.row_count == 1
        assert str(candidates.get_row_at(0)[1]) == "upheld"

        await pilot.press("6")
        summary = str(screen.query_one("#score-summary", Static).render())
        assert "0 = Stage I fail" in summary and "Stage I failed" in summary
        prov = " ".join(str(screen.query_one("#score-provenance", Static).render()).split())
        assert f"grader {fingerprint()}" in prov
        assert f"task {task_digest(DEMO_TASK)[:19]}" in prov
        assert "client replay 0.1.0" in prov and "agent replay:subtle · scripted high" in prov
        assert "reviewer scripted" in prov and "f06-encodings fuzz" in prov
        assert "backend local · node local" in prov and "stamped launch" in prov
        tabs = screen.query_one("#run-tabs", TabbedContent)
        assert str(tabs.get_tab("tab-audit").label).startswith("✓")


async def test_verification_tab_shows_a_nondeterministic_submission(
    builtin_settings: Settings,
) -> None:
    """Issue 32: a candidate State A passed every attempt of while the submission failed
    some and passed others is stored as ``nondeterministic``; the Verification tab says so
    in its summary, in the candidate's verdict (counted as a break here) and, per attempt,
    in the candidate's detail."""
    await seed_run(builtin_settings)
    runs = [
        {"role": role, "attempt": attempt, "exit_code": 0 if role == "original" or attempt == 2
         else 1, "timed_out": False, "start_error": None}
        for attempt in (1, 2, 3) for role in ("original", "submission")
    ]
    reason = ("nondeterministic on the submission: State A passed all 3 attempts, the "
              "submission failed attempts 1, 3 and passed 2 of the same candidate")
    async with await Store.open(builtin_settings.db_path) as store:
        await store.grading.record_counterexample(
            RUN_ID, LANES[3], code="printf 'a\\001' | csvtab", verdict="nondeterministic",
            reason=reason, exit_a=0, exit_b=1, extra={"runs": runs, "counts_as_break": True},
        )  # fmt: skip
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("5")
        summary = str(screen.query_one("#verif-summary", Static).render())
        assert "1 candidate(s) nondeterministic on the submission" in summary
        assert "No adversary has run yet" not in summary
        lanes = screen.query_one("#verif-lanes", DataTable)
        lanes.move_cursor(row=3)
        await pilot.pause()
        candidates = screen.query_one("#verif-candidates", DataTable)
        await until(pilot, lambda: candidates.row_count == 1, "the lane's candidate")
        assert str(candidates.get_row_at(0)[1]) == "nondeterministic · break"
        assert str(candidates.get_row_at(0)[2]).startswith("nondeterministic on the submission")
        candidates.move_cursor(row=0)
        await pilot.pause()
        console = Console(width=200, record=True)
        console.print(screen.query_one("#verif-candidate-detail", Static).content)
        shown = console.export_text()
        assert "Attempts: 1: A pass · B fail  2: A pass · B pass  3: A pass · B fail" in shown
        assert reason in shown.replace("\n", " ")


async def test_evidence_row_opens_both_trees_at_the_cited_line(
        builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("3")
        gates = screen.query_one("#audit-gates", DataTable)
        gates.move_cursor(row=gates.get_row_index("node-is-primary"))
        await pilot.pause()
        evidence = screen.query_one("#audit-evidence", DataTable)
        evidence.focus()
        evidence.move_cursor(row=evidence.get_row_index("node-is-primary:0:0"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceDialog), "evidence dialog",
                    timeout=60)
        dialog = app.screen
        assert isinstance(dialog, EvidenceDialog)
        assert dialog.citation.label == "submission:bin/csvtab:2"
        right = str(dialog.query_one("#evidence-submission-text", Static).render())
        cited = (DEMO_TASK / "submissions" / "subtle" / "bin" / "csvtab").read_text()
        line_two = cited.splitlines()[1]
        assert re.search(rf"▶ *2 {re.escape(line_two)}", right)
        left = str(dialog.query_one("#evidence-original-text", Static).render())
        original = (DEMO_TASK / "submissions" / "untouched" / "bin" / "csvtab").read_text()
        assert re.search(rf"▶ *2 {re.escape(original.splitlines()[1])}", left)
        await pilot.press("escape")
        assert isinstance(app.screen, RunScreen)


async def test_log_filter_search_and_first_error(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(app, pilot)
        log = screen.query_one("#run-log", LogView)
        await pilot.press("s")  # stdout only
        assert log.stream == "stdout"
        await pilot.press("s")  # stderr only
        await until(pilot, lambda: log.index_ready, "the stderr index")
        stderr = [s for s in range(1, LOG_LINES + 1) if log_text(s)[0] == "stderr"]
        assert log.line_count == len(stderr)
        await until(pilot, lambda: all(log.line_text(s) is not None
                                       for s in log.visible_seqs()), "stderr lines")
        assert all("warning" in (log.line_text(s) or "") for s in log.visible_seqs())
        await pilot.press("s")  # srb's own lines: the seed has none
        assert log.stream == "srb"
        await until(pilot, lambda: log.index_ready, "the srb index")
        assert log.line_count == 0
        await pilot.press("s")
        assert log.stream == "all" and log.line_count == LOG_LINES

        await pilot.press("e")
        await until(pilot, lambda: log.cursor_seq is not None, "the first error")
        assert log.cursor_seq == TRACEBACK_AT  # before the first stderr line
        assert not log.follow
        assert TRACEBACK_AT in log.visible_seqs()

        await pilot.press("/")
        search = screen.query_one("#run-search", Input)
        assert search.has_focus
        await pilot.press(*"line 2500", "enter")
        await until(pilot, lambda: log.cursor_seq == 2500, "the search hit")
        await pilot.press("n")
        await until(pilot, lambda: "no more matches" in str(
            screen.query_one("#run-log-status", Static).render()), "end of matches")
        await pilot.press("N")
        await until(pilot, lambda: log.cursor_seq == 2500, "the previous match")
        await pilot.press("f")
        assert log.follow and LOG_LINES in log.visible_seqs()


async def test_cancel_of_a_finished_run_is_refused(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open(app, pilot)
        await pilot.press("c")
        assert not isinstance(app.screen, ConfirmDialog)
        assert any("nothing to cancel" in n.message for n in app._notifications)


async def test_unknown_run_is_explained(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_run("r-20261129-999999-zzzz")
        await until(pilot, lambda: isinstance(app.screen, RunScreen)
                    and app.screen.problem is not None, "the problem")
        header = str(app.screen.query_one("#run-header", Static).render())
        assert "No run r-20261129-999999-zzzz" in header


async def test_runs_screen_enter_opens_the_run(builtin_settings: Settings) -> None:
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        table = app.screen.query_one("#runs-table", DataTable)
        await until(pilot, lambda: table.row_count == 1, "the runs table")
        table.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run screen")
        assert app.screen.run_id == RUN_ID
        await pilot.press("escape")
        assert not isinstance(app.screen, RunScreen)


def test_seeded_state_a_matches(tmp_path: Path) -> None:
    """The evidence test relies on State A's bin/csvtab being the untouched one."""
    assert (DEMO_TASK / "submissions" / "untouched" / "bin" / "csvtab").is_file()


async def test_log_of_a_run_another_process_drives_grows_and_marks_srb_lines(
        builtin_settings: Settings) -> None:
    """Issue 35 item 4: a run driven by another srb process (a CLI run, a background driver)
    sends this console no events; its Log tab now takes in the lines that process stores,
    and srb's own lines (stream srb) are marked apart from the agent's."""
    await seed_run(builtin_settings, finished=False)
    app = _app(builtin_settings)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(app, pilot)
        log = screen.query_one("#run-log", LogView)
        assert log.line_count == LOG_LINES
        store = await app.run_host.store()  # as the other process would: no event here
        await store.logs.append_log_lines(RUN_ID, [
            ("2026-11-29T12:40:00.000000000Z", "srb", "status → collecting"),
            ("2026-11-29T12:40:01.000000000Z", "stdout", "late agent line"),
        ])
        await until(pilot, lambda: log.line_count == LOG_LINES + 2, "the stored lines", 15)
        await until(pilot, lambda: log.line_text(LOG_LINES + 1) is not None, "the new page")
        assert log.line_text(LOG_LINES + 1) == "status → collecting"
        marked = screen.query_one("#run-log", LogView)._make_strip(
            LOG_LINES + 1, ("srb", "status → collecting")).text
        assert "▸ srb  status → collecting" in marked
        plain = log._make_strip(LOG_LINES + 2, ("stdout", "late agent line")).text
        assert "▸ srb" not in plain


async def test_the_identity_line_fits_a_narrow_header(builtin_settings: Settings) -> None:
    """The walk at 80×24: "· node local" wrapped onto a line of its own. A narrow header
    leaves out the local node, then the run id (the title bar names the run); wide, both."""
    await seed_run(builtin_settings)
    app = _app(builtin_settings)
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await _open(app, pilot)
        header = screen.query_one("#run-header", Static)
        first = str(header.render()).splitlines()[0]
        assert len(first) <= header.content_size.width, first
        assert "node local" not in first and "replay:subtle" in first
        assert screen.sub_title == f"Run {RUN_ID}"  # the title bar names the run
        await pilot.resize_terminal(160, 36)
        await until(pilot, lambda: "node local" in str(header.render()).splitlines()[0],
                    "the whole identity line")
        assert str(header.render()).startswith(RUN_ID)
