"""Extract a submission tar safely into a fresh directory. Stdlib only.

Rules: members with absolute paths or ``..`` are rejected; symbolic links must stay
inside the tree (checked lexically when made, and again with ``realpath`` once all
links exist); nothing is written through a link; hard links may only point at files
already extracted; devices, FIFOs and other special members are rejected. Every
rejection is recorded with its reason. A file larger than the per-file cap is
rejected; crossing the total-size or file-count cap aborts extraction with a clear
reason. setuid/setgid/sticky bits are dropped. Excluded paths (tar ``--exclude``
semantics, see :mod:`srb_tui.runner.excludes`) are skipped and not counted.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from srb_tui.runner.excludes import ExcludeMatcher

MIB = 1024**2
GIB = 1024**3
COPY_CHUNK = 1 * MIB
FORGET_MEMBERS_EVERY = 1000


@dataclass(frozen=True)
class ExtractLimits:
    """Caps for one submission. ``max_archive_bytes`` bounds the raw download."""

    max_files: int = 200_000
    max_total_bytes: int = 2 * GIB
    max_file_bytes: int = 512 * MIB
    max_archive_bytes: int = 8 * GIB


@dataclass
class CollectResult:
    """What was extracted to ``dest``; ``aborted_reason`` set means the tree is partial."""

    dest: Path
    files: int = 0
    bytes: int = 0
    excluded: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)
    aborted_reason: str | None = None
    archive_bytes: int = 0

    @property
    def ok(self) -> bool:
        return self.aborted_reason is None


class ExtractAborted(Exception):
    """Stops extraction; the message is the ``aborted_reason`` shown to the user."""


def _fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


class _Extractor:
    def __init__(
        self, dest: Path, root: str | None, excludes: Sequence[str], limits: ExtractLimits
    ) -> None:
        self.dest = str(dest)
        self.root = root
        self.matcher = ExcludeMatcher(excludes)
        self.limits = limits
        self.result = CollectResult(dest=dest)
        self.dirs: set[str] = {""}
        self.links: set[str] = set()
        self.files: set[str] = set()

    def reject(self, name: str, reason: str) -> None:
        self.result.rejected.append((name, reason))

    def split(self, name: str) -> tuple[list[str] | None, str]:
        """Segments below the artifact root, or None and the reason it is unsafe."""
        if name.startswith("/"):
            return None, "absolute path"
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            return None, "'..' in path"
        if self.root is not None:
            if not parts or parts[0] != self.root:
                return None, f"outside the artifact root {self.root!r}"
            parts = parts[1:]
        return parts, ""

    def through_link(self, rel: str) -> bool:
        parent = posixpath.dirname(rel)
        while parent:
            if parent in self.links:
                return True
            parent = posixpath.dirname(parent)
        return False

    def ensure_parent(self, rel: str, name: str) -> bool:
        """Create missing parent directories; False (rejected) if a file is in the way."""
        parent = posixpath.dirname(rel)
        missing: list[str] = []
        while parent not in self.dirs:
            if parent in self.files or parent in self.links:
                self.reject(name, f"parent {parent} is not a directory")
                return False
            missing.append(parent)
            parent = posixpath.dirname(parent)
        for d in reversed(missing):
            os.mkdir(os.path.join(self.dest, d), 0o755)
            self.dirs.add(d)
        return True

    def clear_slot(self, rel: str, name: str) -> bool:
        """Make room for a non-directory at ``rel``; False if a directory is there."""
        if rel in self.dirs:
            self.reject(name, "a directory of the same name was already extracted")
            return False
        if rel in self.links or rel in self.files:
            os.unlink(os.path.join(self.dest, rel))
            self.links.discard(rel)
            self.files.discard(rel)
        return True

    def count_file(self, size: int) -> None:
        lim = self.limits
        if self.result.files + 1 > lim.max_files:
            raise ExtractAborted(
                f"submission has more than {lim.max_files} files (file-count cap); "
                "extraction stopped"
            )
        if self.result.bytes + size > lim.max_total_bytes:
            raise ExtractAborted(
                f"submission is larger than {_fmt_bytes(lim.max_total_bytes)} "
                "(total size cap); extraction stopped"
            )
        self.result.files += 1
        self.result.bytes += size

    def member(self, tar: tarfile.TarFile, m: tarfile.TarInfo) -> None:
        try:
            self.place(tar, m)
        except OSError as err:
            self.reject(m.name, f"cannot be written: {err.strerror or err}")

    def place(self, tar: tarfile.TarFile, m: tarfile.TarInfo) -> None:
        parts, why = self.split(m.name)
        if parts is None:
            self.reject(m.name, why)
            return
        if not parts:
            return  # the artifact root itself
        if self.matcher.excluded(parts):
            self.result.excluded += 1
            return
        rel = "/".join(parts)
        if self.through_link(rel):
            self.reject(m.name, "path goes through a symbolic link")
            return
        if m.isdir():
            self.directory(rel, m)
        elif m.isreg():
            self.regular(tar, rel, m)
        elif m.issym():
            self.symlink(rel, m)
        elif m.islnk():
            self.hardlink(rel, m)
        elif m.ischr() or m.isblk():
            self.reject(m.name, "device file")
        elif m.isfifo():
            self.reject(m.name, "FIFO (named pipe)")
        else:
            self.reject(m.name, f"unsupported member type {m.type!r}")

    def directory(self, rel: str, m: tarfile.TarInfo) -> None:
        if rel in self.dirs:
            return
        if rel in self.files or rel in self.links:
            self.reject(m.name, "a file of the same name was already extracted")
            return
        if not self.ensure_parent(rel, m.name):
            return
        os.mkdir(os.path.join(self.dest, rel), (m.mode & 0o777) | 0o700)
        self.dirs.add(rel)

    def regular(self, tar: tarfile.TarFile, rel: str, m: tarfile.TarInfo) -> None:
        if m.size > self.limits.max_file_bytes:
            self.reject(
                m.name,
                f"file of {_fmt_bytes(m.size)} exceeds the per-file cap of "
                f"{_fmt_bytes(self.limits.max_file_bytes)}",
            )
            return
        if not self.clear_slot(rel, m.name) or not self.ensure_parent(rel, m.name):
            return
        self.count_file(m.size)
        src = tar.extractfile(m)
        path = os.path.join(self.dest, rel)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, (m.mode & 0o777) | 0o600)
        try:
            with os.fdopen(fd, "wb", buffering=0) as out:
                if src is not None:
                    if m.size <= COPY_CHUNK:
                        out.write(src.read())
                    else:
                        shutil.copyfileobj(src, out, COPY_CHUNK)
        except BaseException:
            os.unlink(path)  # never leave a half-written file behind
            self.result.files -= 1
            self.result.bytes -= m.size
            raise
        self.files.add(rel)

    def symlink(self, rel: str, m: tarfile.TarInfo) -> None:
        target = m.linkname
        if target.startswith("/"):
            self.reject(m.name, f"symbolic link to absolute path {target}")
            return
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if resolved == ".." or resolved.startswith("../"):
            self.reject(m.name, f"symbolic link points outside the tree ({target})")
            return
        if not self.clear_slot(rel, m.name) or not self.ensure_parent(rel, m.name):
            return
        self.count_file(0)
        os.symlink(target, os.path.join(self.dest, rel))
        self.links.add(rel)

    def hardlink(self, rel: str, m: tarfile.TarInfo) -> None:
        parts, _ = self.split(m.linkname)
        if parts is None:
            self.reject(m.name, f"hard link to {m.linkname}, outside the tree")
            return
        target = "/".join(parts)
        if target not in self.files:
            self.reject(m.name, f"hard link to {m.linkname}, which is not a file in the tree")
            return
        if not self.clear_slot(rel, m.name) or not self.ensure_parent(rel, m.name):
            return
        self.count_file(0)
        os.link(os.path.join(self.dest, target), os.path.join(self.dest, rel))
        self.files.add(rel)

    def recheck_links(self) -> None:
        """Drop links whose real resolution (through other links) leaves the tree."""
        top = os.path.realpath(self.dest)
        for rel in sorted(self.links):
            path = os.path.join(self.dest, rel)
            real = os.path.realpath(path)
            if real != top and not real.startswith(top + os.sep):
                os.unlink(path)
                self.links.discard(rel)
                self.result.files -= 1
                name = f"{self.root}/{rel}" if self.root else rel
                self.reject(name, "symbolic link resolves outside the tree through other links")


def extract_archive(
    archive: Path | IO[bytes],
    dest: Path,
    *,
    root: str | None = None,
    excludes: Sequence[str] = (),
    limits: ExtractLimits | None = None,
) -> CollectResult:
    """Extract ``archive`` (a path, or a readable stream read once, front to back) into
    ``dest`` (absent or empty), stripping ``root``.

    ``root`` is the top-level name every member must start with (what
    ``get_archive`` of ``/workspace/repo`` puts first: ``repo``); members outside
    it are rejected. A stream may raise :class:`ExtractAborted` to stop extraction
    (a download cap); its message becomes ``aborted_reason``.
    """
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"extraction target {dest} exists and is not an empty directory")
    dest.mkdir(parents=True, exist_ok=True)
    ex = _Extractor(dest, root, excludes, limits or ExtractLimits())
    label = str(archive) if isinstance(archive, Path) else "stream"
    try:
        with contextlib.ExitStack() as stack:
            raw = (
                stack.enter_context(open(archive, "rb", buffering=COPY_CHUNK))
                if isinstance(archive, Path)
                else archive
            )
            tar = stack.enter_context(tarfile.open(fileobj=raw, mode="r|"))
            for i, m in enumerate(tar):
                ex.member(tar, m)
                if i % FORGET_MEMBERS_EVERY == 0:
                    # stream mode keeps every header read so far; forget them
                    tar.members = []  # type: ignore[attr-defined]
    except ExtractAborted as stop:
        ex.result.aborted_reason = str(stop)
    except tarfile.TarError as err:
        ex.result.aborted_reason = f"corrupt archive ({label}): {err}"
    ex.recheck_links()
    return ex.result
