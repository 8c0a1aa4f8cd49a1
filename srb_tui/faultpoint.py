"""Test-only fault points: stop srb deterministically at a named lifecycle boundary.

Off by default. When the environment variable ``SRB_FAULT_KILL_AT`` names a point (a
comma-separated list is allowed), the process SIGKILLs itself the moment it reaches that
point, as an operator's ``kill -9`` or a power cut would, but at an exact place rather
than after a guessed delay. The fault tests (tests/faults/) use it to prove that
``srb resume`` finishes a run from every boundary without losing or repeating anything.

Points (each reached *after* the named thing is durably written):

- ``status:<status>``  the run's transition to ``<status>`` is committed
  (``preparing``, ``agent``, ``collecting``, ``audit``, ``behavioural``,
  ``verification``, ``scored``);
- ``agent:started``    the agent container is created, recorded and started;
- ``collect:done``     the submission is extracted, before the agent container goes;
- ``scoring:files``    score.json / reward.json are written, before the store's score;
- ``scoring:stored``   the score is in the store, before the run becomes ``scored``.

``SRB_FAULT_STOP_AT`` takes the same points and SIGSTOPs the process instead: it stays
alive (holding its lease, its engine connections) frozen at that point until the test
sends SIGCONT or SIGKILL -- "a second srb is busy with this run", deterministically.

Stdlib only, so any layer (store, service) may call :func:`reached`.
"""

from __future__ import annotations

import os
import signal

ENV = "SRB_FAULT_KILL_AT"
STOP_ENV = "SRB_FAULT_STOP_AT"


def armed(variable: str = ENV) -> frozenset[str]:
    """The points named by ``variable`` (empty when unset)."""
    raw = os.environ.get(variable, "")
    return frozenset(p.strip() for p in raw.split(",") if p.strip())


def reached(point: str) -> None:
    """SIGKILL (or SIGSTOP) this process when ``point`` is armed; else do nothing."""
    if point in armed(ENV):
        os.kill(os.getpid(), signal.SIGKILL)
    if point in armed(STOP_ENV):
        os.kill(os.getpid(), signal.SIGSTOP)


__all__ = ["ENV", "STOP_ENV", "armed", "reached"]
