"""Content identity of a directory tree: per-file manifest, one digest, and a tree diff.

This is how a rebuilt State A is verified by content rather than by archive digest: two
trees with the same files (relative path, bytes, symlink targets) have the same digest,
whatever archive they came from. Directories themselves (and so empty directories) and
file modes are not part of the identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ManifestEntry = tuple[str, int, str]
"""``(relative posix path, size in bytes, sha256 hex)``; for a symlink the size is the
length of its target and the digest field is ``"symlink:<target>"``; other special files
are recorded as ``"special:<type>"`` with size 0."""

MANIFEST_HEADER = "srb-tree-manifest/1\n"
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """sha256 hex of a regular file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "char-device"
    if stat.S_ISBLK(mode):
        return "block-device"
    return "unknown"


def _walk(root: Path, rel: str) -> Iterator[ManifestEntry]:
    here = root / rel if rel else root
    with os.scandir(here) as entries:
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                target = os.readlink(entry.path)
                size = len(os.fsencode(target))
                yield (path, size, f"symlink:{target}")
            elif stat.S_ISDIR(mode):
                yield from _walk(root, path)
            elif stat.S_ISREG(mode):
                file = Path(entry.path)
                yield (path, file.stat().st_size, file_sha256(file))
            else:
                yield (path, 0, f"special:{_special_kind(mode)}")


def tree_manifest(root: Path) -> list[ManifestEntry]:
    """Every file under ``root`` (symlinks not followed), sorted by relative path."""
    if not root.is_dir():
        raise NotADirectoryError(f"not a directory: {root}")
    return sorted(_walk(root, ""))


def content_digest(manifest: Iterable[ManifestEntry]) -> str:
    """sha256 over the canonical text form of a manifest (order-independent).

    The form is a header line, then one JSON array ``[path, size, digest]`` per entry
    (ASCII-escaped, sorted by path), each followed by a newline.
    """
    digest = hashlib.sha256(MANIFEST_HEADER.encode())
    for path, size, sha in sorted(manifest):
        line = json.dumps([path, size, sha], ensure_ascii=True, separators=(",", ":"))
        digest.update(line.encode("ascii") + b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class TreeDiff:
    """Files only in the second tree (added), only in the first (removed), and in both
    with different size or content (changed); each a sorted tuple of relative paths."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed)


def compare_manifests(a: Iterable[ManifestEntry], b: Iterable[ManifestEntry]) -> TreeDiff:
    """Difference from manifest ``a`` to manifest ``b``."""
    left = {path: (size, sha) for path, size, sha in a}
    right = {path: (size, sha) for path, size, sha in b}
    return TreeDiff(
        added=tuple(sorted(right.keys() - left.keys())),
        removed=tuple(sorted(left.keys() - right.keys())),
        changed=tuple(sorted(p for p in left.keys() & right.keys() if left[p] != right[p])),
    )


def compare_trees(a: Path, b: Path) -> TreeDiff:
    """Difference from tree ``a`` to tree ``b`` by content."""
    return compare_manifests(tree_manifest(a), tree_manifest(b))
