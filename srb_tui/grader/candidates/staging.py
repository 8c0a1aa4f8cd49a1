"""Stage III: the trees a candidate runs on, staged by the grader (copies with normalised
times, checked against State A's digest before use).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..boundary.lockdown import tree_digest
from .records import CandidateSpec

FIXED_MTIME = 946684800  # 2000-01-01T00:00:00Z: staged trees carry no timestamp of their own


class StagingError(Exception):
    """The harness could not stage a tree or the candidate (a harness fault)."""


def _normalise_times(root: Path) -> None:
    for current, dirs, files in os.walk(root, topdown=False):
        for name in files + dirs:
            os.utime(Path(current) / name, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
    os.utime(root, (FIXED_MTIME, FIXED_MTIME))


def stage_copy(source: Path, target: Path) -> None:
    """Replace `target` with a copy of `source` (links kept as links, times normalised).
    The copy belongs to the grader; its top folder is 0755, so the slot that may reach its
    parent reads it and nobody but the grader writes it."""
    if target.exists() or target.is_symlink():
        shutil.rmtree(target)
    try:
        shutil.copytree(source, target, symlinks=True)
        os.chmod(target, 0o755)
        _normalise_times(target)
    except (OSError, shutil.Error) as exc:
        raise StagingError(f"cannot stage {source} at {target}: {exc}") from None


def check_original(spec: CandidateSpec, tree: Path, what: str) -> None:
    """Raise StagingError unless ``tree`` has State A's digest (when one is known)."""
    if spec.original_digest is None:
        return
    try:
        found = tree_digest(tree)
    except OSError as exc:
        raise StagingError(f"cannot hash {what} ({tree}): {exc}") from None
    if found != spec.original_digest:
        raise StagingError(
            f"{what} ({tree}) does not match State A's digest "
            f"({found[:12]} != {spec.original_digest[:12]}): refusing to use it"
        )
