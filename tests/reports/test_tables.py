"""Every table over a synthetic store with known outcomes, checked cell by cell against
tables computed by hand (the arithmetic is in the comments).

The store: two configurations (replay:a, replay:b) × three tasks in three classes.
  #1  a t1 accepted (6 survivors)             #7  b t1 counterexample (a03 alone, 60 s)
  #2  a t1 counterexample (a01 120 s, a02 300 s)  #8  b t2 Stage II fail 995/1000, gate 2:1
  #3  a t2 blindness 1000/1000 (gate 0:3)             #9  b t3 Stage II fail 999/1000 (m1/c9)
  #4  a t2 Stage II fail 999/1000 (m1/c7)     #10 b t3 cancelled
  #5  a t3 Stage I fail 500/1000 (gate 1:2)   #11 b t1 verification errored → invalid
  #6  a t3 infra_error → invalid
t3 ("build") has no Stage III entrant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.reports import build_report, load_runs
from srb_tui.reports.agreement import cohen_kappa
from srb_tui.reports.model import Report
from srb_tui.store import Store
from srb_tui.store.labels import HumanLabel

from .synth import Spec, add_run

CATEGORIES = {"t1": "language", "t2": "framework", "t3": "build"}


async def _populate(store: Store) -> dict[int, str]:
    a, b = "replay:a", "replay:b"
    specs = {
        1: Spec("t1", a),
        2: Spec("t1", a, broken=("a01", "a02"), durations={"a01": 120.0, "a02": 300.0}),
        3: Spec("t2", a, audit="fail", modules=(("m1", 1000, 1000),), gates=(("g1", 0, 3),)),
        4: Spec("t2", a, modules=(("m1", 999, 1000),), missed=(("m1", "c7"),)),
        5: Spec("t3", a, audit="fail", modules=(("m1", 500, 1000),), gates=(("g1", 1, 2),)),
        6: Spec("t3", a, infra_error=True),
        7: Spec("t1", b, broken=("a03",), durations={"a03": 60.0}),
        8: Spec("t2", b, modules=(("m1", 995, 1000),), gates=(("g1", 2, 1),)),
        9: Spec("t3", b, modules=(("m1", 999, 1000),), missed=(("m1", "c9"),)),
        10: Spec("t3", b, cancelled=True),
        11: Spec("t1", b, errored=("a06",)),
    }
    return {n: await add_run(store, spec) for n, spec in specs.items()}


@pytest.fixture
async def report(tmp_path: Path) -> tuple[Report, dict[int, str]]:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        ids = await _populate(store)
        await store.labels.import_labels([
            HumanLabel(ids[1], "ann1", True), HumanLabel(ids[3], "ann1", True),
            HumanLabel(ids[3], "ann2", True), HumanLabel(ids[4], "ann1", False),
            HumanLabel(ids[5], "ann1", False), HumanLabel(ids[8], "ann1", True),
            HumanLabel(ids[8], "ann2", False), HumanLabel(ids[6], "ann1", True),
        ], "labels.csv")
        runs, order, ledger = await load_runs(store, categories=CATEGORIES)
    return build_report(runs, config_order=order, has_ledger=ledger), ids


def _row(report: Report, table: str, key: str) -> dict[str, object]:
    t = report.table(table)
    return {c.key: t.cell(key, c.key) for c in t.columns}


async def test_counts(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    assert r.counts["runs"] == 11
    assert r.counts["counted"] == 8
    assert r.counts["invalid"] == 2
    assert r.counts["cancelled"] == 1


async def test_table2_funnel(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    a = _row(r, "table2", "replay:a")
    assert [a[k] for k in ("audit_fail", "blindness", "behavioural_fail", "counterexample",
                           "accepted", "runs", "invalid", "other")] == [1, 1, 1, 1, 1, 5, 1, 0]
    b = _row(r, "table2", "replay:b")
    assert [b[k] for k in ("audit_fail", "blindness", "behavioural_fail", "counterexample",
                           "accepted", "runs", "invalid", "other")] == [0, 0, 2, 1, 0, 3, 1, 1]
    total = _row(r, "table2", "All")
    assert [total[k] for k in ("audit_fail", "blindness", "behavioural_fail", "counterexample",
                               "accepted", "runs", "invalid")] == [1, 1, 3, 2, 1, 8, 2]
    assert a["harness"] == "replay"


async def test_table3_leaderboard(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    a = _row(r, "table3", "replay:a")
    # fractions 1, 1, 1, .999, .5 → 89.98 %; scores 100, 80, 0, 0, 0 → 36
    assert a["runs"] == 5
    assert a["behavioural"] == pytest.approx(89.98)
    assert a["score"] == pytest.approx(36.0)
    assert a["cost"] is None
    assert a["accepted"] == 1
    b = _row(r, "table3", "replay:b")
    # fractions 1, .995, .999 → 99.8 %; scores 90, 0, 0 → 30
    assert b["behavioural"] == pytest.approx(99.8)
    assert b["score"] == pytest.approx(30.0)
    assert any("no ledger" in n for n in r.table("table3").notes)


async def test_table4_by_class(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    t = r.table("table4")
    assert t.column("class") == ["build", "framework", "language"]
    lang = _row(r, "table4", "language")
    assert [lang[k] for k in ("tasks", "runs", "migrated", "all_pass", "accepted", "blindness",
                              "invalid")] == [1, 3, 3, 3, 1, 0, 1]
    assert lang["migrated_pct"] == pytest.approx(100.0)
    assert lang["broken_pct"] == pytest.approx(200 / 3)  # 2 of 3 entrants broken
    assert lang["score"] == pytest.approx(90.0)
    fw = _row(r, "table4", "framework")
    assert [fw[k] for k in ("runs", "migrated", "all_pass", "accepted", "blindness")] == \
        [3, 2, 1, 0, 1]
    assert fw["migrated_pct"] == pytest.approx(200 / 3)
    assert fw["broken_pct"] is None  # no Stage III entrant
    build = _row(r, "table4", "build")
    assert [build[k] for k in ("tasks", "runs", "migrated", "all_pass", "invalid")] == \
        [1, 2, 1, 0, 1]
    assert build["broken_pct"] is None
    assert build["score"] == pytest.approx(0.0)


async def test_table5_conditional(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    lang = _row(r, "table5", "language")
    assert (lang["stage1"], lang["stage2"], lang["stage3"]) == ("3/3", "3/3", "1/3")
    assert lang["stage3_pct"] == pytest.approx(100 / 3)
    fw = _row(r, "table5", "framework")
    assert (fw["stage1"], fw["stage2"], fw["stage3"]) == ("2/3", "0/2", "0/0")
    assert fw["stage2_pct"] == pytest.approx(0.0)
    assert fw["stage3_pct"] is None
    build = _row(r, "table5", "build")
    assert (build["stage1"], build["stage2"], build["stage3"]) == ("1/2", "0/1", "0/0")
    total = _row(r, "table5", "All")
    assert (total["runs"], total["stage1"], total["stage2"], total["stage3"]) == \
        (8, "6/8", "3/6", "1/3")
    assert total["stage1_pct"] == pytest.approx(75.0)
    assert total["score"] == pytest.approx(270 / 8)


async def test_table9_per_task(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    want = {
        "t1": [3, 3, 3, 0, 1, 90.0, 1],
        "t2": [3, 2, 1, 1, 0, 0.0, 0],
        "t3": [2, 1, 0, 0, 0, 0.0, 1],
        "All tasks": [8, 6, 4, 1, 1, 33.75, 2],
    }
    keys = ("runs", "migrated", "all_pass", "blindness", "accepted", "score", "invalid")
    for task, values in want.items():
        row = _row(r, "table9", task)
        assert [row[k] for k in keys] == pytest.approx(values), task
    assert _row(r, "table9", "t2")["class"] == "framework"


async def test_figure5a_levels_and_missed_alone(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    # migrated & measured: 1, 1, .999, 1, .995, .999 (six runs)
    t = r.table("figure5a")
    assert t.column("runs") == [6, 6, 6, 5, 3]
    assert t.column("share") == pytest.approx([100.0, 100.0, 100.0, 500 / 6, 50.0])
    # [99 %, 100 %): #4 misses 1, #8 misses 5, #9 misses 1 → median 1
    assert any("3 runs in [99%, 100%), missing a median of 1 checks; 2 miss exactly one" in n
               for n in t.notes)
    alone = r.table("missed_alone")
    # a tie (one run each) is ordered by check id
    assert alone.rows == [["m1/c7", "t2", 1, 1], ["m1/c9", "t3", 1, 1]]


async def test_figure5b_and_times(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    t = r.table("figure5b")
    assert t.column("runs") == [0, 0, 0, 0, 1, 1, 1]  # survivors 6, 4, 5
    assert any("3 Stage III entrants; 2 had a counterexample upheld; mean survivors 5.00"
               in n for n in t.notes)
    times = r.table("stage3_times")
    assert times.cell("counterexample", "rounds") == 3
    assert times.cell("counterexample", "median_min") == pytest.approx(2.0)  # 1, 2, 5 min
    assert times.cell("survival", "rounds") == 15
    assert times.cell("survival", "median_min") == pytest.approx(10.0)


async def test_stage1_consistency(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    t = r.table("stage1")
    assert t.cell("gate verdicts", "n") == 8
    assert t.cell("unanimous", "n") == 6
    assert t.cell("split (majority)", "n") == 2
    assert t.cell("tied (counted pass)", "n") == 0
    assert t.cell("runs passing Stage I", "n") == 6
    assert t.cell("passed only by majority", "n") == 1
    assert t.cell("would pass if any dissent counted", "n") == 5


async def test_figure6_verifiers(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    t = r.table("figure6")
    assert t.column("slot") == ["a01", "a02", "a03", "a04", "a05", "a06"]
    assert t.column("verifier")[0] == "a01 · opus"
    assert t.column("rounds") == [3] * 6  # the invalid run #11 is not counted
    assert t.column("broken") == [1, 1, 1, 0, 0, 0]
    assert t.column("exclusive") == [0, 0, 1, 0, 0, 0]
    assert t.cell("a01 · opus", "rate") == pytest.approx(100 / 3)
    assert t.column("errors") == [0] * 6
    assert "model opus: 2/6 rounds broke (33.3%)" in t.notes


async def test_table6_agreement(report: tuple[Report, dict[int, str]]) -> None:
    r, _ = report
    t = r.table("table6")
    keys = ("runs", "human", "judge", "agree", "strict", "lenient")
    assert [t.cell("t1", k) for k in keys] == [1, 1, 1, 1, 0, 0]
    assert [t.cell("t2", k) for k in keys] == [2, 1, 1, 0, 1, 1]
    assert t.cell("t2", "kappa") == pytest.approx(-1.0)
    assert t.cell("t1", "kappa") is None  # one rating class only: κ undefined
    assert [t.cell("t3", k) for k in keys] == [1, 0, 0, 1, 0, 0]
    assert [t.total[i + 2] for i in range(6)] == [4, 2, 2, 2, 1, 1]  # type: ignore[index]
    assert t.total[-1] == pytest.approx(0.0)  # type: ignore[index]
    assert any("1 labelled run(s) left out" in n for n in t.notes)


def test_cohen_kappa_matches_the_paper() -> None:
    # 156 runs: both yes 75, human yes/judge no 14, human no/judge yes 2, both no 65.
    pairs = ([(True, True)] * 75 + [(True, False)] * 14 + [(False, True)] * 2
             + [(False, False)] * 65)
    assert cohen_kappa(pairs) == pytest.approx(0.795, abs=5e-4)


async def test_campaign_and_filter_selection(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _populate(store)
        runs, _, _ = await load_runs(store, filters={"agent": "replay:b"},
                                     categories=CATEGORIES)
        assert {x.config for x in runs} == {"replay:b"}
        assert len(runs) == 5
        runs, _, _ = await load_runs(store, filters={"task": "t3", "status": "scored"})
        assert [x.category for x in runs] == ["unclassified", "unclassified"]


async def test_cost_from_a_ledger_table(tmp_path: Path) -> None:
    """With rows in the gateway's ledger, Table 3's cost is the mean agent spend per run;
    the reviewer's and the verifiers' spend are their own columns, never the agent's."""
    import sqlite3

    db = tmp_path / "srb.sqlite3"
    async with await Store.open(db) as store:
        ids = await _populate(store)
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany("INSERT INTO ledger (run_id, role, cost_usd, route, status, latency_ms,"
                         " at) VALUES (?, ?, ?, '/v1/messages', 200, 1.0, '2026-01-01')", [
            (ids[1], "agent", 1.0), (ids[1], "agent", 2.0), (ids[2], "agent", 5.0),
            (ids[2], "reviewer", 100.0), (ids[3], "agent", None),
            (ids[3], "adversary", 0.5), (ids[3], "adversary", 0.25),
        ])
    conn.close()
    async with await Store.open(db) as store:
        runs, order, ledger = await load_runs(store, categories=CATEGORIES)
    report = build_report(runs, config_order=order, has_ledger=ledger)
    # replay:a: run 1 spent 3.00, run 2 5.00, the rest nothing priced → mean over priced = 4
    assert report.table("table3").cell("replay:a", "cost") == pytest.approx(4.0)
    assert report.table("table3").cell("replay:b", "cost") is None
    assert report.table("table3").cell("replay:a", "reviewer_cost") == pytest.approx(100.0)
    assert report.table("table3").cell("replay:a", "verifier_cost") == pytest.approx(0.75)
    assert report.table("table3").cell("replay:b", "verifier_cost") is None
    assert report.table("table3").cell("replay:b", "reviewer_cost") is None


