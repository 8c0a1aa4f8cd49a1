"""The one exception type State A acquisition raises, with a message fit to show a user."""

from __future__ import annotations


class StateAError(Exception):
    """State A could not be prepared: offline, unreachable, digest mismatch, unsafe archive.

    The message names the task and, where they apply, the URL and both digests.
    """


class UnsafeArchiveError(StateAError):
    """An archive member would land outside the tree, or is a device or other special file."""
