"""Starting a program as a slot's uid in a session of its own (:func:`spawn`).

Apart from :mod:`.sandbox` (which re-exports it) because the in-process launcher
(:mod:`.submission`, imported by every Python behavioural module) needs this and nothing
else of it: importing all of :mod:`.sandbox` (process groups, wipes, dataclasses) cost every
module ~6 ms before its first case.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

from .slot import SlotLimits, enabled, load_limits
from .slot import drop as _drop

TYPE_CHECKING = False  # not typing's: importing typing costs every module ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import IO


def spawn(
    argv: Sequence[str],
    *,
    slot: int,
    cwd: str,
    env: Mapping[str, str],
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    stdout: int | IO[bytes] | None = None,
    stderr: int | IO[bytes] | None = None,
    limits: SlotLimits | None = None,
    make: Sequence[str] = (),
    groups: Sequence[int] = (),
    ids: tuple[int, int] | None = None,
    then: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the slot's uid (or ``ids``) in a new session (as the caller when
    sandboxing is off), creating the ``make`` folders as that uid first; ``groups`` are its
    only supplementary groups (none by default); ``then`` runs in the child last, just
    before the exec. Raises OSError when it cannot start."""
    if not enabled():
        for folder in make:
            os.makedirs(folder, exist_ok=True)
    drop = _drop(slot, limits or load_limits(), cwd, make, groups, ids) if enabled() else None
    if then is not None:
        first, last = drop, then

        def drop() -> None:
            try:
                if first is not None:
                    first()
                last()
            except BaseException as exc:  # say why on the child's stderr, then fail the start
                with contextlib.suppress(OSError):
                    os.write(2, f"srb: cannot start {argv[0]}: {exc!r}\n".encode())
                raise

    return subprocess.Popen(
        list(argv),
        cwd=None if enabled() else cwd,  # the slot changes folder itself
        env=dict(env),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        close_fds=True,
        preexec_fn=drop,
    )
