"""One file's diff between the two trees, built on difflib: hunks of numbered lines.

``file_diff`` reads both sides (text decoded as UTF-8 with replacement; binary and huge
files are reported, not diffed) and groups the opcodes of ``difflib.SequenceMatcher`` into
hunks with ``context`` lines around each change. ``side_by_side`` pairs a hunk's lines into
rows for a two-column view; ``unified_text`` renders the diff as ``diff -u`` would.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Literal

from srb_tui.service.views.safe_read import (
    display_name,
    exists_in_tree,
    is_link_in_tree,
    link_target,
    read_in_tree,
)

LineKind = Literal[" ", "-", "+"]
MAX_DIFF_BYTES = 4_000_000
BINARY_SNIFF = 8192
AUTOJUNK_FROM_LINES = 20_000


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk: context, removed (State A only) or added (submission only)."""

    kind: LineKind
    old_no: int | None
    new_no: int | None
    text: str


@dataclass(frozen=True)
class Hunk:
    """A run of changes with its context; starts are 1-based like ``diff -u``."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[DiffLine, ...]

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"


@dataclass(frozen=True)
class FileDiff:
    """The diff of one path. ``note`` explains a diff that was not computed."""

    path: str
    old_text: str | None
    new_text: str | None
    hunks: tuple[Hunk, ...]
    binary: bool = False
    note: str | None = None

    @property
    def added(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "+")

    @property
    def removed(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "-")


@dataclass(frozen=True)
class SideText:
    """What one side holds: text (None if the file is absent), or a reason it is not text."""

    text: str | None
    binary: bool = False
    note: str | None = None


def read_side(root: Path, rel: str) -> SideText:
    """The text of ``rel`` in the tree ``root``, read by srb's host-side policy
    (service/safe_read.py): links read as ``-> target`` and never followed, FIFOs and
    devices refused, huge files flagged; binary files are flagged too."""
    shown = display_name(rel)
    if not exists_in_tree(root, rel):
        return SideText(None)
    try:
        if is_link_in_tree(root, rel):
            return SideText(f"-> {link_target(root, rel)}\n")
        read = read_in_tree(root, rel, MAX_DIFF_BYTES)
    except OSError as exc:
        return SideText(None, note=f"{shown}: not read ({exc.strerror or exc})")
    if read.truncated:
        return SideText("", note=f"{read.size:,} bytes: too large to diff here")
    data = read.data
    if b"\0" in data[:BINARY_SNIFF]:
        return SideText("", binary=True)
    return SideText(data.decode("utf-8", "replace"))


def split_lines(text: str | None) -> list[str]:
    """Lines without their ends (``\\r\\n``, ``\\r`` and ``\\n`` all end a line)."""
    return [] if not text else text.splitlines()


def diff_lines(old: list[str], new: list[str], context: int = 3) -> tuple[Hunk, ...]:
    """Hunks turning ``old`` into ``new``."""
    autojunk = max(len(old), len(new)) >= AUTOJUNK_FROM_LINES
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=autojunk)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                pairs = zip(range(i1, i2), range(j1, j2), strict=True)
                lines.extend(DiffLine(" ", i + 1, j + 1, old[i]) for i, j in pairs)
                continue
            if tag in ("replace", "delete"):
                lines.extend(DiffLine("-", i + 1, None, old[i]) for i in range(i1, i2))
            if tag in ("replace", "insert"):
                lines.extend(DiffLine("+", None, j + 1, new[j]) for j in range(j1, j2))
        first, last = group[0], group[-1]
        old_len, new_len = last[2] - first[1], last[4] - first[3]
        hunks.append(
            Hunk(
                old_start=first[1] + 1 if old_len else first[1],
                old_len=old_len,
                new_start=first[3] + 1 if new_len else first[3],
                new_len=new_len,
                lines=tuple(lines),
            )
        )
    return tuple(hunks)


def file_diff(left: Path, right: Path, path: str, context: int = 3) -> FileDiff:
    """The diff of ``path`` between the trees ``left`` (State A) and ``right``."""
    a, b = read_side(left, path), read_side(right, path)
    note = a.note or b.note
    if a.binary or b.binary:
        return FileDiff(path, None, None, (), binary=True, note=note or "binary file")
    if note:
        return FileDiff(path, a.text, b.text, (), note=note)
    hunks = diff_lines(split_lines(a.text), split_lines(b.text), context)
    return FileDiff(path, a.text, b.text, hunks)


Row = tuple[DiffLine | None, DiffLine | None]


def side_by_side(hunk: Hunk) -> list[Row]:
    """Rows of (State A line, submission line): context on both sides, a block of removals
    paired with the additions that follow it, the shorter side padded with None."""
    rows: list[Row] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []

    def flush() -> None:
        rows.extend(zip_longest(removed, added))
        removed.clear()
        added.clear()

    for line in hunk.lines:
        if line.kind == " ":
            flush()
            rows.append((line, line))
        elif line.kind == "-":
            if added:
                flush()
            removed.append(line)
        else:
            added.append(line)
    flush()
    return rows


def unified_text(diff: FileDiff) -> str:
    """The diff as ``diff -u`` text (without the file header lines)."""
    out: list[str] = []
    for hunk in diff.hunks:
        out.append(hunk.header)
        out.extend(f"{line.kind}{line.text}" for line in hunk.lines)
    return "\n".join(out) + ("\n" if out else "")
