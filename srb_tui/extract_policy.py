"""The one safe-extraction member policy: what an archive member may put in a fresh tree.

Shared by the submission collector (:mod:`srb_tui.runner.extract`, which records a refused
member and goes on) and State A preparation (:mod:`srb_tui.sources.extract`, which refuses
the whole archive at the first one). Both write members themselves; this module decides.
It is a leaf (standard library only), so both rooms may import it without importing each
other.

The rules, each with the reason a refusal gives:

* a name that is absolute (``/x``, ``C:x``) or has a ``..`` component;
* a device, FIFO or other special member (only files, directories, symbolic and hard
  links are placed);
* a symbolic link with an empty or absolute target, or one that leaves the tree
  lexically; after extraction every link is resolved again with ``realpath``
  (:func:`escaping_links`), since a chain of links can leave where no single one does;
* a path through a symbolic link placed earlier, and a name whose parent is a file;
* a hard link to anything but a regular file placed earlier in the same tree;
* past the caps (:class:`Caps`): a file larger than the per-file cap is refused; more
  members or more bytes than the tree caps stop the extraction (:class:`CapExceeded`).

On top of these, a tar member goes through the standard library's own ``data`` filter
(:func:`tarfile.data_filter`, PEP 706) against the destination on disk before it is
written (:func:`data_filter_refusal`): a second opinion that resolves real paths.
"""

from __future__ import annotations

import os
import posixpath
import re
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

MIB = 1024**2
GIB = 1024**3

MemberKind = Literal["file", "dir", "symlink", "hardlink", "device", "fifo", "other"]
_DRIVE = re.compile(r"^[A-Za-z]:")


class Refused(Exception):
    """This member may not be placed; the message is the reason."""


class CapExceeded(Exception):
    """The tree would pass a cap; extraction stops (the message says which)."""


@dataclass(frozen=True)
class Caps:
    """How many members and bytes an archive may hold before extraction is refused."""

    max_members: int = 200_000
    max_total_bytes: int = 2 * GIB
    max_file_bytes: int = 512 * MIB


def fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def kind_of(info: tarfile.TarInfo) -> MemberKind:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    if info.ischr() or info.isblk():
        return "device"
    if info.isfifo():
        return "fifo"
    return "other"


def member_parts(name: str) -> list[str]:
    """The path components of a member name; Refused for absolute names and ``..``."""
    if name.startswith("/") or _DRIVE.match(name):
        raise Refused("absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused("'..' in path")
    return parts


def kind_refusal(kind: MemberKind) -> str | None:
    if kind == "device":
        return "device file"
    if kind == "fifo":
        return "FIFO (named pipe)"
    if kind == "other":
        return "unsupported member type"
    return None


def symlink_refusal(rel: str, target: str) -> str | None:
    """Why a symbolic link at ``rel`` (relative to the tree) to ``target`` is refused."""
    if not target:
        return "symbolic link with an empty target"
    if target.startswith("/") or _DRIVE.match(target):
        return f"symbolic link to absolute path {target}"
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    if resolved == ".." or resolved.startswith("../"):
        return f"symbolic link points outside the tree ({target})"
    return None


_TAR_TYPES = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
              "hardlink": tarfile.LNKTYPE}


def data_filter_refusal(dest: str, rel: str, kind: MemberKind, link: str = "") -> str | None:
    """What the standard library's ``data`` filter says of a member placed at ``rel`` under
    ``dest`` (``link``: a symbolic link's target, or a hard link's source relative to the
    tree). None: accepted, or an interpreter without the filter."""
    check = getattr(tarfile, "data_filter", None)
    if check is None or kind not in _TAR_TYPES:
        return None
    info = tarfile.TarInfo(rel)
    info.type = _TAR_TYPES[kind]
    info.linkname = link
    info.mode = 0o755 if kind == "dir" else 0o644
    try:
        check(info, dest)
    except tarfile.FilterError as err:
        return f"refused by tarfile's data filter: {err}"
    return None


@dataclass
class Tree:
    """What has been placed so far (relative paths), and the caps' counters."""

    caps: Caps = field(default_factory=Caps)
    dirs: set[str] = field(default_factory=lambda: {""})
    files: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    members: int = 0
    bytes: int = 0

    def through_link(self, rel: str) -> str | None:
        """The earlier symbolic link ``rel`` would be written through, if any."""
        parent = posixpath.dirname(rel)
        while parent:
            if parent in self.links:
                return parent
            parent = posixpath.dirname(parent)
        return None

    def blocked_parent(self, rel: str) -> str | None:
        """A parent of ``rel`` that is a file or a link (so cannot hold it), if any."""
        parent = posixpath.dirname(rel)
        while parent not in self.dirs and parent:
            if parent in self.files or parent in self.links:
                return parent
            parent = posixpath.dirname(parent)
        return None

    def check_path(self, rel: str) -> None:
        link = self.through_link(rel)
        if link is not None:
            raise Refused(f"path goes through the symbolic link {link}")
        parent = self.blocked_parent(rel)
        if parent is not None:
            raise Refused(f"parent {parent} is not a directory")

    def hardlink_source(self, link_parts: list[str], shown: str) -> str:
        """The earlier regular file a hard link names (relative path), or Refused."""
        target = "/".join(link_parts)
        if target not in self.files or self.through_link(target) is not None:
            raise Refused(f"hard link to {shown}, which is not a file in the tree placed "
                          "before it")
        return target

    def judge(self, dest: str, rel: str, kind: MemberKind, link: str,
              link_parts: Callable[[str], list[str]]) -> str:
        """Refused unless a member of ``kind`` (one that :func:`kind_refusal` accepts) may be
        placed at ``rel`` under ``dest``: its path, its link, then tarfile's ``data`` filter.
        ``link`` is a symbolic link's target or a hard link's source as the archive names it,
        ``link_parts`` how that source's name becomes a path in the tree (Refused: outside
        it). Returns the link as placed: the target, the source relative to the tree, or ""."""
        self.check_path(rel)
        refusal = None
        if kind == "symlink":
            refusal = symlink_refusal(rel, link)
        elif kind == "hardlink":
            try:
                source = link_parts(link)
            except Refused:
                raise Refused(f"hard link to {link}, outside the tree") from None
            link = self.hardlink_source(source, link)
        else:
            link = ""
        if refusal is None:
            refusal = data_filter_refusal(dest, rel, kind, link)
        if refusal is not None:
            raise Refused(refusal)
        return link

    def check_file_size(self, size: int) -> None:
        if size > self.caps.max_file_bytes:
            raise Refused(f"file of {fmt_bytes(size)} exceeds the per-file cap of "
                          f"{fmt_bytes(self.caps.max_file_bytes)}")

    def count(self, size: int) -> None:
        """One more member of ``size`` bytes; CapExceeded past the tree caps."""
        if self.members + 1 > self.caps.max_members:
            raise CapExceeded(f"more than {self.caps.max_members} files (file-count cap); "
                              "extraction stopped")
        if self.bytes + size > self.caps.max_total_bytes:
            raise CapExceeded(f"larger than {fmt_bytes(self.caps.max_total_bytes)} "
                              "(total size cap); extraction stopped")
        self.members += 1
        self.bytes += size

    def uncount(self, size: int) -> None:
        self.members -= 1
        self.bytes -= size


def escaping_links(root: str, links: Iterable[str]) -> list[str]:
    """The links (relative paths) whose full resolution leaves ``root``."""
    top = os.path.realpath(root)
    out = []
    for rel in sorted(links):
        real = os.path.realpath(os.path.join(root, rel))
        if real != top and not real.startswith(top + os.sep):
            out.append(rel)
    return out
