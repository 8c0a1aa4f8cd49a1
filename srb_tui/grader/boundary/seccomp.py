"""Stage III's exec boundary, the kernel side: the seccomp filter that turns a candidate's
execs into user notifications, and the few raw calls the broker answers them with
(:mod:`.exec_broker`). Linux on x86_64 and aarch64 only (:data:`ARCH`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import socket
import struct

ARCH = {
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
IOCTL_RECV = 0xC0502100
IOCTL_SEND = 0xC0182101
IOCTL_ID_VALID = 0x40082102
IOCTL_ADDFD = 0x40182103
ADDFD_FLAG_SETFD = 1
FLAG_CONTINUE = 1

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def _filter() -> bytes:
    arch, execve, execveat, _ = ARCH[platform.machine()]
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
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (already set in a stage container)
    nr = ARCH[platform.machine()][3]
    fd = libc.syscall(nr, _SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER, ctypes.byref(prog))
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


def pidfd_getfd(pidfd: int, fd: int) -> int:
    """A copy of process ``pidfd``'s descriptor ``fd`` in this process."""
    got = libc.syscall(_PIDFD_GETFD, pidfd, fd, 0)
    if got < 0:
        raise OSError(ctypes.get_errno(), f"pidfd_getfd {fd}")
    return int(got)


def ioctl(fd: int, request: int, buf: bytearray) -> int:
    """One ioctl on the listener ``fd`` that reads and writes ``buf``."""
    return int(fcntl.ioctl(fd, request, buf, True))
