"""Paths as people read them: relative to the working directory when inside it."""

from __future__ import annotations

from pathlib import Path


def display_path(path: Path) -> str:
    """``tasks/demo01`` rather than ``/home/me/srb/tasks/demo01``; ``~`` for the home folder."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        pass
    try:
        return "~/" + str(path.resolve().relative_to(Path.home().resolve()))
    except (ValueError, RuntimeError):
        return str(path)
