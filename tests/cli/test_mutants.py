"""``srb tasks mutants``: State A's mutants as a strength campaign would sample them (issue 36
item 1), from the command line on a built-in task, with no Docker engine."""

from __future__ import annotations

import json
from pathlib import Path

from srb_tui.commands import exit_codes as codes
from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK

TASKS = ("--tasks", str(DEMO_TASK.parent))


def _mutants(tmp_path: Path, *extra: str) -> dict:
    out = srb(*TASKS, "tasks", "mutants", DEMO_TASK.name, "--offline", "--json", *extra,
              state=tmp_path)
    assert out.returncode == codes.OK, out.stderr
    return json.loads(out.stdout)


def test_the_same_seed_gives_the_same_mutants_and_each_names_its_change(tmp_path: Path) -> None:
    first = _mutants(tmp_path, "--mutants", "6", "--seed", "3")
    again = _mutants(tmp_path, "--mutants", "6", "--seed", "3")
    other = _mutants(tmp_path, "--mutants", "6", "--seed", "4")
    keys = [m["key"] for m in first["mutants"]]
    assert keys == [m["key"] for m in again["mutants"]]
    assert keys != [m["key"] for m in other["mutants"]]
    assert [m["id"] for m in first["mutants"]] == [f"m00{i}" for i in range(1, 7)]
    assert sum(first["sites"].values()) >= 20
    for mutant in first["mutants"]:
        # the diff is of the named file and shows the replaced text going and the new coming
        assert mutant["diff"].startswith(f"--- a/{mutant['path']}\n"), mutant
        removed = [ln for ln in mutant["diff"].splitlines() if ln.startswith("-") and
                   not ln.startswith("---")]
        assert any(mutant["before"].split("\n")[0] in ln for ln in removed), mutant


def test_a_task_that_is_not_there_is_named(tmp_path: Path) -> None:
    out = srb(*TASKS, "tasks", "mutants", "no-such-task", state=tmp_path)
    assert out.returncode == codes.NOT_FOUND
    assert "no-such-task" in out.stderr
    out = srb(*TASKS, "tasks", "mutants", DEMO_TASK.name, "--mutants", "0", state=tmp_path)
    assert out.returncode == codes.USAGE and "0 is not at least 1" in out.stderr
