"""``srb-submission``: the one way a behavioural module starts submission code.

    srb-submission [--cwd DIR] [--timeout SEC] [--env NAME=VALUE]... [--python] -- ARGV...

The module contract gives every module ``$SRB_SUBMISSION_RUN`` (this launcher's path). The
launcher runs ARGV as the submission's uid (:mod:`.sandbox`): its own session, no ``SRB_*``
name in its environment, the grader's folders off its PATH, a private HOME and TMPDIR in the
slot's scratch, ``PYTHONNOUSERSITE=1``, a file-size and process rlimit. The default working
folder is ``work`` in that scratch. Standard input, output and error are the module's own.

``--python`` runs ARGV[0], a Python script, with the grader's interpreter: the launcher forks,
the child drops to the submission uid and runs the script in-process. The interpreter's
binary stays unreadable and unexecutable for that uid, so this hands Python to a tree whose
entry point *is* a Python script (State A in an identity run, an unported submission that
Stage I rejects) and to nothing else.

Exit status: the program's own; a program killed by a signal kills the launcher with the same
signal; 124 when ``--timeout`` ran out (the whole session is killed first); 126/127 when the
program could not be started (a message on stderr says why). When the program ends, what is
left of its session is killed; the grader ends every process of the uid when the module ends.
SIGTERM or SIGINT to the launcher kill the program's whole session, then the launcher exits
128+N (how a module stops a server it started).
"""

from __future__ import annotations

import os
import sys
import time

from ..contract import (
    EXIT_CANNOT_EXECUTE,
    EXIT_LAUNCH_FAILED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_SIGNAL_BASE,
    EXIT_TIMEOUT,
    EXIT_UNUSABLE,
)
from . import slot as identity
from .session_end import end_session
from .signals import signal

TYPE_CHECKING = False  # not typing's: importing typing costs the launcher ~20 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

GRACE_SEC = 2.0
USAGE = ("usage: srb-submission [--cwd DIR] [--timeout SEC] [--env NAME=VALUE]... [--python]"
         " -- ARGV...")


class _Args:
    """The launcher's options (parsed by hand: the launcher starts once per case, and
    argparse alone costs more than the rest of its imports)."""

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.timeout: float | None = None
        self.env: list[str] = []
        self.python = False
        self.argv: list[str] = []


