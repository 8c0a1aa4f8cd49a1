"""Extract a submission tar safely into a fresh directory. Stdlib only.

The rules are srb's one extraction policy (:mod:`srb_tui.extract_policy`, shared with
State A preparation): absolute paths and ``..``, links leaving the tree (lexically, then
with ``realpath`` once all links exist), writing through a link, hard links to anything
but a file already extracted, devices, FIFOs and other special members, the per-file cap,
and tarfile's own ``data`` filter. Here a refused member is recorded with its reason and
extraction goes on; crossing the total-size or file-count cap aborts it with a clear
reason. setuid/setgid/sticky bits are dropped. Excluded paths (tar ``--exclude``
semantics, see :mod:`srb_tui.exclude_match`) are skipped and not counted.
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

from srb_tui.exclude_match import ExcludeMatcher
from srb_tui.extract_policy import (
    GIB,
    MIB,
    CapExceeded,
    Caps,
    Refused,
    Tree,
    escaping_links,
    kind_of,
    kind_refusal,
    member_parts,
)

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


class _Extractor:
    def __init__(
        self, dest: Path, root: str | None, excludes: Sequence[str], limits: ExtractLimits
    ) -> None:
        self.dest = str(dest)
        self.root = root
        self.matcher = ExcludeMatcher(excludes)
        self.limits = limits
        self.result = CollectResult(dest=dest)
        self.tree = Tree(Caps(max_members=limits.max_files,
                              max_total_bytes=limits.max_total_bytes,
                              max_file_bytes=limits.max_file_bytes))

    def reject(self, name: str, reason: str) -> None:
        self.result.rejected.append((name, reason))

    def split(self, name: str) -> list[str]:
        """Segments below the artifact root (Refused when unsafe or outside it)."""
        parts = member_parts(name)
        if self.root is not None:
            if not parts or parts[0] != self.root:
                raise Refused(f"outside the artifact root {self.root!r}")
            parts = parts[1:]
        return parts

    def ensure_parent(self, rel: str) -> None:
        """Create missing parent directories (the policy has checked none is a file)."""
        parent = posixpath.dirname(rel)
        missing: list[str] = []
        while parent not in self.tree.dirs:
            missing.append(parent)
            parent = posixpath.dirname(parent)
        for d in reversed(missing):
            os.mkdir(os.path.join(self.dest, d), 0o755)
            self.tree.dirs.add(d)

    def clear_slot(self, rel: str) -> None:
        """Make room for a non-directory at ``rel`` (a later member replaces an earlier)."""
        tree = self.tree
        if rel in tree.dirs:
            raise Refused("a directory of the same name was already extracted")
        if rel in tree.links or rel in tree.files:
            os.unlink(os.path.join(self.dest, rel))
            tree.links.discard(rel)
            tree.files.discard(rel)
            tree.uncount(0)

    def count(self, size: int) -> None:
        try:
            self.tree.count(size)
        except CapExceeded as cap:
            raise ExtractAborted(f"submission has {cap}") from None
        self.result.files, self.result.bytes = self.tree.members, self.tree.bytes

    def member(self, tar: tarfile.TarFile, m: tarfile.TarInfo) -> None:
        try:
            self.place(tar, m)
        except Refused as why:
            self.reject(m.name, str(why))
        except OSError as err:
            self.reject(m.name, f"cannot be written: {err.strerror or err}")

    def place(self, tar: tarfile.TarFile, m: tarfile.TarInfo) -> None:
        parts = self.split(m.name)
        if not parts:
            return  # the artifact root itself
        if self.matcher.excluded(parts):
            self.result.excluded += 1
            return
        kind = kind_of(m)
        refusal = kind_refusal(kind)
        if refusal is not None:
            raise Refused(refusal if kind != "other" else f"{refusal} {m.type!r}")
        rel = "/".join(parts)
        link = self.tree.judge(self.dest, rel, kind, m.linkname, self.split)
        if kind == "dir":
            self.directory(rel, m)
        elif kind == "file":
            self.regular(tar, rel, m)
        elif kind == "symlink":
            self.clear_slot(rel)
            self.ensure_parent(rel)
            self.count(0)
            os.symlink(link, os.path.join(self.dest, rel))
            self.tree.links.add(rel)
        else:
            self.clear_slot(rel)
            self.ensure_parent(rel)
            self.count(0)
            os.link(os.path.join(self.dest, link), os.path.join(self.dest, rel))
            self.tree.files.add(rel)

    def directory(self, rel: str, m: tarfile.TarInfo) -> None:
        tree = self.tree
        if rel in tree.dirs:
            return
        if rel in tree.files or rel in tree.links:
            raise Refused("a file of the same name was already extracted")
        self.ensure_parent(rel)
        os.mkdir(os.path.join(self.dest, rel), (m.mode & 0o777) | 0o700)
        tree.dirs.add(rel)

    def regular(self, tar: tarfile.TarFile, rel: str, m: tarfile.TarInfo) -> None:
        self.tree.check_file_size(m.size)
        self.clear_slot(rel)
        self.ensure_parent(rel)
        self.count(m.size)
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
            self.tree.uncount(m.size)
            self.result.files, self.result.bytes = self.tree.members, self.tree.bytes
            raise
        self.tree.files.add(rel)

    def recheck_links(self) -> None:
        """Drop links whose real resolution (through other links) leaves the tree."""
        for rel in escaping_links(self.dest, self.tree.links):
            os.unlink(os.path.join(self.dest, rel))
            self.tree.links.discard(rel)
            self.tree.uncount(0)
            self.result.files = self.tree.members
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
