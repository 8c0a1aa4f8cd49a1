"""``srb tasks record`` on demo02: State A's server graded against its own recorded answers
scores 1.0 on every module (the handler runs its own event loop: a plain function)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srb_tui.config import Settings

from ..conftest import DEMO02_TASK
from .test_commands import parse, run_handler

pytestmark = pytest.mark.docker


def test_demo02_identity_run_scores_one(
    builtin_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_handler(parse("tasks", "record", DEMO02_TASK.name, "--json"), builtin_settings)
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    assert doc["ok"] is True and doc["failing"] == []
    assert [(m["id"], m["status"], m["rate"]) for m in doc["modules"]] == [
        ("routing", "ok", 1.0), ("negotiation", "ok", 1.0), ("queries", "ok", 1.0),
    ]  # fmt: skip
    assert sum(m["scored"] for m in doc["modules"]) == 154
    assert Path(doc["record"]).is_file()
