"""Stop and restart the dockerd that serves ``DOCKER_HOST``, for the engine-fault tests.

Works on whichever engine the suite runs against: a developer's extra engine
(``/tmp/extra-dockerd.sh N``) or CI's default one (``scripts/ensure-docker.sh``). The
daemon is found by the unix socket it listens on (``/proc/net/unix`` gives the socket's
inode, ``/proc/*/fd`` the process holding it), falling back to its ``--pidfile``; it is
restarted with the very command line, environment and working directory read from
``/proc/<pid>`` before it was stopped. :meth:`EngineControl.ensure_up` brings it back
whatever happened in the test (the fixture calls it in its finaliser).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_SOCKET = "/var/run/docker.sock"


def socket_path() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        return host[len("unix://"):]
    if host:
        raise RuntimeError(f"engine-fault tests need a unix socket DOCKER_HOST, not {host!r}")
    return DEFAULT_SOCKET


def answers(timeout: float = 10.0) -> bool:
    """Whether the engine answers ``docker info`` now."""
    try:
        done = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _listener_inode(path: str) -> str | None:
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[-1] == path and parts[5] == "01":  # listening
            return parts[6]
    return None


def _owner_of(inode: str) -> int | None:
    wanted = f"socket:[{inode}]"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) == wanted:
                    return int(proc.name)
        except OSError:
            continue
    return None


def _pidfile_pid(path: str) -> int | None:
    m = re.search(r"docker(-\d+)?\.sock$", path)
    pidfile = Path(path).with_name(f"docker{m.group(1) or ''}.pid") if m else None
    if pidfile is None or not pidfile.is_file():
        return None
    try:
        return int(pidfile.read_text().strip())
    except ValueError:
        return None


def find_daemon(path: str) -> int:
    """The pid of the dockerd listening on ``path``."""
    inode = _listener_inode(path)
    pid = _owner_of(inode) if inode else None
    if pid is None:
        pid = _pidfile_pid(path)
    if pid is None or not Path(f"/proc/{pid}").exists():
        raise RuntimeError(f"no dockerd process found listening on {path}")
    return pid


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@dataclass
class EngineControl:
    """The engine under test: stop it, start it again, always leave it running."""

    socket: str = field(default_factory=socket_path)
    argv: list[str] = field(default_factory=list)
    environ: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    log: Path = Path("/tmp/srb-faults-dockerd.log")
    stops: int = 0

    def learn(self) -> None:
        pid = find_daemon(self.socket)
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        self.argv = [a.decode() for a in raw if a]
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        self.environ = dict(e.decode().split("=", 1) for e in env if b"=" in e)
        self.cwd = os.readlink(f"/proc/{pid}/cwd")

    def stop(self, deadline_sec: float = 60.0) -> None:
        """TERM the daemon and wait until it is gone and the socket no longer answers."""
        if not self.argv:
            self.learn()
        pid = find_daemon(self.socket)
        os.kill(pid, signal.SIGTERM)
        self.stops += 1
        end = time.monotonic() + deadline_sec
        while _alive(pid) or answers(timeout=2):
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                end = time.monotonic() + 10
            time.sleep(0.2)

    def start(self, deadline_sec: float = 90.0) -> None:
        """Start the daemon with its old command line; wait until it answers."""
        if answers(timeout=3):
            return  # a supervisor brought it back already
        if not self.argv:
            raise RuntimeError("the engine was never seen running; cannot restart it")
        with self.log.open("ab") as log:
            subprocess.Popen(self.argv, env=self.environ, cwd=self.cwd, stdout=log,
                             stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        end = time.monotonic() + deadline_sec
        while not answers(timeout=3):
            if time.monotonic() > end:
                raise RuntimeError(f"dockerd did not come back on {self.socket}; see {self.log}")
            time.sleep(0.5)

    def ensure_up(self) -> None:
        if not answers(timeout=5):
            self.start()
