"""The git commit srb's own source was checked out at, read once a process, and early.

A run's launch record names it (:mod:`srb_tui.service.provenance`) before the agent's
container starts, and reading it is two git processes: about a tenth of ``srb run``'s
launch when they ran then. :func:`read_early` starts them on a thread as soon as the
command is known (``srb_tui.cli``), so they run on another core while the command's modules
load and the launch finds the answer ready; :func:`source_commit` waits for that reading,
or reads now when none was started. The answer is the same either way: one reading per
source folder a process. Standard library only, so importing it costs nothing.
"""

from __future__ import annotations

import subprocess
import threading
from concurrent.futures import Future
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[1]

_readings: dict[Path, Future[str | None]] = {}
_lock = threading.Lock()


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _read(root: Path) -> str | None:
    commit = _git(root, "rev-parse", "HEAD")
    if not commit:
        return None
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".")
    return f"{commit}+dirty" if dirty else commit


def _fill(reading: Future[str | None], root: Path) -> None:
    try:
        reading.set_result(_read(root))
    except BaseException as exc:  # handed to whoever waits for the reading
        reading.set_exception(exc)


def _reading(root: Path, *, on_thread: bool) -> Future[str | None]:
    with _lock:
        reading = _readings.get(root)
        fresh = reading is None
        if reading is None:
            reading = _readings[root] = Future()
    if fresh:
        if on_thread:
            threading.Thread(target=_fill, args=(reading, root), name="srb-source-commit",
                             daemon=True).start()
        else:
            _fill(reading, root)
    return reading


def read_early(root: Path = SOURCE_DIR) -> None:
    """Start reading :func:`source_commit` of ``root`` on a thread (once a process)."""
    _reading(root, on_thread=True)


def source_commit(root: Path = SOURCE_DIR) -> str | None:
    """The commit ``root`` is checked out at (``+dirty`` when tracked files under it
    changed), or None when it is not a git checkout (an installed wheel, no git)."""
    return _reading(root, on_thread=False).result()


__all__ = ["SOURCE_DIR", "read_early", "source_commit"]