def _parse(argv: Sequence[str]) -> _Args:
    """Options up to ``--`` or the first word that is not one; raises ValueError naming
    what is wrong."""
    args = _Args()
    items = list(argv)
    i = 0
    while i < len(items):
        word = items[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name, eq, inline = word.partition("=")
        if name == "--python" and not eq:
            args.python = True
            i += 1
            continue
        if name in ("-h", "--help") and not eq:
            raise ValueError("")
        if name not in ("--cwd", "--timeout", "--env"):
            raise ValueError(f"unknown option {word!r}")
        if eq:
            value = inline
        elif i + 1 < len(items):
            i += 1
            value = items[i]
        else:
            raise ValueError(f"{name} needs a value")
        if name == "--cwd":
            args.cwd = value
        elif name == "--env":
            args.env.append(value)
        else:
            try:
                args.timeout = float(value)
            except ValueError:
                raise ValueError(f"--timeout {value!r} is not a number of seconds") from None
        i += 1
    args.argv = items[i:]
    return args


MAX_FD = 65536
RESTORED_SIGNALS = ("SIGPIPE", "SIGXFZ", "SIGXFSZ")
"""Signals Python ignores at start and a program must get back at their defaults (as
subprocess's ``restore_signals`` does)."""


def _tell(fd: int, message: str) -> None:
    try:  # noqa: SIM105 - no contextlib here: the launcher starts once per case
        os.write(fd, message.encode("utf-8", "replace"))
    except OSError:
        pass


def _spawn(command: list[str], slot: int, cwd: str, env: dict[str, str], make: list[str]) -> int:
    """Fork; the child starts a session of its own, becomes the slot (:func:`.slot.drop`)
    and execs ``command``. Returns its pid; raises the OSError that kept the program from
    starting (reported by the child through a close-on-exec pipe)."""
    report, tell = os.pipe()  # both close-on-exec: an exec that works closes ``tell``
    pid = os.fork()
    if pid == 0:
        try:
            os.close(report)
            for name in RESTORED_SIGNALS:
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            os.setsid()
            if identity.enabled():
                identity.drop(slot, identity.load_limits(), cwd, make)()
            else:
                for folder in make:
                    os.makedirs(folder, exist_ok=True)
                os.chdir(cwd)
            os.closerange(3, tell)
            os.closerange(tell + 1, MAX_FD)
            os.execvpe(command[0], command, env)
        except OSError as exc:
            _tell(tell, f"{exc.errno or 0}:{exc.strerror or exc}")
        except BaseException as exc:
            _tell(tell, f"0:{exc}")
        os._exit(EXIT_NOT_FOUND)
    os.close(tell)
    chunks = []
    while chunk := os.read(report, 4096):
        chunks.append(chunk)
    os.close(report)
    if chunks:
        os.waitpid(pid, 0)
        number, _, why = b"".join(chunks).decode("utf-8", "replace").partition(":")
        code = int(number) if number.isdigit() else 0
        raise OSError(code, why) if code else OSError(why)
    return pid


def _python_child(
    argv: list[str], slot: int, cwd: str, env: dict[str, str], make: list[str]
) -> None:
    """In a forked child: drop to the slot, then run the script as ``__main__``. Never returns."""
    import runpy
    import traceback

    code = 1
    try:
        if identity.enabled():
            identity.drop(slot, identity.load_limits(), cwd, make)()
        else:
            for folder in make:
                os.makedirs(folder, exist_ok=True)
        os.setsid()
        os.chdir(cwd)
        os.closerange(3, 65536)
        os.environ.clear()
        os.environ.update(env)
        script = os.path.abspath(argv[0])
        sys.argv = [script, *argv[1:]]
        sys.path[:] = [os.path.dirname(script)] + [
            p for p in sys.path[1:] if p and not p.startswith("/opt/srb")
        ]
        sys.dont_write_bytecode = True
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code & 0xFF
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # the child exits either way
            pass
        os._exit(code)


def _wait(pid: int, timeout: float | None) -> int | None:
    """The wait status of ``pid``, or None when ``timeout`` ran out first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.005)  # a case's end is seen within 5 ms


def _end_on_term(pid: int) -> None:
    """SIGTERM/SIGINT to the launcher end the program's whole session first (a module that
    started a server stops it by signalling the launcher), then the launcher exits 128+N."""

    def stop(signum: int, _frame: object) -> None:
        end_session(pid)
        try:  # noqa: SIM105 - no contextlib here: the launcher starts once per case
            _wait(pid, GRACE_SEC)
        except ChildProcessError:
            pass
        os._exit(EXIT_SIGNAL_BASE + signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parse(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"srb-submission: {exc}\n{USAGE}" if str(exc) else USAGE, file=sys.stderr)
        return EXIT_UNUSABLE if str(exc) else EXIT_OK
    command = args.argv
    if not command:
        print("srb-submission: no command given (srb-submission [options] -- ARGV...)",
              file=sys.stderr)
        return EXIT_UNUSABLE
    extra: dict[str, str] = {}
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            print(f"srb-submission: --env {item!r} is not NAME=VALUE", file=sys.stderr)
            return EXIT_UNUSABLE
        extra[name] = value
    try:
        slot, dirs, env = identity.prepare_launch(extra)
    except identity.SandboxError as exc:
        print(f"srb-submission: {exc}", file=sys.stderr)
        return EXIT_LAUNCH_FAILED
    make = list(dirs.values())
    cwd = args.cwd or dirs["work"]
    sys.stdout.flush()
    sys.stderr.flush()
    if args.python:
        pid = os.fork()
        if pid == 0:
            _python_child(command, slot, cwd, env, make)
    else:
        try:
            pid = _spawn(command, slot, cwd, env, make)
        except FileNotFoundError as exc:
            print(f"srb-submission: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
            return EXIT_NOT_FOUND
        except OSError as exc:
            print(f"srb-submission: cannot start {command[0]!r}: {exc}", file=sys.stderr)
            return EXIT_CANNOT_EXECUTE
    _end_on_term(pid)
    status = _wait(pid, args.timeout)
    if status is None:
        end_session(pid)
        _wait(pid, None)
        print(f"srb-submission: {command[0]} ran past {args.timeout:g} s; killed",
              file=sys.stderr)
        return EXIT_TIMEOUT
    end_session(pid)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return EXIT_SIGNAL_BASE - code
    return code


def script_text(python: str) -> str:
    """The ``srb-submission`` file the host installs next to the grader package."""
    return (
        f"#!{python} -I\n"
        "import sys\n"
        "sys.path.insert(0, '/opt/srb')\n"
        "from srb_grader.boundary.launch import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
