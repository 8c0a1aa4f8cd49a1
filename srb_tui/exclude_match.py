"""The one ``[[artifacts]] exclude`` matcher: which paths below the artifact root a task drops.

Shared by submission collection (:mod:`srb_tui.runner.extract`, which drops the matching
members) and task validation (:mod:`srb_tui.schema.excludes`, which reports a pattern that
drops files State A ships). The two rooms may not import each other, so the rule lives here,
a leaf (standard library only); before it had one home the two copies disagreed
(``**/node_modules`` dropped ``a/b/node_modules/x.js`` in collection but not in validation).

The rule (``tar --exclude`` in spirit; the cases are in ``tests/test_exclude_match.py``):

* surrounding blanks, leading ``./`` and trailing ``/`` are ignored; an empty pattern
  matches nothing;
* a pattern without ``/`` (``node_modules``, ``*.pyc``, ``./target``) matches any single
  path segment at any depth;
* a pattern with ``/`` (``build/out``, ``/dist``) is anchored at the artifact root and
  matched segment by segment; ``*`` never crosses ``/``; a ``**`` segment spans any
  number of segments (none included);
* whatever a pattern matches is dropped with everything below it.

Wildcards are :mod:`fnmatch` wildcards, case-sensitive, compiled once per pattern (a State A
listing is thousands of files times every pattern).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from fnmatch import translate

_Match = Callable[[str], object]
_WILD = frozenset("*?[")


def path_segments(path: str) -> list[str]:
    """A relative path's segments (``\\`` read as ``/``; empty and ``.`` segments dropped)."""
    return [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]


def _segment_matcher(part: str) -> _Match:
    if not _WILD.intersection(part):
        return part.__eq__
    return re.compile(translate(part)).match


def _anchored(matchers: Sequence[_Match | None], segments: Sequence[str]) -> bool:
    """Whether ``matchers`` (``None`` for a ``**`` segment) match a prefix of ``segments``."""
    if not matchers:
        return True
    head, rest = matchers[0], matchers[1:]
    if head is None:
        return any(_anchored(rest, segments[i:]) for i in range(len(segments) + 1))
    if not segments or not head(segments[0]):
        return False
    return _anchored(rest, segments[1:])


class ExcludePattern:
    """One ``exclude`` entry, compiled for matching."""

    def __init__(self, text: str) -> None:
        self.text = text
        pat = text.strip()
        while pat.startswith("./"):
            pat = pat[2:]
        pat = pat.rstrip("/")
        self.anchored = "/" in pat
        parts = path_segments(pat.lstrip("/")) if self.anchored else ([pat] if pat else [])
        self._matchers: tuple[_Match | None, ...] = tuple(
            None if (self.anchored and part == "**") else _segment_matcher(part)
            for part in parts
        )

    def __repr__(self) -> str:
        return f"ExcludePattern({self.text!r})"

    def matches(self, path: str) -> bool:
        """Whether ``path`` (relative to the artifact root) is dropped by this pattern."""
        return self.matches_segments(path_segments(path))

    def matches_segments(self, segments: Sequence[str]) -> bool:
        """:meth:`matches` for a path already split into its segments."""
        if not self._matchers or not segments:
            return False
        if self.anchored:
            return _anchored(self._matchers, segments)
        only = self._matchers[0]
        assert only is not None  # a bare pattern has no ``**`` segment
        return any(only(segment) for segment in segments)


class ExcludeMatcher:
    """All of an artifact's patterns: whether a path is dropped, and by which."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = [ExcludePattern(p) for p in patterns]

    def excluded(self, segments: Sequence[str]) -> bool:
        """Whether any pattern drops the path with these segments."""
        return any(p.matches_segments(segments) for p in self.patterns)

    def dropping(self, segments: Sequence[str]) -> list[ExcludePattern]:
        """The patterns that drop the path with these segments."""
        return [p for p in self.patterns if p.matches_segments(segments)]
