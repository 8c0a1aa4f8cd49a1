"""How the launchers end what is left of a program's session (standard library only).

Both ways of starting submission code (the ``srb-submission`` executable and the in-process
:mod:`.submission` API) start the program as the leader of a new session and, once it has
ended, TERM what is left of its process group, give it a short grace and KILL the rest. Kept
apart from :mod:`.sandbox` so the executable, which starts once per case, imports little.
"""

from __future__ import annotations

import os
import time

from .signals import signal

GROUP_GRACE_SEC = 0.05
"""What a leftover of the program's group gets between TERM and KILL."""


def group_alive(pgid: int) -> bool:
    """True while the process group can still be signalled (or is not ours to signal)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_session(pgid: int, grace_sec: float = GROUP_GRACE_SEC) -> None:
    """SIGTERM to what is left of the group, up to ``grace_sec`` for it to go, then SIGKILL.
    A group already empty (the usual end: nothing was left behind) costs one signal, not the
    grace: every case of a suite passes through here."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    deadline = time.monotonic() + grace_sec
    pause = 0.001
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(pause)  # a grace period, not a synchronisation: SIGKILL follows
        pause = min(pause * 2, 0.01)
    try:  # noqa: SIM105 - no contextlib here: the launcher starts once per case
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
