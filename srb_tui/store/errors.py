"""Errors raised by the store: one base class so callers can turn any of them into a message."""

from __future__ import annotations


class StoreError(Exception):
    """A store problem with a message fit to show a user (names the file or run)."""


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
