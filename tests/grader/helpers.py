"""Shared helpers for grader tests: build suites and trees on disk, poll with a deadline."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GRADER_DIR = REPO / "srb_tui" / "grader"


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    """Create `root` with the given relative files (text)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return root


def make_suite(root: Path, header: str, modules: Mapping[str, tuple[str, str, str]]) -> Path:
    """A suite folder: `header` TOML, then per module (toml extra lines, file name, body)."""
    parts = [header.strip(), ""]
    for module_id, (extra, filename, body) in modules.items():
        parts += ["[[module]]", f'id = "{module_id}"', extra.strip(), ""]
        if filename:
            write_tree(root / "modules" / module_id, {filename: body})
        else:
            (root / "modules" / module_id).mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text("\n".join(parts) + "\n", encoding="utf-8")
    return root


def grader_cmd(*args: str) -> list[str]:
    """argv running the grader CLI from the checkout."""
    return [sys.executable, "-m", "srb_tui.grader", *args]


def run_grader(
    *args: str, timeout: float = 120.0, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        grader_cmd(*args), cwd=REPO, capture_output=True, text=True, timeout=timeout, **kwargs
    )


def wait_for(condition: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll `condition` until true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent or a zombie)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    state = raw[raw.rfind(b")") + 2 :].split()[0]
    return state in (b"Z", b"X")


def kill_group_if_alive(pid: int) -> None:
    """Clean up a process group this test started (by its id)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, 9)
