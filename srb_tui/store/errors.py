"""Errors raised by the store: one base class so callers can turn any of them into a message."""

from __future__ import annotations


class StoreError(Exception):
    """A store problem with a message fit to show a user (names the file or run)."""


class ContentRefused(StoreError):
    """What was handed to the store is refused as a whole (a label for an unknown run, a
    trial imported before): the store is fine, the answer is no; nothing was written."""


class RunNotFound(StoreError):
    """The run id is not in the store."""

    def __init__(self, run_id: str, path: str) -> None:
        super().__init__(f"no run {run_id!r} in {path}")
        self.run_id = run_id


class IllegalTransition(StoreError):
    """A status change the run lifecycle does not allow."""

    def __init__(self, run_id: str, from_status: str, to_status: str) -> None:
        super().__init__(f"run {run_id}: illegal transition {from_status} -> {to_status}")
        self.run_id = run_id
        self.from_status = from_status
        self.to_status = to_status


class AmbiguousRunId(RunNotFound):
    """A run id prefix that more than one run starts with (the candidates are named)."""

    def __init__(self, prefix: str, path: str, candidates: list[str]) -> None:
        StoreError.__init__(
            self,
            f"run id prefix {prefix!r} is ambiguous in {path}: it starts "
            f"{len(candidates)} runs ({', '.join(candidates[:10])}"
            f"{', …' if len(candidates) > 10 else ''}); give more of the id",
        )
        self.run_id = prefix
        self.candidates = tuple(candidates)
