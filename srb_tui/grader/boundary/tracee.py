"""Stage III's exec boundary: reading a candidate process stopped in an exec (its argv and
environment from ``/proc/<pid>/mem``, its inheritable descriptors, its uids), as the
candidate's own fs identity (:mod:`.exec_broker`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
from collections.abc import Iterator

from .seccomp import libc

_O_CLOEXEC = 0o2000000
_MAX_ARGS = 1 << 16
_MAX_BYTES = 4 << 20


def _read_mem(mem: int, addr: int, size: int) -> bytes:
    return os.pread(mem, size, addr)


def cstring(mem: int, addr: int, limit: int = 1 << 17) -> bytes:
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


def vector(mem: int, addr: int) -> list[bytes]:
    items: list[bytes] = []
    total = 0
    if addr == 0:
        return items
    for index in range(_MAX_ARGS):
        (ptr,) = struct.unpack("<Q", _read_mem(mem, addr + 8 * index, 8))
        if ptr == 0:
            return items
        item = cstring(mem, ptr)
        total += len(item) + 1
        if total > _MAX_BYTES:
            raise OSError(errno.E2BIG, "argument list too long")
        items.append(item)
    raise OSError(errno.E2BIG, "argument list too long")


def open_fds(pid: int) -> list[int]:
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


def uids(pid: int) -> set[int]:
    """The real, effective, saved and filesystem uids of ``pid`` (empty when unreadable)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Uid:"):
                    return {int(field) for field in line.split()[1:5]}
    except (OSError, ValueError):
        return set()
    return set()


@contextlib.contextmanager
def fs_identity(ids: tuple[int, int] | None) -> Iterator[None]:
    """This thread opens files as ``ids`` (its fsuid/fsgid): /proc/<pid>/mem and fdinfo are
    0600/0400 files of the candidate's uid, and the grader has no DAC_OVERRIDE."""
    if ids is None:
        yield
        return
    old_gid = libc.setfsgid(ids[1])
    old_uid = libc.setfsuid(ids[0])
    try:
        yield
    finally:
        libc.setfsuid(old_uid)
        libc.setfsgid(old_gid)
