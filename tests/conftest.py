"""Fixtures shared by every test folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.config import Settings

REPO = Path(__file__).resolve().parents[1]
BUILTIN_TASKS = REPO / "tasks"
DEMO_TASK = BUILTIN_TASKS / "demo01-csvtab-python-to-node"
OFFICIAL_TASKS = REPO.parent / "shared" / "reference" / "official-tasks"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def builtin_settings(state_dir: Path) -> Settings:
    """The built-in tasks with an empty, private state directory."""
    return Settings(task_roots=(BUILTIN_TASKS,), state_dir=state_dir)
