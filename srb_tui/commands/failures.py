"""The failures a command body raises and the exit code of each: one table, so ``guard``
and a command that catches a few of them itself say each the same way."""

from __future__ import annotations

from typing import Final

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.service.run.run_faults import LaunchError, TaskInvalid, TaskNotFound
from srb_tui.store import RunNotFound, StoreError
from srb_tui.store.errors import AmbiguousRunId


class Unavailable(LaunchError):
    """What a run needs (the engine, the gateway's configuration) is not there: exit INFRA."""


FAILURES: Final[tuple[tuple[type[Exception], int], ...]] = (  # the first that matches
    (Unavailable, codes.INFRA),
    (TaskNotFound, codes.NOT_FOUND),
    (TaskInvalid, codes.FAILED),
    (LaunchError, codes.USAGE),
    (AmbiguousRunId, codes.USAGE),
    (RunNotFound, codes.NOT_FOUND),
    (StoreError, codes.INFRA),
)
KNOWN: Final = tuple(kind for kind, _code in FAILURES)
"""Every failure of the table, for an ``except``."""


def failed(exc: Exception, out: Output) -> int:
    """Write ``exc`` (one of :data:`KNOWN`) as one line; its exit code."""
    if isinstance(exc, TaskInvalid):
        out.error(f"{exc} (`srb tasks validate` lists every problem)")
    else:
        out.error(str(exc))
    return next(code for kind, code in FAILURES if isinstance(exc, kind))
