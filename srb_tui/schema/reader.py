"""The host's side of reading one manifest: the file a :class:`Table` reports into.

The reader itself (:class:`Table` and its helpers) is the grader's stdlib-only
``srb_tui.grader.manifests.table``, so the host and the stage container read manifests by
one set of rules; a :class:`Source` turns each of its problems into a
:class:`~srb_tui.schema.problems.Problem` naming the file, the dotted key and the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from srb_tui.grader.manifests.table import (
    EMPTY,
    ProblemKind,
    check_unique_ids,
    describe,
    fmt_number,
    freeze,
    frozen_mapping,
    is_inside,
    is_token,
)
from srb_tui.grader.manifests.table import Table as _Table
from srb_tui.schema.locator import KeyLocator
from srb_tui.schema.problems import Problem

__all__ = [
    "EMPTY", "MAX_TEXT_BYTES", "Source", "Table", "check_unique_ids", "describe", "fmt_number",
    "freeze", "frozen_mapping", "is_inside", "is_token", "too_large",
]


class Source:
    """One manifest file being read: its name (relative to the task), text and problems."""

    def __init__(self, file: str, text: str, problems: list[Problem]) -> None:
        self.file = file
        self.text = text
        self.problems = problems
        self._locator: KeyLocator | None = None

    @property
    def locator(self) -> KeyLocator:
        # Built on first use: a clean file never pays for the scan.
        if self._locator is None:
            self._locator = KeyLocator(self.text)
        return self._locator

    def line(self, key: str) -> int | None:
        return self.locator.line(key) if key else None

    def report(self, key: str, message: str, kind: ProblemKind = "error") -> None:
        self.problems.append(Problem(self.file, key, message, self.line(key), kind))


class Table(_Table):
    """The manifests' reader over a host :class:`Source` (its tables, too, report there)."""

    source: Source

    def __init__(self, source: Source, path: str, data: Mapping[str, object]) -> None:
        super().__init__(source, path, data)


#: The most srb reads of one text file of a task (manifests, instruction.md, prompts):
#: far above any real one, and a 300 MB file is refused before a byte of it is read.
MAX_TEXT_BYTES = 4 * 1024 * 1024


def too_large(path: Path, cap: int = MAX_TEXT_BYTES) -> str | None:
    """Why ``path`` is not read as text (its size past ``cap``), or None."""
    try:
        size = path.stat().st_size
    except OSError:
        return None  # the read that follows names the problem
    if size > cap:
        return (f"file is {size:,} bytes; srb reads at most {cap:,} bytes of a text file "
                "(is it the file you meant?)")
    return None

