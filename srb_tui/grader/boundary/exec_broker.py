"""Stage III: the code under test runs apart from the candidate that starts it.

A candidate judges the program it starts (``"$SRB_TARGET/bin/x"``, ``node
$SRB_TARGET/lib/cli.js``, ``make`` in the tree), so the program must not reach the
candidate: its file, descriptors, memory, ``/proc`` entries or private scratch. Sharing one
uid gives all of that away (``/proc/$PPID/fd/255`` is the candidate's script, ``/proc/$PPID/mem``
its memory). So the candidate runs as its own identity (:func:`.sandbox.candidate_ids`) and
every program it starts runs as the submission's slot uid, started by this broker.

How an exec is caught. Before the candidate command is exec'd, its process installs a
seccomp filter that turns ``execve``/``execveat`` into a user notification
(:func:`install_filter`, run as the candidate uid, under no-new-privileges). The grader
(root, with CAP_SYS_PTRACE: it alone may read a candidate process's memory) receives each
notification, reads the file, argv, environment and working folder of the exec, and decides
who runs it (:func:`classify`):

- the candidate's own files (its entry, the task's run-candidate.sh) stay the candidate's;
- a file inside the tree under test or ``SRB_WORK`` (where tasks build it), an argument
  naming such a path, or a tool that loads code from its working folder (``make``,
  ``python3``, ``node``) started inside them: the code under test;
- anything else (``cmp``, ``mktemp``, ``diff`` on the candidate's own files) stays the
  candidate's.

For the code under test the broker forks, becomes the slot uid in a session of its own,
takes over the candidate process's open descriptors (``pidfd_getfd``: same pipes, same
files, at the same numbers), drops every ``SRB_*`` name from the environment, gives it the
slot's own HOME and TMPDIR where the candidate's were inherited, and execs the program. If
that exec fails, the candidate's exec fails with the same errno. Otherwise the candidate
process execs :data:`STUB` instead (its path is written over the file name the kernel
re-reads on CONTINUE) with a channel to the broker at fd 1000: the stub holds nothing else,
forwards signals to the program and ends as the program ended.

Why this mechanism: a second uid is what keeps a process from reading or writing another's
``/proc`` entries and memory, and from ptrace and ``process_vm_writev`` (no Yama here, and a
non-dumpable flag is reset by the next exec); but the published contract has the candidate
start the program itself, and nothing but a privileged party can start a program under
another uid (no-new-privileges rules out setuid). Landlock's ptrace scoping needs the same
hook at exec time, and a private ``/proc`` needs a PID namespace (CAP_SYS_ADMIN).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import platform
import select
import signal
import socket
import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..contract import EXIT_NOT_FOUND
from .exec_rules import classify
from .seccomp import (
    ADDFD_FLAG_SETFD,
    ARCH,
    FLAG_CONTINUE,
    IOCTL_ADDFD,
    IOCTL_ID_VALID,
    IOCTL_RECV,
    IOCTL_SEND,
    ioctl,
    pidfd_getfd,
)
from .tracee import cstring, fs_identity, open_fds, uids, vector

STUB = "/@"
"""Where the stub lives in a stage container (short: it is written over a file name)."""
CHANNEL_FD = 1000

_AT_FDCWD = -100


class BrokerError(Exception):
    """The boundary cannot be set up here (a harness fault, or an unsupported machine)."""


def supported() -> str | None:
    """None when this machine can run the broker, else why not."""
    if platform.machine() not in ARCH:
        return f"no exec broker for {platform.machine()}"
    if not os.path.exists(STUB):
        return f"the exec stub {STUB} is missing"
    return None




@dataclass
class Program:
    """One program the broker started for a candidate."""

    argv: list[str]
    cwd: str
    pid: int = 0
    status: int | None = None
    start_errno: int | None = None


@dataclass
class BrokerReport:
    """What the broker did for one candidate run."""

    programs: list[Program] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        return {
            "programs": len(self.programs),
            "started": sum(1 for p in self.programs if p.start_errno is None),
            "program_argv0": [p.argv[0] if p.argv else "" for p in self.programs[:20]],
            "refused": self.refused[:20],
            "faults": self.faults[:20],
        }


class Broker:
    """Serves the exec notifications of one candidate run (a thread of the grader)."""

    def __init__(
        self,
        *,
        tree: Sequence[str],
        own: Sequence[str],
        become: Callable[[str], Callable[[], None]],
        built: Sequence[str] = (),
        program_env: Callable[[Mapping[bytes, bytes]], dict[bytes, bytes]],
        peer: tuple[int, int] | None = None,
        passes: int | None = None,
    ) -> None:
        """``peer``: the candidate's (uid, gid), which the broker reads its processes as;
        ``passes``: a uid whose execs go through untouched (Stage II: a module's launcher
        child that has already become the slot)."""
        self.peer = peer
        self.passes = passes
        self.tree = [os.path.normpath(p) for p in tree]
        self.built = [os.path.normpath(p) for p in built]
        self.own = [os.path.normpath(p) for p in own]
        self.become = become
        self.program_env = program_env
        self.report = BrokerReport()
        self._recv, self._send = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._stop_r, self._stop_w = os.pipe()
        self._listener: int | None = None
        self._first = True
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._main = threading.Thread(target=self._serve, name="exec-broker", daemon=True)

    # the candidate side ---------------------------------------------------------------

    @property
    def child_fd(self) -> int:
        """The socket the candidate's process sends its listener through (keep it open in
        the child until :func:`install_filter` ran)."""
        return self._send.fileno()

    def start(self) -> None:
        self._main.start()

    def launched(self, pid: int) -> None:
        """The candidate's process ``pid`` runs (it has its own copy of the socket)."""
        self._send.close()

    def stop(self, timeout: float = 5.0) -> BrokerReport:
        self._send.close()
        os.write(self._stop_w, b"x")
        self._main.join(timeout)
        for thread in list(self._threads):
            thread.join(timeout)
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        self._recv.close()
        if self._listener is not None:
            os.close(self._listener)
        return self.report

    # the grader side ------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            self._recv.settimeout(60)
            _msg, fds, _flags, _addr = socket.recv_fds(self._recv, 16, 1)
        except OSError as exc:
            self.report.faults.append(f"no listener from the candidate: {exc}")
            return
        if not fds:
            return  # the candidate's process ended before it could start
        self._listener = fds[0]
        poller = select.poll()
        poller.register(self._listener, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while True:
            events = dict(poller.poll())
            if self._stop_r in events:
                return
            mask = events.get(self._listener, 0)
            if mask & select.POLLIN:
                self._one()
            elif mask & (select.POLLHUP | select.POLLERR):
                return  # no process of the candidate is left

    def _one(self) -> None:
        assert self._listener is not None
        buf = bytearray(80)
        try:
            ioctl(self._listener, IOCTL_RECV, buf)
        except OSError:
            return  # the process went away meanwhile
        notif_id, pid, _flags, nr, _arch, _ip, *args = struct.unpack("<QIIiIQ6Q", buf)
        try:
            self._decide(notif_id, pid, nr, args)
        except OSError as exc:
            self.report.faults.append(f"exec of pid {pid}: {exc}")
            self._answer(notif_id, error=exc.errno or errno.EACCES)

    def _valid(self, notif_id: int) -> bool:
        assert self._listener is not None
        try:
            ioctl(self._listener, IOCTL_ID_VALID, bytearray(struct.pack("<Q", notif_id)))
            return True
        except OSError:
            return False

    def _answer(self, notif_id: int, *, error: int = 0, proceed: bool = False) -> None:
        assert self._listener is not None
        resp = bytearray(struct.pack("<QqiI", notif_id, 0, -error if error else 0,
                                     FLAG_CONTINUE if proceed else 0))
        with contextlib.suppress(OSError):  # the process is gone: nothing to answer
            ioctl(self._listener, IOCTL_SEND, resp)

    def _decide(self, notif_id: int, pid: int, nr: int, args: list[int]) -> None:
        _, execve, _execveat, _ = ARCH[platform.machine()]
        with self._lock:
            first, self._first = self._first, False
        if first or (self.passes is not None and uids(pid) == {self.passes}):
            # the candidate command itself (its file resolved beforehand), or a process
            # that already is the identity programs run as
            self._answer(notif_id, proceed=True)
            return
        if nr == execve:
            dirfd, path_at, argv_at, envp_at = _AT_FDCWD, args[0], args[1], args[2]
        else:
            dirfd = struct.unpack("<i", struct.pack("<I", args[0] & 0xFFFFFFFF))[0]
            path_at, argv_at, envp_at = args[1], args[2], args[3]
        with fs_identity(self.peer):
            mem = os.open(f"/proc/{pid}/mem", os.O_RDWR | os.O_CLOEXEC)
        try:
            file = cstring(mem, path_at, 4096)
            argv = vector(mem, argv_at)
            envp = vector(mem, envp_at)
            with fs_identity(self.peer):
                cwd = os.readlink(f"/proc/{pid}/cwd")
                if dirfd != _AT_FDCWD and not file.startswith(b"/"):
                    cwd = os.readlink(f"/proc/{pid}/fd/{dirfd}")
            if not self._valid(notif_id):
                return
            text = [a.decode("utf-8", "surrogateescape") for a in argv]
            name = file.decode("utf-8", "surrogateescape")
            side = classify(name, text, cwd, tree=self.tree, own=self.own, built=self.built)
            if side == "candidate" or not file:
                self._answer(notif_id, proceed=True)
                return
            if len(file) < len(STUB):
                self.report.refused.append(f"{name}: a file name shorter than the stub's")
                self._answer(notif_id, error=errno.ENAMETOOLONG)
                return
            self._start_program(notif_id, pid, mem, path_at, file, argv, envp, cwd)
        finally:
            os.close(mem)

    def _start_program(
        self, notif_id: int, pid: int, mem: int, path_at: int, file: bytes,
        argv: list[bytes], envp: list[bytes], cwd: str,
    ) -> None:
        assert self._listener is not None
        env: dict[bytes, bytes] = {}
        for item in envp:
            key, sep, value = item.partition(b"=")
            if sep:
                env[key] = value
        env = self.program_env(env)
        record = Program([a.decode("utf-8", "replace") for a in argv], cwd)
        pidfd = os.pidfd_open(pid)
        taken: dict[int, int] = {}
        with fs_identity(self.peer):
            inherited = open_fds(pid)
        try:
            for fd in inherited:
                with contextlib.suppress(OSError):
                    taken[fd] = pidfd_getfd(pidfd, fd)
        finally:
            os.close(pidfd)
        err_r, err_w = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the forked child
            _exec_program(taken, err_w, self.become(cwd), file, argv, env)
        os.close(err_w)
        for fd in taken.values():
            os.close(fd)
        failed = os.read(err_r, 4)
        os.close(err_r)
        if failed:
            os.waitpid(child, 0)
            record.start_errno = struct.unpack("<i", failed)[0]
            self.report.programs.append(record)
            self._answer(notif_id, error=record.start_errno or errno.EACCES)
            return
        record.pid = child
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            addfd = bytearray(struct.pack("<QIIII", notif_id, ADDFD_FLAG_SETFD,
                                          theirs.fileno(), CHANNEL_FD, 0))
            ioctl(self._listener, IOCTL_ADDFD, addfd)
            os.pwrite(mem, STUB.encode() + b"\0", path_at)
        except OSError as exc:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            ours.close()
            self.report.faults.append(f"cannot hand pid {pid} the stub: {exc}")
            self._answer(notif_id, error=errno.EACCES)
            return
        finally:
            theirs.close()
        self.report.programs.append(record)
        self._answer(notif_id, proceed=True)
        watcher = threading.Thread(target=_watch, args=(child, ours, record), daemon=True)
        self._threads.append(watcher)
        watcher.start()


def _exec_program(
    taken: Mapping[int, int], err_w: int, become: Callable[[], None], file: bytes,
    argv: list[bytes], env: Mapping[bytes, bytes],
) -> None:  # pragma: no cover - runs in the forked child
    try:
        high = max([*taken.keys(), *taken.values(), err_w, 2]) + 1
        moved = {target: os.dup(source) if source >= high else
                 _dup_above(source, high) for target, source in taken.items()}
        for target, source in moved.items():
            os.dup2(source, target, inheritable=True)
        keep = set(taken) | {err_w}
        for fd in _all_fds():
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if 0 not in taken:
            os.open(os.devnull, os.O_RDONLY)  # lowest free: 0
        for sig in range(1, signal.NSIG):
            with contextlib.suppress(OSError, ValueError):
                if sig not in (signal.SIGKILL, signal.SIGSTOP):
                    signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        become()  # (no session or group of its own: `setsid prog` must work as it would)
        os.execve(file, argv, dict(env))
    except OSError as exc:
        os.write(err_w, struct.pack("<i", exc.errno or errno.EACCES))
    except BaseException:
        os.write(err_w, struct.pack("<i", errno.EACCES))
    os._exit(EXIT_NOT_FOUND)


def _dup_above(fd: int, low: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)


def _all_fds() -> list[int]:
    return [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit()]


def _signal_program(child: int, sig: int) -> None:
    """A signal the stub received, to the program: to its process group when it made one
    (``setsid prog &`` then ``kill -- -$!``: the stub leads a group of its own), else to it."""
    with contextlib.suppress(OSError):
        if os.getpgid(child) == child:
            os.killpg(child, sig)
        else:
            os.kill(child, sig)


def _watch(child: int, channel: socket.socket, record: Program) -> None:
    """Relay the stub's signals to the program; send the program's end to the stub."""
    pidfd = os.pidfd_open(child)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(channel.fileno(), select.POLLIN)
    stub_gone = False
    try:
        while True:
            events = dict(poller.poll())
            if pidfd in events:
                break
            mask = events.get(channel.fileno(), 0)
            if mask & select.POLLIN:
                data = b""
                with contextlib.suppress(OSError):
                    data = channel.recv(64)
                if data:
                    for sig in data:
                        _signal_program(child, sig)
                    continue
            if mask & (select.POLLHUP | select.POLLERR | select.POLLIN):
                stub_gone = True  # the candidate killed the stub: the program goes too
                _signal_program(child, signal.SIGKILL)
                poller.unregister(channel.fileno())
        _, status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(status)
        record.status = code
        if not stub_gone:
            with contextlib.suppress(OSError):
                channel.sendall(struct.pack("<i", code))
    finally:
        os.close(pidfd)
        channel.close()
