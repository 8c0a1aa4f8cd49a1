"""What a container is made from (``ContainerSpec``) and what its log yields (``ContainerLogLine``).

Also the label keys every srb container and image carries, and the container name
derived from run and role.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Stream = Literal["stdout", "stderr"]

LABEL_MANAGED = "srb.managed"
LABEL_RUN = "srb.run"
LABEL_ROLE = "srb.role"
LABEL_CONTEXT = "srb.context"
LABEL_STORE = "srb.store"  # which store's run a container belongs to (see store_tag)

AGENT_UID = 1000
AGENT_GID = 1000
WORKSPACE = "/workspace"
REPO_DIR = "/workspace/repo"

GIB = 1024**3



def store_tag(db_path: Path) -> str:
    """A short stable tag of the store at ``db_path``: the value of ``srb.store`` on every
    container srb creates for that store's runs, so one store never reaps another's."""
    return hashlib.sha256(str(db_path.resolve()).encode()).hexdigest()[:16]


_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]+")
_USER = re.compile(r"^(\d+):(\d+)$")


def container_name(run_id: str, role: str) -> str:
    """``srb-<run>-<role>`` with characters Docker refuses in names replaced by ``-``."""
    run = _NAME_UNSAFE.sub("-", run_id).strip("-.") or "run"
    part = _NAME_UNSAFE.sub("-", role).strip("-.") or "role"
    return f"srb-{run}-{part}"


@dataclass(frozen=True, slots=True)
class ContainerLogLine:
    """One log line: a normalised RFC 3339 timestamp (9 fraction digits), stream, text."""

    ts: str
    stream: Stream
    text: str


@dataclass(frozen=True)
class Bind:
    """A host path mounted into the container (read-only unless said otherwise)."""

    host: str
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class ContainerSpec:
    """Everything needed to create one srb container.

    ``user`` is numeric ``uid:gid`` (names need an /etc/passwd entry in the image and
    cannot be used for tar ownership). Root is refused unless ``allow_root`` is set.
    ``max_file_bytes`` becomes RLIMIT_FSIZE: no single file may grow past it.
    ``binds`` are host paths mounted in (read-only by default), ``tmpfs`` maps a target to
    its mount options (``"size=512m,mode=1777"``), ``cap_add`` names the only capabilities
    given back after all are dropped. ``network_mode`` may be ``container:<id>`` to share
    another container's network namespace.
    """

    image: str
    run_id: str
    role: str
    command: tuple[str, ...] | None = None
    user: str = f"{AGENT_UID}:{AGENT_GID}"
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str = REPO_DIR
    mem_limit: int = 4 * GIB
    pids_limit: int = 1024
    nano_cpus: int = 2_000_000_000
    network_mode: str = "none"
    labels: Mapping[str, str] = field(default_factory=dict)
    max_file_bytes: int | None = None
    log_max_size: str = "20m"
    log_max_files: int = 5
    init: bool = True
    allow_root: bool = False
    binds: tuple[Bind, ...] = ()
    tmpfs: Mapping[str, str] = field(default_factory=dict)
    cap_add: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()  # anonymous volumes (removed with the container)
    volumes_from: tuple[str, ...] = ()  # "<container id>:ro|rw"

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not self.image:
            problems.append("image is empty")
        if not self.run_id:
            problems.append("run_id is empty")
        if not self.role:
            problems.append("role is empty")
        match = _USER.match(self.user)
        if match is None:
            problems.append(f"user {self.user!r} must be numeric 'uid:gid'")
        elif match.group(1) == "0" and not self.allow_root:
            problems.append(f"user {self.user!r} is root; srb containers run as a non-root user")
        if self.mem_limit <= 0 or self.pids_limit <= 0 or self.nano_cpus <= 0:
            problems.append("mem_limit, pids_limit and nano_cpus must all be > 0")
        if problems:
            raise ValueError(f"container spec for run {self.run_id!r}: " + "; ".join(problems))

    @property
    def name(self) -> str:
        return container_name(self.run_id, self.role)

    @property
    def uid(self) -> int:
        return int(self.user.split(":")[0])

    @property
    def gid(self) -> int:
        return int(self.user.split(":")[1])

    def all_labels(self) -> dict[str, str]:
        """Caller labels plus srb's own (which win)."""
        labels = dict(self.labels)
        labels.update({LABEL_MANAGED: "1", LABEL_RUN: self.run_id, LABEL_ROLE: self.role})
        return labels

    def engine_config(self) -> dict[str, object]:
        """The body of the engine's ``POST /containers/create`` for this spec: detached, no
        TTY or stdin, ``HOME`` = the workspace, locked down (see
        :mod:`srb_tui.runner.containers`)."""
        env = {"HOME": WORKSPACE, **self.env}
        host: dict[str, object] = {
            "NetworkMode": self.network_mode,
            "Memory": self.mem_limit,
            "MemorySwap": self.mem_limit,
            "PidsLimit": self.pids_limit,
            "NanoCpus": self.nano_cpus,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges:true"],
            "Init": self.init,
            "LogConfig": {"Type": "json-file", "Config": {
                "max-size": self.log_max_size, "max-file": str(self.log_max_files)}},
            "Privileged": False,
        }
        if self.cap_add:
            host["CapAdd"] = list(self.cap_add)
        if self.max_file_bytes is not None:
            host["Ulimits"] = [{"Name": "fsize", "Soft": self.max_file_bytes,
                                "Hard": self.max_file_bytes}]
        if self.binds:
            host["Binds"] = [f"{b.host}:{b.target}:{'ro' if b.read_only else 'rw'}"
                             for b in self.binds]
        if self.tmpfs:
            host["Tmpfs"] = dict(self.tmpfs)
        if self.volumes_from:
            host["VolumesFrom"] = list(self.volumes_from)
        config: dict[str, object] = {
            "Image": self.image,
            "Cmd": list(self.command) if self.command is not None else None,
            "User": self.user,
            "Env": [f"{k}={v}" for k, v in env.items()],
            "WorkingDir": self.workdir,
            "Labels": self.all_labels(),
            "NetworkDisabled": self.network_mode == "none",
            "Tty": False, "OpenStdin": False, "StdinOnce": False,
            "AttachStdin": False, "AttachStdout": False, "AttachStderr": False,
            "HostConfig": host,
        }
        if self.volumes:
            config["Volumes"] = {target: {} for target in self.volumes}
        return config
