"""Fixtures for driver and loop tests: two small trees and the grader's tools loop over them,
run on the host as a subprocess (the same JSON-lines protocol the stage container serves)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from srb_tui.drivers.channel import SubprocessToolChannel

GATES = [
    {"id": "no-python", "title": "No Python left", "question": "Is any Python source left?"},
    {"id": "node-present", "title": "Node code", "question": "Is the work done in JavaScript?"},
]
KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    original = tmp_path / "original"
    submission = tmp_path / "submission"
    (original / "calc").mkdir(parents=True)
    (original / "calc" / "core.py").write_text(
        "def add(a, b):\n    return a + b\n", encoding="utf-8"
    )
    (submission / "lib").mkdir(parents=True)
    (submission / "lib" / "core.js").write_text(
        "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n", encoding="utf-8"
    )
    (submission / "calc").mkdir()
    (submission / "calc" / "core.py").write_text(
        "def add(a, b):\n    return a + b\n", encoding="utf-8"
    )
    return original, submission


def grader_argv(original: Path, submission: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "srb_tui.grader",
        "tools",
        "--original",
        str(original),
        "--submission",
        str(submission),
    ]


@pytest.fixture
async def channel(trees: tuple[Path, Path]) -> AsyncIterator[SubprocessToolChannel]:
    async with SubprocessToolChannel(grader_argv(*trees), timeout_sec=30) as chan:
        yield chan
