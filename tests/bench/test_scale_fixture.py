"""Issue 38 item 1: bench/scale_fixture.py writes a task in the published schema at fw03's
size -- 14 Stage II modules, 25,000 checks recorded from State A -- with submissions that
fail exactly 1 and 2,000 of them (the grading itself: tests/ui/test_scale_fixture_behavioural.py
and bench/bench_stage_overhead.py --scale)."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from srb_tui.schema import load_task

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import scale_fixture


def test_the_fixture_is_a_valid_task_of_25000_recorded_checks(tmp_path: Path) -> None:
    task = scale_fixture.build(tmp_path, 25_000, 14)
    load = load_task(task)
    assert load.ok and load.task is not None and not load.missing, load.errors
    assert load.task.id == scale_fixture.NAME
    beh = task / "tests" / "behavioural"
    suite = tomllib.loads((beh / "suite.toml").read_text(encoding="utf-8"))
    ids = [m["id"] for m in suite["module"]]
    assert ids == [f"m{k:02d}" for k in range(1, 15)]
    assert load.task.module_ids == tuple(ids)
    rows = {mid: json.loads((beh / "data" / "expected" / f"{mid}.json").read_text())["rows"]
            for mid in ids}
    assert sum(len(r) for r in rows.values()) == 25_000
    # recorded from State A (csvtab -f tsv): one tab-separated output row per input row
    first = (beh / "data" / "cases" / "inputs" / "m01.csv").read_text().splitlines()[0]
    assert rows["m01"][0] == first.replace(",", "\t")
    recorded = [row for r in rows.values() for row in r]
    assert sum(scale_fixture.FAULT_ONE in row for row in recorded) == 1
    assert sum(scale_fixture.FAULT_MANY in row for row in recorded) == scale_fixture.FAILING
    for name in ("reference", "fail-1", "fail-2000"):
        assert (task / "submissions" / name / "bin" / "csvtab").is_file()
    wrapper = (task / "submissions" / "fail-1" / "bin" / "csvtab").read_text()
    assert repr(scale_fixture.FAULT_ONE) in wrapper and "FAULT-ONE" in wrapper
