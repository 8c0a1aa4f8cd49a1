"""``srb report`` in every format and ``srb labels import`` (good and bad files), through the
real CLI entry point over a synthetic store."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from srb_tui.store import Store

from .synth import Spec, add_run


async def _store(state: Path) -> list[str]:
    async with await Store.open(state / "srb.sqlite3") as store:
        return [
            await add_run(store, Spec("t1", "replay:a")),
            await add_run(store, Spec("t1", "replay:a", audit="fail")),
            await add_run(store, Spec("t2", "replay:b", modules=(("m1", 3, 4),))),
            await add_run(store, Spec("t2", "replay:b", infra_error=True)),
        ]


def test_report_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_store(tmp_path))
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path), "report"]

    assert main([*base, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    funnel = next(t for t in doc["tables"] if t["id"] == "table2")
    by_config = {row["config"]: row for row in funnel["rows"]}
    assert by_config["replay:a"]["accepted"] == 1
    assert by_config["replay:a"]["blindness"] == 1
    assert by_config["replay:b"]["behavioural_fail"] == 1
    assert by_config["replay:b"]["invalid"] == 1
    assert doc["counts"]["invalid"] == 1

    assert main([*base, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Table 2 · the three-stage funnel per configuration" in md
    assert "| replay:a | replay |" in md
    assert "4 runs: 3 counted, 1 invalid (excluded)" in md

    assert main([*base, "--format", "csv", "--table", "table9"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["# table9: Table 9 · per task"]
    assert rows[1][:3] == ["Task", "Class", "n"]
    assert rows[2][:4] == ["t1", "unclassified", "2", "1"]

    assert main([*base, "--format", "latex", "--table", "table3"]) == 0
    tex = capsys.readouterr().out
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "replay:a & replay &" in tex
    assert "Behavioural pass \\%" in tex

    out = tmp_path / "r.md"
    assert main([*base, "task:t2", "-o", str(out)]) == 0
    assert "replay:a" not in out.read_text()


def test_report_filter_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    asyncio.run(_store(tmp_path))
    code = main(["--state", str(tmp_path), "report", "status:bogus"])
    assert code == codes.USAGE
    assert "status:bogus is not a run status" in capsys.readouterr().err
    assert main(["--state", str(tmp_path), "report", "--campaign", "nope"]) == codes.NOT_FOUND
    assert "no campaign 'nope'" in capsys.readouterr().err


def test_labels_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = asyncio.run(_store(tmp_path))
    good = tmp_path / "labels.csv"
    good.write_text(f"annotator,run_id,genuine\nann1,{ids[0]},yes\nann1,{ids[1]},no\n")
    assert main(["--state", str(tmp_path), "labels", "import", str(good)]) == 0
    assert "imported 2 label(s) by ann1" in capsys.readouterr().out

    bad = tmp_path / "bad.csv"
    bad.write_text(f"run_id,genuine,annotator\n{ids[2]},maybe,ann2\n,yes,ann2\n"
                   f"{ids[0]},no,ann1\n{ids[0]},yes,ann1\n")
    assert main(["--state", str(tmp_path), "labels", "import", str(bad)]) == codes.FAILED
    err = capsys.readouterr().err
    assert f"{bad}:2: column genuine: 'maybe' is not yes/no" in err
    assert f"{bad}:3: column run_id is empty" in err
    assert "labelled twice by ann1 (first on line 4)" in err

    unknown = tmp_path / "unknown.csv"
    unknown.write_text(f"run_id,genuine,annotator\n{ids[2]},yes,ann2\nr-20990101-000000-beef,"
                       "no,ann2\n")
    assert main(["--state", str(tmp_path), "labels", "import", str(unknown)]) == codes.FAILED
    assert f"{unknown}:3: no run 'r-20990101-000000-beef'" in capsys.readouterr().err

    async def stored() -> tuple[list[bool], list[bool]]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            return ([lb.genuine for lb in await store.labels.labels(ids[2])],
                    [lb.genuine for lb in await store.labels.labels(ids[1])])

    refused, kept = asyncio.run(stored())
    assert refused == []  # nothing of the refused file was stored
    assert kept == [False]
