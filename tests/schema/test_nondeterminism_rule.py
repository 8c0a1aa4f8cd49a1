"""`srb tasks validate` checks probe.toml's ``[metadata] nondeterminism`` (issue 32: what a
submission nondeterministic for a candidate counts as), rather than a run finding out at
Stage III."""

from __future__ import annotations

import shutil
from pathlib import Path

from srb_tui.schema.published import validate_task
from tests.conftest import DEMO_TASK

PROBE = "tests/verification/probe.toml"


def _rule(tmp_path: Path, value: str) -> list[str]:
    task = tmp_path / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task, ignore=shutil.ignore_patterns("submissions"))
    probe = task / PROBE
    text = probe.read_text(encoding="utf-8")
    assert 'nondeterminism = "break"' in text, "the demo counts nondeterminism as a break"
    probe.write_text(text.replace('nondeterminism = "break"', f"nondeterminism = {value}"),
                     encoding="utf-8")
    return [p.message for p in validate_task(task).problems if p.key == "metadata.nondeterminism"]


def test_the_two_rules_are_accepted_and_another_is_an_error(tmp_path: Path) -> None:
    assert _rule(tmp_path / "a", '"reject"') == []
    assert _rule(tmp_path / "b", '"break"') == []
    found = _rule(tmp_path / "c", '"count"')
    assert len(found) == 1 and found[0].startswith("'count': expected"), found
