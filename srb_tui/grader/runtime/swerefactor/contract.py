"""The module environment contract: which names belong to the runner, and a scrub.

A module is handed eight locations by the behavioural runner. A program the submission
controls needs none of them, so :func:`submission_env` removes exactly those names
(not every ``SRB_`` name: names a task declares, such as a shim switch or an offline
proxy root, are inputs the submission's build is meant to read).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping

CONTRACT_ENV = frozenset(
    {
        "SRB_REPO",
        "SRB_ORIGINAL",
        "SRB_MODULE_DIR",
        "SRB_MODULE_ID",
        "SRB_SUITE_DIR",
        "SRB_WORK",
        "SRB_SUITE_WORK",
        "SRB_RESULT",
    }
)
REAP_GRACE_SEC = 5.0


def submission_env(
    base: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) without the contract
    names, then ``extra`` on top (unfiltered: the caller asked for it)."""
    source = os.environ if base is None else base
    env = {key: value for key, value in source.items() if key not in CONTRACT_ENV}
    if extra:
        env.update(extra)
    return env


def reap_group(
    pid: int, grace: float = REAP_GRACE_SEC, log: Callable[[str], object] | None = None
) -> int:
    """TERM, then KILL, what is left of process group ``pid``; how many signals were sent."""
    sent = 0
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return sent
        sent += 1
        if log is not None:
            log(f"signalled process group {pid} with {sig.name}")
        limit = time.monotonic() + grace
        while time.monotonic() < limit:
            try:
                os.killpg(pid, 0)
            except OSError:
                return sent
            time.sleep(0.05)
    return sent
