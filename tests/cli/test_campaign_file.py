"""Campaign files checked before they run (issue 26, 8): ``srb campaign validate FILE``,
``srb campaign run FILE --dry-run``, the format in ``--help`` and the README, and
messages that carry ``[campaign.key]`` (an empty file is one message, not three)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srb_tui.campaigns.spec import FORMAT, parse_campaign
from srb_tui.commands import exit_codes as codes
from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK, REPO

TASKS = ("--tasks", str(DEMO_TASK.parent))
GOOD = """[campaign]
tasks = ["demo01-*"]
repeats = 2

[[config]]
label = "ref"
agent = "replay:reference"

[[config]]
label = "blind"
agent = "untouched"
"""
FILES = {
    "empty.toml": ("", codes.FAILED, ["empty.toml [campaign]: the file is empty"]),
    "keys.toml": (GOOD.replace("repeats = 2", "repeats = 2\ncolour = \"red\"")
                  .replace('label = "blind"', 'label = "blind"\nshade = 1'),
                  codes.FAILED, ["keys.toml:4 [campaign.colour]: unknown key `colour`",
                                 "[config[1].shade]: unknown key `shade`"]),
    "nothing.toml": (GOOD.replace("demo01-*", "zz-*"), codes.FAILED,
                     ["[campaign.tasks[0]]: `zz-*` matches no task"]),
    "agent.toml": (GOOD.replace("untouched", "frobnicator:x"), codes.FAILED,
                   ["agent.toml:11 [config[1].agent]: agent 'frobnicator:x'"]),
    # issue 35 item 11: every problem in one pass, each with file:line
    "all.toml": (GOOD.replace("repeats = 2", "repeats = 2\ncolour = \"red\"")
                 .replace("untouched", "frobnicator:x").replace('"demo01-*"', '"demo01-*", "zz-*"'),
                 codes.FAILED, ["all.toml:4 [campaign.colour]: unknown key `colour`",
                                "[campaign.tasks[1]]: `zz-*` matches no task",
                                "all.toml:12 [config[1].agent]: agent 'frobnicator:x'"]),
    "good.toml": (GOOD, codes.OK, ["ok, 4 cell(s) = 1 task(s) × 2 config(s) × 2 repeat(s)"]),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_validate_names_every_problem_with_its_key(name: str, tmp_path: Path) -> None:
    text, code, messages = FILES[name]
    (tmp_path / name).write_text(text)
    state = tmp_path / "state"
    out = srb(*TASKS, "campaign", "validate", name, state=state, cwd=tmp_path)
    every = out.stdout + out.stderr
    assert "Traceback" not in every
    assert out.returncode == code, every
    for message in messages:
        assert message in every, every
    assert len(set(out.stderr.splitlines())) == len(out.stderr.splitlines()), out.stderr
    assert not state.exists()  # no store, no engine: a file check


def test_an_empty_file_is_one_problem() -> None:
    assert len(parse_campaign("", "e.toml", "e").problems) == 1
    only_config = parse_campaign('[[config]]\nlabel = "a"\nagent = "untouched"\n', "c.toml", "c")
    assert [p.key for p in only_config.problems] == ["campaign"]


def test_dry_run_prints_the_planned_cells_and_stores_nothing(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text(GOOD)
    state = tmp_path / "state"
    out = srb(*TASKS, "campaign", "run", "good.toml", "--dry-run", "--json", state=state,
              cwd=tmp_path)
    assert out.returncode == codes.OK, out.stderr
    doc = json.loads(out.stdout)
    assert [(c["config"], c["repeat"]) for c in doc["cells"]] == [
        ("ref", 1), ("ref", 2), ("blind", 1), ("blind", 2)]
    assert not state.exists()
    missing = srb(*TASKS, "campaign", "validate", "nope.toml", state=state, cwd=tmp_path)
    assert missing.returncode == codes.NOT_FOUND and "nope.toml" in missing.stderr


def test_the_format_is_in_run_help_and_the_readme(tmp_path: Path) -> None:
    helped = srb("campaign", "run", "--help", state=tmp_path).stdout
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for line in FORMAT.splitlines():
        assert line in helped, line
        assert line in readme, line
    assert parse_campaign(FORMAT, "format.toml", "format").ok  # the format itself is valid


def test_status_of_a_file_reads_it(tmp_path: Path) -> None:
    text, _, messages = FILES["keys.toml"]
    (tmp_path / "keys.toml").write_text(text)
    out = srb(*TASKS, "campaign", "status", "keys.toml", state=tmp_path / "state",
              cwd=tmp_path)
    assert out.returncode == codes.NOT_FOUND  # never planned: no store
    for message in messages:
        assert message in out.stderr, out.stderr


def test_a_task_missing_what_a_run_needs_is_a_campaign_problem(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "tasks"
    shutil.copytree(DEMO_TASK, root / DEMO_TASK.name, symlinks=True)
    (root / DEMO_TASK.name / "instruction.md").unlink()
    (tmp_path / "good.toml").write_text(GOOD)
    out = srb("--tasks", str(root), "campaign", "validate", "good.toml",
              state=tmp_path / "state", cwd=tmp_path)
    assert out.returncode == codes.FAILED
    assert f"task {DEMO_TASK.name} does not validate: instruction.md: file is absent" \
        in out.stderr, out.stderr
