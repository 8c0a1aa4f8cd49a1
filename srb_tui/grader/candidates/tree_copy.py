"""Stage III: the copy of the tree under test that a candidate run works on, closed to the
candidate's own identity.

A candidate observes the tree only through the programs it starts (they run as the slot uid,
:mod:`..boundary.exec_broker`). The candidate's identity shares the slot's gid (what it writes in
the tree, its programs may change), so group permissions cannot tell the two apart; ownership
can. The working copy belongs to the slot uid with every file's group and other bits cleared
(the owner's kept: the program, the slot, reads, writes and runs its own tree as before) and
every folder ``rwx-wx---``: a candidate may enter the tree, start a program by its path and
create files of its own there (input files; what it creates is the slot group's, umask 002,
so the program reads it), but it can neither list a folder of the tree nor read a file of it.
What the programs create while they run (a build's products) has the program's umask.

The source, the grader's pristine copy, is 0700 to the grader, so neither the slot nor the
candidate reads it: the copy is made by a child of the grader that reads as uid 0 and creates
with the slot as its filesystem identity (``setfsuid``/``setfsgid``: the grader has SETUID
and SETGID, and no CHOWN to give files away afterwards).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)

FOLDER_MODE = 0o730
"""owner rwx, the slot's group (the candidate) wx: enter and create, never list."""


def _fs_as(uid: int, gid: int) -> None:
    _libc.setfsgid(gid)
    _libc.setfsuid(uid)


def _copy(source: Path, dest: Path, slot_ids: tuple[int, int]) -> None:
    """In a forked child of the grader: ``source`` (readable by uid 0) to ``dest`` (created
    as ``slot_ids``). Each read happens as uid 0, each creation as the slot."""
    uid, gid = slot_ids
    root_ids = (0, 0)

    def make_dir(path: Path, mode: int) -> None:
        _fs_as(uid, gid)
        os.mkdir(path, FOLDER_MODE)
        os.chmod(path, FOLDER_MODE | (mode & 0o700))

    _fs_as(*root_ids)
    top = os.lstat(source)
    if not dest.is_dir():
        make_dir(dest, top.st_mode)
    stack = [(source, dest)]
    while stack:
        here, there = stack.pop()
        _fs_as(*root_ids)
        entries = sorted(os.scandir(here), key=lambda e: e.name)
        for entry in entries:
            _fs_as(*root_ids)
            info = entry.stat(follow_symlinks=False)
            target = there / entry.name
            if stat.S_ISLNK(info.st_mode):
                link = os.readlink(entry.path)
                _fs_as(uid, gid)
                os.symlink(link, target)
            elif stat.S_ISDIR(info.st_mode):
                make_dir(target, info.st_mode)
                stack.append((Path(entry.path), target))
            elif stat.S_ISREG(info.st_mode):
                _fs_as(*root_ids)
                src = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                try:
                    _fs_as(uid, gid)
                    mode = stat.S_IMODE(info.st_mode) & 0o700
                    dst = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                                  mode)
                    try:
                        while chunk := os.read(src, 1 << 20):
                            os.write(dst, chunk)
                        os.fchmod(dst, mode)
                    finally:
                        os.close(dst)
                finally:
                    os.close(src)
            else:
                continue  # no devices, fifos or sockets in a working copy
            _fs_as(uid, gid)
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    _fs_as(uid, gid)
    os.utime(dest, ns=(top.st_atime_ns, top.st_mtime_ns))


def copy_closed(source: Path, dest: Path, slot_ids: tuple[int, int]) -> int:
    """Copy ``source`` to ``dest`` as described above; the child's exit status (0: done)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        code = 0
        try:
            os.umask(0)
            _copy(source, dest, slot_ids)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(2, f"srb: cannot copy {source} to {dest}: {exc!r}\n".encode())
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
