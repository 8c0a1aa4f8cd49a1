"""``srb_submission.run``: start submission code from a Python module without a launcher.

A behavioural module written in Python runs under the grader's interpreter as uid 0. In a
stage container its ``PYTHONPATH`` holds :data:`LIBRARY_DIR`, whose ``srb_submission``
re-exports :func:`run`::

    import srb_submission
    done = srb_submission.run(["/workspace/repo/bin/tool", "-x"], cwd=work, timeout=20,
                              input=b"...", env={"LANG": "C.UTF-8"})
    done.returncode, done.stdout, done.stderr

The program gets exactly what ``srb-submission`` gives it (:mod:`.launch`): the slot's uid,
its own session, no ``SRB_*`` name, a private HOME and TMPDIR, the rlimits, and whatever it
leaves in its session is ended when it ends. The difference is cost: the module forks and
the child execs the program, where ``$SRB_SUBMISSION_RUN`` starts a second Python
interpreter per case first (tens of milliseconds against a case of a few hundred).

Results are :class:`subprocess.CompletedProcess`: the program's status, negative for a
signal; 127/126 with a ``srb-submission:`` line on stderr when it could not be started. A
program that outlives ``timeout`` has its whole session killed, then
:class:`subprocess.TimeoutExpired` is raised with what it had written.

``python=True`` (a Python-script entry point run with the grader's interpreter, as the
launcher's ``--python``) goes through the launcher executable: the script must start in a
fresh interpreter, not in a fork of the module, whose memory holds the recorded answers.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from ..contract import EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, EXIT_TIMEOUT
from .session_end import end_session
from .slot import prepare_launch
from .spawn import spawn

LIBRARY_DIR = "/opt/srb/lib"
"""Where the host installs ``srb_submission.py`` in a stage container."""
LAUNCHER = "/opt/srb/bin/srb-submission"
DRAIN_SEC = 1.0
"""How long output is still read once the program's session has been ended (a process
that escaped the session with setsid may hold the pipes; its output is not the program's)."""
LAUNCHER_SLACK_SEC = 10.0
CHUNK = 1 << 16


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    python: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` as the submission (see the module docstring); output is captured.
    ``env`` adds names to the submission's environment (HOME and PATH stay the launcher's);
    ``cwd`` defaults to ``work`` in the slot's scratch."""
    command = [str(part) for part in argv]
    if not command:
        raise ValueError("srb_submission.run: no command given")
    extra = {k: v for k, v in (env or {}).items() if k not in ("HOME", "PATH")}
    if python:
        return _through_launcher(command, cwd, timeout, extra, input)
    slot, dirs, child_env = prepare_launch(extra)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        proc = spawn(
            command, slot=slot, cwd=str(cwd or dirs["work"]), env=child_env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            make=list(dirs.values()),
        )
    except FileNotFoundError as exc:
        return _not_started(command, EXIT_NOT_FOUND, exc.strerror or str(exc))
    except OSError as exc:
        return _not_started(command, EXIT_CANNOT_EXECUTE, str(exc))
    return _collect(proc, command, input, timeout)


def _not_started(command: list[str], code: int, why: str) -> subprocess.CompletedProcess[bytes]:
    message = f"srb-submission: cannot start {command[0]!r}: {why}\n"
    return subprocess.CompletedProcess(command, code, b"", message.encode())


def _collect(
    proc: subprocess.Popen[bytes], command: list[str], data: bytes | None, timeout: float | None
) -> subprocess.CompletedProcess[bytes]:
    """Feed stdin, read stdout and stderr, notice the leader's end (a pidfd), end the
    session, then drain what the pipes still hold for at most DRAIN_SEC."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    out: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    pending = memoryview(data or b"")
    sel = selectors.DefaultSelector()
    try:
        leader = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        leader = -1  # no pidfds: the loop polls the leader instead
    stdin_fd = proc.stdin.fileno()
    if pending:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    for fd in out:
        sel.register(fd, selectors.EVENT_READ)
    if leader >= 0:
        sel.register(leader, selectors.EVENT_READ)
    timed_out = False
    ended_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if ended_at is None and proc.poll() is not None:
                end_session(proc.pid)
                ended_at = now
                if leader >= 0:
                    sel.unregister(leader)
            if ended_at is None and deadline is not None and now >= deadline:
                timed_out = True
                end_session(proc.pid)
                proc.wait()
                ended_at = now
                if leader >= 0:
                    sel.unregister(leader)
            reading = [fd for fd in out if _registered(sel, fd)]
            if ended_at is not None and (not reading or now >= ended_at + DRAIN_SEC):
                break
            waits = []
            if ended_at is not None:
                waits.append(ended_at + DRAIN_SEC - now)
            elif deadline is not None:
                waits.append(deadline - now)
            if leader < 0 and ended_at is None:
                waits.append(0.005)
            for key, _ in sel.select(max(min(waits), 0.0) if waits else None):
                fd = key.fd
                if fd == leader:
                    continue  # the loop's poll() sees the end
                if fd == stdin_fd:
                    try:
                        sent = os.write(fd, pending[:CHUNK])
                        pending = pending[sent:]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(fd)
                        proc.stdin.close()
                    continue
                chunk = os.read(fd, CHUNK)
                if chunk:
                    out[fd].append(chunk)
                else:
                    sel.unregister(fd)
    finally:
        sel.close()
        if leader >= 0:
            os.close(leader)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    return _finish(proc, command, out, timed_out, timeout)


def _registered(sel: selectors.BaseSelector, fd: int) -> bool:
    try:
        sel.get_key(fd)
    except KeyError:
        return False
    return True


def _finish(
    proc: subprocess.Popen[bytes], command: list[str], out: dict[int, list[bytes]],
    timed_out: bool, timeout: float | None,
) -> subprocess.CompletedProcess[bytes]:
    fds = list(out)
    stdout, stderr = b"".join(out[fds[0]]), b"".join(out[fds[1]])
    code = proc.wait()
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout or 0.0, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(command, code, stdout, stderr)


def _through_launcher(
    command: list[str], cwd: str | os.PathLike[str] | None, timeout: float | None,
    extra: Mapping[str, str], data: bytes | None,
) -> subprocess.CompletedProcess[bytes]:
    argv = [os.environ.get("SRB_SUBMISSION_RUN") or LAUNCHER]
    if cwd is not None:
        argv += ["--cwd", str(cwd)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    for name, value in extra.items():
        argv += ["--env", f"{name}={value}"]
    argv += ["--python", "--", *command]
    done = subprocess.run(
        argv, input=data or b"", capture_output=True,
        timeout=None if timeout is None else timeout + LAUNCHER_SLACK_SEC,
    )
    if done.returncode == EXIT_TIMEOUT and b"srb-submission:" in done.stderr:
        raise subprocess.TimeoutExpired(command, timeout or 0.0, output=done.stdout,
                                        stderr=done.stderr)
    return subprocess.CompletedProcess(command, done.returncode, done.stdout, done.stderr)


def library_text() -> str:
    """The ``srb_submission.py`` the host installs in :data:`LIBRARY_DIR`."""
    return (
        '"""srb\'s in-process launcher for Python behavioural modules '
        '(see srb_grader.boundary.submission)."""\n'
        "import sys as _sys\n"
        "if '/opt/srb' not in _sys.path:\n"
        "    _sys.path.append('/opt/srb')\n"
        "from srb_grader.boundary.submission import run  # noqa: E402,F401\n"
    )
