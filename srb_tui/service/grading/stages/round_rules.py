"""When a Stage III model round that claims nothing is a survival, and when it is an error.

A survival pays ten points on the premise that the round attacked the submission. The
published harness withholds that premise in two cases, and so does srb: most of the round's
tool calls failed (more than half: the toolbox was refusing it), or it ran candidates and
none of their runs ever started (the interpreter could not open the command), so nothing
was executed against either tree. Writing no candidate, or reading the code and concluding
it is sound, is not such a case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_TOOL_ERROR_RATE = 0.5
NEVER_STARTED_SIGNS = ("no such file", "cannot open", "not found", "permission denied")


def never_started(run: Mapping[str, Any]) -> bool:
    """Whether a candidate run failed before the command began (see the module doc)."""
    if run.get("start_error"):
        return True
    if run.get("exit_code") == 0 or run.get("timed_out") or str(run.get("stdout_tail", "")).strip():
        return False
    stderr = str(run.get("stderr_tail", "")).lower()
    return any(sign in stderr for sign in NEVER_STARTED_SIGNS)


def _runs(tries: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    runs: list[Mapping[str, Any]] = []
    for entry in tries:
        reply = entry.get("reply") or {}
        verdict = reply.get("result") if isinstance(reply, Mapping) else None
        if isinstance(verdict, Mapping):
            runs += [r for r in verdict.get("runs") or [] if isinstance(r, Mapping)]
    return runs


def not_attacked(tool_calls: int, tool_errors: int, tries: Iterable[Mapping[str, Any]]) -> str:
    """Why the round could not attack the submission, or "" when it could."""
    if tool_calls and tool_errors / tool_calls > MAX_TOOL_ERROR_RATE:
        return (
            f"{tool_errors} of its {tool_calls} tool calls failed "
            f"({tool_errors / tool_calls:.0%}): the toolbox was refusing it"
        )
    runs = _runs(tries)
    if runs and all(never_started(run) for run in runs):
        return f"none of its {len(runs)} candidate run(s) started, so nothing ran on either tree"
    return ""
