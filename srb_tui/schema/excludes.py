"""Artifact excludes checked against State A, and an archive's member names.

The matching rule itself has one home, :mod:`srb_tui.exclude_match` (shared with submission
collection, so validation reports exactly what collection drops); this module applies it to
a State A file list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from srb_tui.exclude_match import ExcludeMatcher, ExcludePattern
from srb_tui.exclude_match import path_segments as _segments

__all__ = ["ExcludePattern", "archive_root", "excluded_files", "is_excluded", "relative_name"]


def is_excluded(path: str, patterns: Iterable[str]) -> bool:
    """Whether any of ``patterns`` drops ``path``."""
    return ExcludeMatcher(patterns).excluded(_segments(path))


def excluded_files(patterns: Sequence[str], files: Iterable[str]) -> dict[str, list[str]]:
    """For each pattern that drops at least one of ``files``, the files it drops (sorted)."""
    matcher = ExcludeMatcher(patterns)
    hits: dict[str, list[str]] = {}
    for path in files:
        for pattern in matcher.dropping(_segments(path)):  # split once per path
            hits.setdefault(pattern.text, []).append(path)
    return {k: sorted(v) for k, v in hits.items()}


def archive_root(names: Iterable[str]) -> str:
    """The directory an archive wraps its whole tree in (``repo-1.0``), or ``""``.

    ``./`` prefixes are ignored.  There is a wrapper only when every member lives
    under one top-level directory and at least one member lies below it.
    """
    tops: set[str] = set()
    below = False
    for name in names:
        segments = _segments(name)
        if not segments:
            continue
        tops.add(segments[0])
        below = below or len(segments) > 1
        if len(tops) > 1:
            return ""
    return next(iter(tops)) if len(tops) == 1 and below else ""


def relative_name(name: str, root: str) -> str:
    """A member name relative to the repository root (``""`` for the wrapper itself)."""
    segments = _segments(name)
    if root and segments and segments[0] == root:
        segments = segments[1:]
    return "/".join(segments)
