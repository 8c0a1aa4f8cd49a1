"""Artifact excludes with ``tar --exclude`` semantics, checked against State A.

A pattern without ``/`` matches any single path segment at any depth (``build``
drops ``build/`` and ``src/build/``; ``*.o`` drops every object file).  A pattern
with ``/`` is anchored at the artifact root and matched segment by segment
(``testdata/charts/*/*.tgz``).  Wildcards are :mod:`fnmatch` wildcards applied to
one segment and never cross a ``/``.  Whatever a pattern matches is dropped with
everything below it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import translate
from functools import cached_property


def _segments(path: str) -> list[str]:
    return [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]


@dataclass(frozen=True)
class ExcludePattern:
    """One ``exclude`` entry, pre-split for matching."""

    text: str

    @cached_property
    def parts(self) -> tuple[str, ...]:
        return tuple(_segments(self.text))

    @cached_property
    def _matchers(self) -> tuple[Callable[[str], object], ...]:
        # fnmatch's own translation, compiled once per part (fnmatchcase would look its
        # cache up on every call: thousands of files times every pattern).
        return tuple(re.compile(translate(part)).match for part in self.parts)

    @cached_property
    def anchored(self) -> bool:
        return "/" in self.text.strip("/") or self.text.startswith(("/", "./"))

    def matches(self, path: str) -> bool:
        """Whether ``path`` (relative to the artifact root) is dropped by this pattern."""
        return self.matches_segments(_segments(path))

    def matches_segments(self, segments: Sequence[str]) -> bool:
        """:meth:`matches` for a path already split into its segments."""
        matchers = self._matchers
        if not matchers or not segments:
            return False
        if self.anchored:
            if len(segments) < len(matchers):
                return False
            return all(m(s) is not None for s, m in zip(segments, matchers, strict=False))
        first = matchers[0]
        return any(first(segment) is not None for segment in segments)


def is_excluded(path: str, patterns: Iterable[str]) -> bool:
    """Whether any of ``patterns`` drops ``path``."""
    return any(ExcludePattern(p).matches(path) for p in patterns)


def excluded_files(patterns: Sequence[str], files: Iterable[str]) -> dict[str, list[str]]:
    """For each pattern that drops at least one of ``files``, the files it drops (sorted)."""
    compiled = [ExcludePattern(p) for p in patterns]
    hits: dict[str, list[str]] = {}
    for path in files:
        segments = _segments(path)  # once per path, not once per pattern
        for pattern in compiled:
            if pattern.matches_segments(segments):
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
