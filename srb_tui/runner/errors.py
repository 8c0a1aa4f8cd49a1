"""Exceptions raised by the runner, each carrying a message fit to show a user."""

from __future__ import annotations


class RunnerError(Exception):
    """Base class: something the runner could not do; ``str(err)`` is the user message."""


class EngineUnavailable(RunnerError):
    """The Docker engine cannot be reached (not installed, not started, no permission)."""


class ContainerError(RunnerError):
    """A container operation failed (create, start, copy in, exec, remove)."""


class ImageBuildError(RunnerError):
    """An image build failed; ``log_tail`` holds the last lines of the build log."""

    def __init__(self, message: str, log_tail: list[str] | None = None) -> None:
        super().__init__(message)
        self.log_tail = log_tail or []


class CollectError(RunnerError):
    """The submission could not be fetched from the container at all."""
