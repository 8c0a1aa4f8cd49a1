"""``[[artifacts]] exclude`` patterns with tar ``--exclude`` semantics, relative to the
artifact root. Stdlib only.

- A pattern without ``/`` (``node_modules``, ``*.pyc``) matches any single path
  segment at any depth, so everything below a matching directory is excluded too.
- A pattern with ``/`` (``build/out``, ``/dist``) is anchored at the artifact root
  and matched segment by segment (``*`` never crosses ``/``; a ``**`` segment spans
  any number of segments); a match on a directory excludes its whole subtree.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase


def _anchored_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """True if ``pattern`` matches a prefix of ``parts``."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_anchored_match(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts:
        return False
    return fnmatchcase(parts[0], head) and _anchored_match(rest, parts[1:])


class ExcludeMatcher:
    """Decides whether a path (as segments below the artifact root) is excluded."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = list(patterns)
        self._bare: list[str] = []
        self._literal: set[str] = set()
        self._anchored: list[list[str]] = []
        for raw in patterns:
            pat = raw.strip()
            while pat.startswith("./"):
                pat = pat[2:]
            pat = pat.rstrip("/")
            if not pat:
                continue
            if "/" in pat:
                self._anchored.append([p for p in pat.lstrip("/").split("/") if p not in ("", ".")])
            elif any(c in pat for c in "*?["):
                self._bare.append(pat)
            else:
                self._literal.add(pat)

    def excluded(self, parts: Sequence[str]) -> bool:
        for seg in parts:
            if seg in self._literal:
                return True
            for pat in self._bare:
                if fnmatchcase(seg, pat):
                    return True
        return any(_anchored_match(pat, parts) for pat in self._anchored)
