"""The end of one Stage II module, as the grader sees it: what uid 0 left in the
submission's tree, what the submission's uid left running (killed) and written (wiped),
and the line that says when the sandbox may have caused a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..boundary import sandbox
from .module_env import SUITE_SLOT

ROOT_SCAN_LIMIT = 20000
SANDBOX_SIGNS = (
    ("Permission denied", "a write or access was refused (EACCES)"),
    ("Read-only file system", "a write to a read-only mount was refused (EROFS)"),
    ("Operation not permitted", "an operation needing a capability was refused (EPERM)"),
    ("EACCES", "a write or access was refused (EACCES)"),
    ("EROFS", "a write to a read-only mount was refused (EROFS)"),
)


def root_entries(repo: Path, most: int = 5) -> list[str]:
    """Entries of ``repo`` owned by uid 0 (in a stage container the submission's copy holds
    none until a module, or submission code a module started itself, writes there); at most
    ``most`` names plus what an earlier module left, relative to ``repo``. Compared before
    and after each module, so only the module that wrote is named."""
    if not sandbox.enabled():
        return []
    found: list[str] = []
    seen = 0
    for current, dirs, files in os.walk(repo):
        for name in dirs + files:
            seen += 1
            path = Path(current) / name
            try:
                owner = os.lstat(path).st_uid
            except OSError:
                continue
            if owner == 0:
                found.append(path.relative_to(repo).as_posix())
        if seen > ROOT_SCAN_LIMIT:
            break
    return found


def boundary_note(entries: list[str]) -> str:
    """What a module that wrote into the submission's tree as uid 0 itself gave up: the
    programs it started ran as the slot (the exec boundary), so what wrote there was the
    module's own process, and whatever ran inside it (code of the tree it imported or
    loaded in-process, not a program it started) ran as uid 0."""
    return ("the module's own process wrote into $SRB_REPO as uid 0 (" + ", ".join(entries)
            + "): code of the tree it loaded in-process (not a program it started, which "
            "runs as the slot) ran as the module's identity, outside the submission sandbox")


def sandbox_hint(checks: list[dict[str, Any]], stderr_tail: str) -> str:
    """A line saying the sandbox refused something when a failing check's text or the
    module's stderr shows it (a refused write, a missing capability), '' otherwise."""
    texts = [(str(c.get("id")), " ".join(str(c.get(k, "")) for k in ("summary", "details",
                                                                        "message")))
             for c in checks if c.get("verdict") in ("fail", "error")]
    texts.append(("stderr", stderr_tail))
    for where, text in texts:
        for sign, what in SANDBOX_SIGNS:
            if sign in text:
                line = next((ln.strip() for ln in text.splitlines() if sign in ln), sign)
                return (f"the sandbox may have caused this: {what} in {where}: "
                        f"{line[:200]!r}")
    return ""


def end_submission() -> str:
    """Kill whatever the submission uid left running and wipe its scratch; a note on what
    was found ('' when nothing was left)."""
    if not sandbox.enabled():
        return ""
    uid, _ = sandbox.slot_ids(SUITE_SLOT)
    left = len(sandbox.uid_processes(uid))
    gone = sandbox.reset(SUITE_SLOT)
    if not gone:
        return f"{left} submission processes outlived the module and could not all be killed"
    return f"{left} submission processes outlived the module; killed" if left else ""
