"""The exit status of every ``srb`` command: one table, owned here (the README copies it).

====  ===========  ==========================================================================
code  name         meaning
====  ===========  ==========================================================================
0     OK           done; a run that was graded ends 0 whatever its score
1     FAILED       the command did its work and the answer is no: validation errors, trees
                   that differ, a doctor check failing, an identity run refused, a launch of a
                   task that does not validate
2     USAGE        the command line cannot be used: an unknown option, a bad value, options
                   that conflict, a path of the wrong kind (``--state FILE``, ``-o DIR``)
3     NOT_FOUND    something named does not exist: a task, run, campaign, file or task root
4     INFRA        srb could not measure: the engine is unreachable, the store unreadable, no
                   base image, a run that ended ``infra_error`` or invalid
130   INTERRUPTED  Ctrl-C (a run left going in the background)
====  ===========  ==========================================================================
"""

from __future__ import annotations

from typing import Final

OK: Final = 0
FAILED: Final = 1
USAGE: Final = 2
NOT_FOUND: Final = 3
INFRA: Final = 4
INTERRUPTED: Final = 130

TABLE: Final[tuple[tuple[int, str], ...]] = (
    (OK, "done (a graded run ends 0 whatever its score)"),
    (FAILED, "the answer is no (validation errors, trees differ, a doctor check fails)"),
    (USAGE, "the command line cannot be used (bad option, conflict, wrong kind of path)"),
    (NOT_FOUND, "a task, run, campaign, file or task root named does not exist"),
    (INFRA, "srb could not measure (engine, store, base image, run infra_error/invalid)"),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
)


def epilog() -> str:
    """The table for ``srb --help``."""
    return "exit codes:\n" + "\n".join(f"  {code:<4} {text}" for code, text in TABLE)
