"""Task files that are links out of the task directory (issue 26, point 3).

A link that leaves the task directory is an error naming the link and its target, and
nothing of the task is read: the outside file's content appears nowhere (not in the load,
not in validation, not at launch). Links that stay inside the task are fine.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from srb_tui.schema import load_task
from tests.conftest import DEMO_TASK

SECRET = "host-secret-26-do-not-read"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host folder outside any task, holding files a link could reach."""
    folder = tmp_path / "host"
    (folder / "ssh").mkdir(parents=True)
    (folder / "ssh" / "id_rsa").write_text(SECRET)
    (folder / "passwd").write_text(SECRET + "\n")
    (folder / "suite.toml").write_text(f'# {SECRET}\nschema_version = "1.0"\n')
    shutil.copy(DEMO_TASK / "environment" / "original.tar.gz", folder / "original.tar.gz")
    return folder


@pytest.fixture
def task(tmp_path: Path) -> Path:
    copy = tmp_path / "tasks" / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, copy, symlinks=True)
    return copy


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


CASES: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "instruction.md": ("instruction.md", lambda host: host / "passwd"),
    "suite.toml": ("tests/behavioural/suite.toml", lambda host: host / "suite.toml"),
    "original.tar.gz": ("environment/original.tar.gz", lambda host: host / "original.tar.gz"),
    "linked folder": ("tests/behavioural/data", lambda host: host / "ssh"),
    "linked data file": ("tests/behavioural/lib/shadow", lambda host: host / "ssh" / "id_rsa"),
    "dangling": ("tests/audit/prompt.txt", lambda host: host / "nothing-here"),
    "relative": ("README.md", lambda host: Path("../../host/passwd")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_link_out_of_the_task_is_an_error_naming_link_and_target(
    case: str, task: Path, outside: Path
) -> None:
    rel, target_of = CASES[case]
    link = task / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    target = target_of(outside)
    _replace_with_link(link, target)
    load = load_task(task)
    assert load.task is None and not load.ok
    errors = [p for p in load.errors if p.file == rel]
    assert errors, [str(p) for p in load.problems]
    assert f"-> {target}" in errors[0].message
    assert "leaves the task directory" in errors[0].message
    assert SECRET not in repr(load)


def test_links_that_stay_inside_the_task_are_fine(task: Path) -> None:
    (task / "notes.md").symlink_to("instruction.md")
    (task / "docs").symlink_to("tests/behavioural")
    load = load_task(task)
    assert load.ok, [str(p) for p in load.problems]
    assert load.task is not None and load.task.instruction


def test_a_task_directory_reached_through_a_link_is_judged_where_it_lives(
    task: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "root" / task.name
    elsewhere.parent.mkdir()
    os.symlink(task, elsewhere)
    assert load_task(elsewhere).ok
