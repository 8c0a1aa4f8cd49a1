"""One validation problem, named by file, key and (where known) line."""

from __future__ import annotations

from dataclasses import dataclass

from srb_tui.grader.manifests.table import ProblemKind as ProblemKind


@dataclass(frozen=True)
class Problem:
    """A single finding of the task loader.

    ``kind`` separates schema errors (``error``) from files the task refers to
    that are not on disk (``absent``) and advice (``warning``).
    """

    file: str
    key: str
    message: str
    line: int | None = None
    kind: ProblemKind = "error"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        key = f" [{self.key}]" if self.key else ""
        return f"{where}{key}: {self.message}"
