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
import ctypes
import errno
import fcntl
import os
import platform
import select
import signal
import socket
import struct
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .contract import EXIT_NOT_FOUND

STUB = "/@"
"""Where the stub lives in a stage container (short: it is written over a file name)."""
CHANNEL_FD = 1000

_ARCH = {
    # machine: (AUDIT_ARCH, execve, execveat, seccomp)
    "x86_64": (0xC000003E, 59, 322, 317),
    "aarch64": (0xC00000B7, 221, 281, 277),
}
_PIDFD_GETFD = 438
_SECCOMP_SET_MODE_FILTER = 1
_FLAG_NEW_LISTENER = 1 << 3
_RET_ALLOW = 0x7FFF0000
_RET_USER_NOTIF = 0x7FC00000
_RET_ERRNO = 0x00050000
_IOCTL_RECV = 0xC0502100
_IOCTL_SEND = 0xC0182101
_IOCTL_ID_VALID = 0x40082102
_IOCTL_ADDFD = 0x40182103
_ADDFD_FLAG_SETFD = 1
_FLAG_CONTINUE = 1
_O_CLOEXEC = 0o2000000
_AT_FDCWD = -100
_MAX_ARGS = 1 << 16
_MAX_BYTES = 4 << 20

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class BrokerError(Exception):
    """The boundary cannot be set up here (a harness fault, or an unsupported machine)."""


def supported() -> str | None:
    """None when this machine can run the broker, else why not."""
    if platform.machine() not in _ARCH:
        return f"no exec broker for {platform.machine()}"
    if not os.path.exists(STUB):
        return f"the exec stub {STUB} is missing"
    return None


# --------------------------------------------------------------------------- the filter


