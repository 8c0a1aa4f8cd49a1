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


def _behaviour_only(tmp_path: Path, value: str) -> list[str]:
    task = tmp_path / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task, ignore=shutil.ignore_patterns("submissions"))
    probe = task / PROBE
    text = probe.read_text(encoding="utf-8")
    assert "behaviour_only = true" in text, "srb's demo judges behaviour only"
    probe.write_text(text.replace("behaviour_only = true", f"behaviour_only = {value}"),
                     encoding="utf-8")
    return [p.message for p in validate_task(task).problems if p.key == "metadata.behaviour_only"]


def test_behaviour_only_is_a_boolean(tmp_path: Path) -> None:
    """Issue 32 item 6: the closed working copy and "did not run the program" are srb's own
    rule, asked for by a boolean; a string (which would read as true) is an error."""
    assert _behaviour_only(tmp_path / "a", "true") == []
    assert _behaviour_only(tmp_path / "b", "false") == []
    found = _behaviour_only(tmp_path / "c", '"yes"')
    assert len(found) == 1 and found[0].startswith("'yes': expected true"), found
