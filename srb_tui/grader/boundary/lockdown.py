"""Container set-up the grader does once, as uid 0, before any submission code runs.

``lockdown``: the grader's own folders (its package, the suite, State A, the result folder)
become mode 0700; the grader's private interpreter, when the image has one, becomes
unreadable and unexecutable for everyone else; every world-writable folder or file left on
the image's root filesystem loses its write bit for others (only size-limited tmpfs mounts
stay writable for submission code, so it cannot fill the host's disk). It reports the
capabilities the grader holds, read from /proc/self/status, so the host can check them.

``tree_digest``: a content hash of a tree (relative paths, kinds, bytes, link targets;
``__pycache__`` left out, modes and times ignored), computed the same way on the host and in
the container, so a copy of State A is checked before it is used.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SKIP_NAMES = frozenset({"__pycache__"})
PRIVATE_PYTHON = Path("/opt/srb/python/bin/python3")
PRIVATE_PREFIXES = ("/usr/libexec/srb/", "/opt/srb/")
_SKIP_ROOTS = ("/proc", "/sys", "/dev")


def tree_digest(root: str | os.PathLike[str]) -> str:
    """sha256 over the sorted entries of ``root`` (files by content, links by target)."""
    base = Path(root)
    digest = hashlib.sha256()
    entries: list[tuple[str, str]] = []
    for current, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES)
        here = Path(current)
        for name in dirs:
            if (here / name).is_symlink():
                entries.append(((here / name).relative_to(base).as_posix(), "link"))
        for name in files:
            if name not in SKIP_NAMES:
                entries.append(((here / name).relative_to(base).as_posix(), "file"))
        for name in dirs:
            if not (here / name).is_symlink():
                entries.append(((here / name).relative_to(base).as_posix(), "dir"))
    for rel, _kind in sorted(entries):
        path = base / rel
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            digest.update(b"L" + rel.encode() + b"\0" + os.readlink(path).encode() + b"\0")
        elif stat.S_ISDIR(info.st_mode):
            digest.update(b"D" + rel.encode() + b"\0")
        elif stat.S_ISREG(info.st_mode):
            digest.update(b"F" + rel.encode() + b"\0" + str(info.st_size).encode() + b"\0")
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def stat_signature(root: str | os.PathLike[str]) -> tuple[tuple[Any, ...], ...]:
    """A cheap fingerprint of a tree (path, size, mode, mtime, inode of every entry): any
    write to the tree changes it. Used between two full digests."""
    base = Path(root)
    rows: list[tuple[Any, ...]] = []
    for current, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = Path(current) / name
            with contextlib.suppress(OSError):
                info = path.lstat()
                rows.append(
                    (str(path.relative_to(base)), info.st_size, info.st_mode,
                     info.st_mtime_ns, info.st_ino)
                )
    info = base.lstat()
    rows.append((".", info.st_size, info.st_mode, info.st_mtime_ns, info.st_ino))
    return tuple(rows)


def capabilities() -> dict[str, str]:
    """The Cap* lines of /proc/self/status (hex masks) and NoNewPrivs."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.startswith("Cap") or key == "NoNewPrivs":
                found[key] = value.strip()
    return found


def _world_writable(root: str = "/") -> list[str]:
    """Paths on the root filesystem (not other mounts) writable by every uid."""
    device = os.lstat(root).st_dev
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        keep = []
        for name in dirs:
            path = os.path.join(current, name)
            if path in _SKIP_ROOTS:
                continue
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if info.st_dev != device:
                continue  # another mount (a tmpfs srb sized on purpose)
            if info.st_mode & stat.S_IWOTH and not stat.S_ISLNK(info.st_mode):
                found.append(path)
            keep.append(name)
        dirs[:] = keep
        for name in files:
            path = os.path.join(current, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if info.st_mode & stat.S_IWOTH and stat.S_ISREG(info.st_mode):
                    found.append(path)
    return found


def lockdown(private: Iterable[str], slot_uids: Iterable[int] = ()) -> dict[str, Any]:
    """Make ``private`` folders 0700, hide the private interpreter, close world-writable
    paths of the root filesystem; a report of what was done and what could not be."""
    report: dict[str, Any] = {"private": [], "closed": [], "problems": []}
    for folder in private:
        path = Path(folder)
        try:
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, 0o700)
            report["private"].append(str(path))
        except OSError as exc:
            report["problems"].append(f"cannot make {path} private: {exc}")
    if PRIVATE_PYTHON.is_symlink() or PRIVATE_PYTHON.exists():
        real = Path(os.path.realpath(PRIVATE_PYTHON))
        hidden = [PRIVATE_PYTHON.parent.parent]
        if str(real).startswith(PRIVATE_PREFIXES):  # never a system-wide python3
            hidden.append(real)
        for path in hidden:
            try:
                os.chmod(path, 0o700)
                report["private"].append(str(path))
            except OSError as exc:
                report["problems"].append(f"cannot hide the private interpreter {path}: {exc}")
    uids = set(slot_uids)
    for open_path in _world_writable("/"):
        try:
            info = os.lstat(open_path)
            if info.st_uid in uids:
                report["problems"].append(f"{open_path} belongs to a submission uid")
                continue
            os.chmod(open_path, stat.S_IMODE(info.st_mode) & ~stat.S_IWOTH)
            report["closed"].append(open_path)
        except OSError as exc:
            report["problems"].append(f"cannot close {open_path}: {exc}")
    report["capabilities"] = capabilities()
    report["uid"] = os.geteuid()
    return report