def _filter() -> bytes:
    arch, execve, execveat, _ = _ARCH[platform.machine()]
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06

    def op(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("<HBBI", code, jt, jf, k)

    return b"".join([
        op(ld, 0, 0, 4),  # arch
        op(jeq, 0, 6, arch),  # another ABI: nothing runs
        op(ld, 0, 0, 0),  # nr
        op(jset, 4, 0, 0x40000000),  # x32 numbers: nothing runs
        op(jeq, 2, 0, execve),
        op(jeq, 1, 0, execveat),
        op(ret, 0, 0, _RET_ALLOW),
        op(ret, 0, 0, _RET_USER_NOTIF),
        op(ret, 0, 0, _RET_ERRNO | errno.ENOSYS),
    ])


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_filter(send_to: int) -> None:
    """In the candidate's process before it execs: turn its execs into notifications and
    hand the listener to the broker over the unix socket ``send_to``."""
    code = _filter()
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Prog(len(code) // 8, ctypes.addressof(buf))
    _libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (already set in a stage container)
    nr = _ARCH[platform.machine()][3]
    fd = _libc.syscall(nr, _SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER, ctypes.byref(prog))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "seccomp listener")
    sock = socket.socket(fileno=send_to)
    try:
        socket.send_fds(sock, [b"L"], [fd])
    finally:
        sock.detach()
        os.close(fd)
        os.close(send_to)


# --------------------------------------------------------------------------- who runs it


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _resolve(cwd: str, name: str, *, only_existing: bool = False) -> list[str]:
    """The path ``name`` names from ``cwd`` (and its real path). A relative ``name`` that
    names nothing there (an option, a word) names no path when ``only_existing``."""
    joined = os.path.normpath(os.path.join(cwd, name))
    if only_existing and not name.startswith("/") and not os.path.lexists(joined):
        return []
    found = [joined]
    real = os.path.realpath(joined)
    if real != joined:
        found.append(real)
    return found


CODE_LOADERS = frozenset({
    "python", "pypy", "node", "nodejs", "deno", "bun", "npm", "npx", "yarn", "pnpm",
    "make", "gmake", "cmake", "ctest", "ninja", "meson", "go", "cargo", "java", "mvn",
    "gradle", "ant", "dotnet", "perl", "ruby", "php", "lua", "zig", "tsc", "ts-node",
    "cc", "gcc", "clang", "c++", "g++", "clang++", "tcc", "cpp", "javac", "rustc",
    "gfortran", "ld", "as",
})
"""Tools that load code from their working folder (``python3 -c`` imports it, ``make`` reads
its Makefile, ``node`` resolves ``node_modules`` there): started in the tree, they run it.
Compilers are among them: a candidate cannot read the tree's files (:mod:`.tree_copy`), so a
compile against the tree's headers (an argument naming the tree) runs as the program, which
can; its source then belongs in ``SRB_WORK`` or the tree, where the slot reads it."""


SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
"""Shells run their script argument: ``sh build.sh`` in the tree is the code under test."""


def _loader(file: str) -> bool:
    name = os.path.basename(file).lower()
    return name.rstrip("0123456789.-") in CODE_LOADERS or name in CODE_LOADERS


def classify(
    file: str,
    argv: Sequence[str],
    cwd: str,
    *,
    tree: Sequence[str],
    own: Sequence[str],
    built: Sequence[str] = (),
) -> str:
    """"candidate" or "program": who an exec of ``file`` with ``argv`` in ``cwd`` belongs to
    (``tree``: the tree under test; ``built``: where tasks build it, ``SRB_WORK``; ``own``:
    the candidate's own files), first rule that applies:

    1. the file started is the candidate's own, or in the tree or ``built``;
    2. its first argument that is not an option is the candidate's own, or, for a shell or
       a tool that loads code (an interpreter's script), in the tree or ``built``;
    3. it loads code (:data:`CODE_LOADERS`) and any argument names a path in the tree
       (``node --require=$SRB_TARGET/x.js``); a wrapper (``timeout``, ``env``, ``setsid``)
       is the candidate's, and the program it execs is caught by rule 1;
    4. it starts in the tree or ``built`` and loads code from its working folder
       (:data:`CODE_LOADERS`);
    5. otherwise it is the candidate's (``cmp``, ``cp -a $SRB_TARGET/. view/``, ``mktemp``,
       ``mkdir`` in ``SRB_WORK``, ``diff``): tools that read the tree but run none of it.
    """
    code = [*tree, *built]
    for path in _resolve(cwd, file):
        if _inside(path, own):
            return "candidate"
        if _inside(path, code):
            return "program"
    rest = list(argv[1:])
    script = next((a for a in rest if a and not a.startswith("-")), None)
    if script is not None:
        for path in _resolve(cwd, script, only_existing=True):
            if _inside(path, own) and os.path.exists(path):
                return "candidate"
            runs_it = _loader(file) or os.path.basename(file) in SHELLS
            if runs_it and _inside(path, code):
                return "program"
    for arg in rest if _loader(file) else ():
        names = [arg, arg.split("=", 1)[1]] if "=" in arg else [arg]
        paths = [p for n in names if n for p in _resolve(cwd, n, only_existing=True)]
        if any(_inside(p, tree) for p in paths):
            return "program"
    in_tree = _inside(os.path.normpath(cwd), code) or _inside(os.path.realpath(cwd), code)
    if in_tree and _loader(file):
        return "program"
    return "candidate"


# --------------------------------------------------------------------------- the broker


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


def _read_mem(mem: int, addr: int, size: int) -> bytes:
    return os.pread(mem, size, addr)


def _cstring(mem: int, addr: int, limit: int = 1 << 17) -> bytes:
    out = bytearray()
    while len(out) < limit:
        chunk = _read_mem(mem, addr + len(out), 256)
        if not chunk:
            raise OSError(errno.EFAULT, "unreadable string")
        end = chunk.find(b"\0")
        if end >= 0:
            out += chunk[:end]
            return bytes(out)
        out += chunk
    raise OSError(errno.E2BIG, "string too long")


def _vector(mem: int, addr: int) -> list[bytes]:
    items: list[bytes] = []
    total = 0
    if addr == 0:
        return items
    for index in range(_MAX_ARGS):
        (ptr,) = struct.unpack("<Q", _read_mem(mem, addr + 8 * index, 8))
        if ptr == 0:
            return items
        item = _cstring(mem, ptr)
        total += len(item) + 1
        if total > _MAX_BYTES:
            raise OSError(errno.E2BIG, "argument list too long")
        items.append(item)
    raise OSError(errno.E2BIG, "argument list too long")


def _open_fds(pid: int) -> list[int]:
    found: list[int] = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            with open(f"/proc/{pid}/fdinfo/{name}", "rb") as handle:
                info = handle.read()
        except OSError:
            continue
        for line in info.splitlines():
            if line.startswith(b"flags:"):
                if not int(line.split()[1], 8) & _O_CLOEXEC:
                    found.append(int(name))
                break
    return sorted(found)


def _uids(pid: int) -> set[int]:
    """The real, effective, saved and filesystem uids of ``pid`` (empty when unreadable)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Uid:"):
                    return {int(field) for field in line.split()[1:5]}
    except (OSError, ValueError):
        return set()
    return set()


def _pidfd_getfd(pidfd: int, fd: int) -> int:
    got = _libc.syscall(_PIDFD_GETFD, pidfd, fd, 0)
    if got < 0:
        raise OSError(ctypes.get_errno(), f"pidfd_getfd {fd}")
    return int(got)


@contextlib.contextmanager
def _fs_identity(ids: tuple[int, int] | None) -> Iterator[None]:
    """This thread opens files as ``ids`` (its fsuid/fsgid): /proc/<pid>/mem and fdinfo are
    0600/0400 files of the candidate's uid, and the grader has no DAC_OVERRIDE."""
    if ids is None:
        yield
        return
    old_gid = _libc.setfsgid(ids[1])
    old_uid = _libc.setfsuid(ids[0])
    try:
        yield
    finally:
        _libc.setfsuid(old_uid)
        _libc.setfsgid(old_gid)


def _ioctl(fd: int, request: int, buf: bytearray) -> int:
    return int(fcntl.ioctl(fd, request, buf, True))


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
            _ioctl(self._listener, _IOCTL_RECV, buf)
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
            _ioctl(self._listener, _IOCTL_ID_VALID, bytearray(struct.pack("<Q", notif_id)))
            return True
        except OSError:
            return False

    def _answer(self, notif_id: int, *, error: int = 0, proceed: bool = False) -> None:
        assert self._listener is not None
        resp = bytearray(struct.pack("<QqiI", notif_id, 0, -error if error else 0,
                                     _FLAG_CONTINUE if proceed else 0))
        with contextlib.suppress(OSError):  # the process is gone: nothing to answer
            _ioctl(self._listener, _IOCTL_SEND, resp)

    def _decide(self, notif_id: int, pid: int, nr: int, args: list[int]) -> None:
        _, execve, _execveat, _ = _ARCH[platform.machine()]
        with self._lock:
            first, self._first = self._first, False
        if first or (self.passes is not None and _uids(pid) == {self.passes}):
            # the candidate command itself (its file resolved beforehand), or a process
            # that already is the identity programs run as
            self._answer(notif_id, proceed=True)
            return
        if nr == execve:
            dirfd, path_at, argv_at, envp_at = _AT_FDCWD, args[0], args[1], args[2]
        else:
            dirfd = struct.unpack("<i", struct.pack("<I", args[0] & 0xFFFFFFFF))[0]
            path_at, argv_at, envp_at = args[1], args[2], args[3]
        with _fs_identity(self.peer):
            mem = os.open(f"/proc/{pid}/mem", os.O_RDWR | os.O_CLOEXEC)
        try:
            file = _cstring(mem, path_at, 4096)
            argv = _vector(mem, argv_at)
            envp = _vector(mem, envp_at)
            with _fs_identity(self.peer):
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
        with _fs_identity(self.peer):
            open_fds = _open_fds(pid)
        try:
            for fd in open_fds:
                with contextlib.suppress(OSError):
                    taken[fd] = _pidfd_getfd(pidfd, fd)
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
            addfd = bytearray(struct.pack("<QIIII", notif_id, _ADDFD_FLAG_SETFD,
                                          theirs.fileno(), CHANNEL_FD, 0))
            _ioctl(self._listener, _IOCTL_ADDFD, addfd)
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
