"""`srb tasks validate` takes a task id like `tasks show` does (a new user types the id the
Tasks screen shows): the task under the roots is validated; an unknown name says what was
looked for and where, exit 3."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from srb_tui.cli import main
from srb_tui.commands import exit_codes as codes
from tests.conftest import DEMO_TASK


def test_a_task_id_is_validated_like_its_directory(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    roots = tmp_path / "tasks"
    shutil.copytree(DEMO_TASK, roots / DEMO_TASK.name, ignore=shutil.ignore_patterns(
        "__pycache__"))
    base = ["--tasks", str(roots), "--state", str(tmp_path / "state"), "tasks", "validate"]
    assert main([*base, DEMO_TASK.name]) == codes.OK
    assert f"✓ {DEMO_TASK.name}" in capsys.readouterr().out

    (roots / DEMO_TASK.name / "instruction.md").unlink()
    (roots / DEMO_TASK.name / "instruction.md").symlink_to("/etc/passwd")
    assert main([*base, DEMO_TASK.name]) == codes.FAILED
    assert "link leaves the task directory" in capsys.readouterr().out

    assert main([*base, "no-such-task"]) == codes.NOT_FOUND
    err = capsys.readouterr().err
    assert "no-such-task: no such file, directory or task id" in err and str(roots) in err
