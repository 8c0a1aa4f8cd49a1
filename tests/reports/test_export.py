"""``srb export`` over a synthetic store: Parquet read back by DuckDB gives Table 2's counts
exactly; ATIF trajectories validate against the vendored schema (and a broken one does not);
ungraded runs are named, not exported as results."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import duckdb
import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from srb_tui.reports.atif import problems, schema
from srb_tui.store import Store

from .synth import Spec, add_run

SPECS = [
    Spec("t1", "replay:a"), Spec("t2", "replay:a"), Spec("t1", "replay:a", audit="fail"),
    Spec("t2", "replay:b", modules=(("m1", 3, 4),)), Spec("t1", "replay:b", broken=("a02",)),
    Spec("t2", "replay:b", audit="fail", modules=(("m1", 1, 4),)),
    Spec("t1", "replay:b", infra_error=True), Spec("t2", "replay:a", cancelled=True),
]


async def _store(state: Path) -> list[str]:
    async with await Store.open(state / "srb.sqlite3") as store:
        ids = [await add_run(store, spec) for spec in SPECS]
        rid = ids[0]
        await store.agent.start_agent_round(rid, 1, prompt_kind="initial", first_log_seq=0)
        await store.agent.append_agent_events(rid, 1, [
            ("2026-01-01T00:00:01Z", "message", {"text": "I will read the tree."}),
            ("2026-01-01T00:00:02Z", "tool_call", {"id": "c1", "name": "Bash",
                                                         "input": {"command": "ls"}}),
            ("2026-01-01T00:00:03Z", "tool_result", {"id": "c1", "output": "bin\nsrc",
                                                           "is_error": False}),
            ("2026-01-01T00:00:04Z", "tool_call", {"id": "c2", "name": "Read",
                                                         "input": "src/a.py"}),
            ("2026-01-01T00:00:05Z", "tool_result", {"id": "c2", "output": "no such file",
                                                           "is_error": True}),
            ("2026-01-01T00:00:06Z", "message", {"text": "Done."}),
        ])
        await store.agent.finish_agent_round(rid, 1, input_tokens=1200, output_tokens=300,
                                             cache_read_tokens=800, client_cost_usd=0.042,
                                             final_message="Done.")
        return ids


def test_parquet_in_duckdb_is_table2(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    asyncio.run(_store(tmp_path))
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path)]
    assert main([*base, "report", "--json", "--table", "table2"]) == codes.OK
    table2 = json.loads(capsys.readouterr().out)["tables"][0]
    out = tmp_path / "export"
    assert main([*base, "export", "-o", str(out), "--parquet", "--json"]) == codes.OK
    written = json.loads(capsys.readouterr().out)["parquet"]
    assert written["runs"] == len(SPECS) and written["adversary_rounds"] == 18
    runs = out / "parquet" / "runs.parquet"
    got = dict(((c, o), n) for c, o, n in duckdb.sql(
        f"SELECT config, outcome, count(*) FROM '{runs}' GROUP BY ALL").fetchall())
    keys = ("audit_fail", "blindness", "behavioural_fail", "counterexample", "accepted",
            "invalid")
    for row in table2["rows"]:
        for key in keys:
            assert got.get((row["config"], key), 0) == row[key], (row["config"], key)
        counted = duckdb.sql(f"SELECT count(*) FROM '{runs}' WHERE counted AND config = "
                             f"'{row['config']}'").fetchall()
        assert counted == [(row["runs"],)]
    stages = duckdb.sql(f"SELECT count(*) FROM '{out / 'parquet' / 'stage_results.parquet'}'"
                        ).fetchall()
    assert stages == [(written["stage_results"],)]
    readme = (out / "parquet" / "README.md").read_text()
    assert "## counterexamples.parquet" in readme and "| `outcome` | str |" in readme


def test_atif_validates_and_carries_tool_calls_and_tokens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = asyncio.run(_store(tmp_path))
    out = tmp_path / "export"
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path)]
    assert main([*base, "export", "-o", str(out), "--atif", "task:t1"]) == codes.OK
    capsys.readouterr()
    files = sorted((out / "atif").glob("*.json"))
    assert len(files) == 4  # every t1 run, built-in agents included
    doc = json.loads((out / "atif" / f"{ids[0]}.json").read_text())
    assert problems(doc) == []
    assert doc["schema_version"] == "ATIF-v1.8"
    steps = doc["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    calls = [c for s in steps for c in s.get("tool_calls", [])]
    assert [c["function_name"] for c in calls] == ["Bash", "Read"]
    assert calls[1]["arguments"] == {"input": "src/a.py"}
    results = [r for s in steps for r in s.get("observation", {}).get("results", [])]
    assert [r["source_call_id"] for r in results] == ["c1", "c2"]
    metrics = steps[-1]["metrics"]
    assert metrics["prompt_tokens"] == 2000 and metrics["completion_tokens"] == 300
    assert metrics["cost_usd"] == pytest.approx(0.042)
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(0.042)
    # the schema is the one generated from harbor's models, and it does reject
    assert "harbor 0.25.0" in schema()["$comment"]
    broken = {**doc, "steps": [{**steps[0], "step_id": 2}, *steps[1:]]}
    assert any("sequential" in p for p in problems(broken))
    assert problems({**doc, "steps": [{**steps[0], "source": "robot"}]})
    assert problems({k: v for k, v in doc.items() if k != "agent"})


def test_results_skip_runs_that_were_not_graded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_store(tmp_path))
    out = tmp_path / "export"
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path)]
    assert main([*base, "export", "-o", str(out), "--results", "--json"]) == codes.OK
    captured = capsys.readouterr()
    done = json.loads(captured.out)
    assert done["results"] == 0 and len(done["skipped"]) == len(SPECS)
    assert "not graded" in captured.err
    (tmp_path / "file").write_text("x")
    assert main([*base, "export", "-o", str(tmp_path / "file")]) == codes.USAGE