async def test_figure6_takes_native_efforts_from_the_probe(tmp_path: Path) -> None:
    """A native round carries no effort; the task's probe.toml gives it (``task_facts``).
    Only t1 has Stage III entrants (#1, #2, #7)."""
    async with await Store.open(tmp_path / "srb.sqlite3") as store:
        await _populate(store)
        efforts = {("t1", "a01"): "high", ("t1", "a02"): "low"}
        runs, order, ledger = await load_runs(store, categories=CATEGORIES, efforts=efforts)
    t = build_report(runs, config_order=order, has_ledger=ledger).table("figure6")
    assert t.column("verifier")[:3] == ["a01 · opus · high", "a02 · opus · low", "a03 · sonnet"]
    assert t.column("effort")[:3] == ["high", "low", None]
    assert t.cell("a01 · opus · high", "rounds") == 3
    assert t.cell("a02 · opus · low", "broken") == 1


def test_task_facts_reads_each_adversarys_effort_from_probe_toml(tmp_path: Path) -> None:
    import shutil

    from srb_tui.reports.task_facts import task_facts
    from tests.conftest import DEMO_TASK

    task = tmp_path / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task)
    probe = task / "tests" / "verification" / "probe.toml"
    text = probe.read_text()
    first = text.index('id = "f01-bytes-default-table"')
    cut = text.index("[adversary.metadata]", first)
    probe.write_text(text[:cut] + '[adversary.driver_options]\nreasoning_effort = "xhigh"\n'
                     + text[cut:])
    categories, efforts = task_facts([tmp_path])
    assert categories[DEMO_TASK.name] == "language-rewrite"
    assert efforts == {(DEMO_TASK.name, "f01-bytes-default-table"): "xhigh"}
