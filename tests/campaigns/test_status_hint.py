"""``srb campaign status`` ends by naming the report and the compare of its first two
configurations, and the commands it names work on that campaign (real SQLite, real CLI)."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes

from .seed import seed_campaign


def test_status_names_the_report_and_the_compare(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(seed_campaign(tmp_path / "srb.sqlite3"))
    base = ["--tasks", str(tmp_path / "none"), "--state", str(tmp_path)]
    assert main([*base, "campaign", "status", "demo"]) == codes.OK
    said = " ".join(capsys.readouterr().out.split())
    hint = "srb report --campaign demo --compare reference subtle"
    assert "srb report --campaign demo ·" in said and hint in said, said
    words = shlex.split(hint)[1:]
    assert main([*base, *words, "--json"]) == codes.OK
    doc = json.loads(capsys.readouterr().out)
    row = doc["tables"][0]["rows"][0]
    assert (row["a"], row["b"], row["tasks"]) == ("reference", "subtle", 1)
    assert "One shared task" in " ".join(doc["tables"][0]["notes"])
    assert main([*base, "campaign", "status", "demo", "--json"]) == codes.OK
    assert "srb report" not in capsys.readouterr().out  # one JSON document only
