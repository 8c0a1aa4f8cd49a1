"""``srb tasks validate`` is strict about what a run needs by default (issue 26, 7): a
missing instruction.md, module folder or run.py is an error (exit 1); State A's absent
archive is a separate, named category (exit 0 unless --strict); an unknown
schema_version is named; a huge instruction.md is refused without being read."""

from __future__ import annotations

import json
import resource
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.schema import load_task
from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK


def _module_dir(task: Path) -> Path:
    return sorted(p for p in (task / "tests" / "behavioural" / "modules").iterdir()
                  if p.is_dir())[0]


def _no_instruction(task: Path) -> None:
    (task / "instruction.md").unlink()


def _no_module(task: Path) -> None:
    shutil.rmtree(_module_dir(task))


def _no_run_script(task: Path) -> None:
    folder = _module_dir(task)
    for name in ("run.sh", "run.py"):
        (folder / name).unlink(missing_ok=True)


def _version(value: str) -> Callable[[Path], None]:
    def edit(task: Path) -> None:
        toml = task / "task.toml"
        text = toml.read_text()
        assert 'schema_version = "1.4"' in text
        toml.write_text(text.replace('schema_version = "1.4"', f'schema_version = "{value}"'))
    return edit


# (what is done to a copy of demo01, exit code, kind printed, words of the message)
CASES: dict[str, tuple[Callable[[Path], None], int, str, str]] = {
    "no instruction.md": (_no_instruction, codes.FAILED, "missing",
                          "instruction.md: file is absent"),
    "no module folder": (_no_module, codes.FAILED, "missing", "folder is absent (module"),
    "no run script": (_no_run_script, codes.FAILED, "missing", "run.py: file is absent"),
    "schema 9.9": (_version("9.9"), codes.FAILED, "error",
                   "unknown schema version `9.9`: srb reads 1.4"),
    "schema 1.5": (_version("1.5"), codes.OK, "warning",
                   "schema version `1.5` is not one srb knows"),
}


def _copy(tmp_path: Path) -> Path:
    task = tmp_path / "tasks" / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, task, symlinks=True)
    return task


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_a_run_needs_fails_validation_by_default(case: str, tmp_path: Path) -> None:
    edit, code, kind, message = CASES[case]
    task = _copy(tmp_path)
    edit(task)
    out = srb("tasks", "validate", str(task), state=tmp_path / "state")
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode == code, out.stdout
    assert any(line.strip().startswith(kind) and message in line
               for line in out.stdout.splitlines()), out.stdout


def test_an_absent_state_a_archive_is_its_own_category(tmp_path: Path) -> None:
    task = _copy(tmp_path)
    (task / "environment" / "original.tar.gz").unlink()
    out = srb("tasks", "validate", "--json", str(task), state=tmp_path / "state")
    assert out.returncode == codes.OK, out.stdout
    doc = json.loads(out.stdout)
    assert (doc["missing"], doc["state_a_absent"]) == (0, 1)
    text = srb("tasks", "validate", str(task), state=tmp_path / "state").stdout
    assert "state-a environment/original.tar.gz" in text
    strict = srb("tasks", "validate", "--strict", str(task), state=tmp_path / "state")
    assert strict.returncode == codes.FAILED


def test_a_huge_instruction_is_refused_unread(tmp_path: Path) -> None:
    task = _copy(tmp_path)
    with (task / "instruction.md").open("r+b") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: 300 MB of NUL bytes, no disk used
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    load = load_task(task)
    grew_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert time.monotonic() - started < 10
    assert grew_kb < 100 * 1024, grew_kb  # far below the file's 300 MB
    assert any(p.file == "instruction.md" and "srb reads at most" in p.message
               for p in load.errors), load.problems
    out = srb("tasks", "validate", str(task), state=tmp_path / "state")
    assert out.returncode == codes.FAILED
    assert "314,572,800 bytes" in out.stdout


@pytest.mark.docker
def test_a_launch_of_a_task_missing_what_a_run_needs_is_refused(tmp_path: Path) -> None:
    """The same rule at launch: no run is created for a task without its instruction.md
    (the agent would be told nothing); a task id nobody has is NOT_FOUND."""
    task = _copy(tmp_path)
    _no_instruction(task)
    state = tmp_path / "state"
    out = srb("--tasks", str(task.parent), "run", task.name, "--agent", "untouched",
              "--no-grade", state=state)
    assert "Traceback" not in out.stderr
    assert out.returncode == codes.FAILED, out.stderr
    assert "instruction.md: file is absent" in out.stderr
    listed = srb("runs", "list", "-q", state=state)
    assert listed.stdout == ""
    nobody = srb("--tasks", str(task.parent), "run", "nope", "--agent", "untouched",
                 state=state)
    assert nobody.returncode == codes.NOT_FOUND and "no task 'nope'" in nobody.stderr


def test_tasks_list_counts_the_missing_files(tmp_path: Path) -> None:
    task = _copy(tmp_path)
    _no_instruction(task)
    out = srb("--tasks", str(task.parent), "tasks", "list", "--json", state=tmp_path / "s")
    assert out.returncode == codes.OK
    assert json.loads(out.stdout)["tasks"][0]["missing"] == 1
    table = srb("--tasks", str(task.parent), "tasks", "list", state=tmp_path / "s")
    assert "1 missing" in table.stdout


def test_piped_tasks_list_prints_whole_values_in_plain_columns(tmp_path: Path) -> None:
    """Issue 35 item 13: into a pipe, `tasks list` printed an 80-column table that split
    ids over three lines and cut classes ("language-r…"); it prints plain columns now,
    one task a line, every value whole."""
    out = srb("--tasks", str(DEMO_TASK.parent), "tasks", "list", state=tmp_path / "s")
    assert out.returncode == codes.OK, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["TASK", "CLASS", "STACKS", "BUDGET", "GATES", "MODS", "ADV",
                                "STATUS"]
    demo = next(line for line in lines if line.startswith(DEMO_TASK.name + " "))
    assert "language-rewrite" in demo and "python → node" in demo and demo.endswith("ok")
    assert "…" not in out.stdout and "│" not in out.stdout
