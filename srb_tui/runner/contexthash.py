"""A content hash of an image build context, so an unchanged context is not rebuilt.

Stdlib only. The hash covers every path (sorted), its kind, its executable bit, file
contents and link targets, plus the build arguments and the base image's id.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

READ_CHUNK = 1024 * 1024


def _walk(root: Path) -> list[tuple[str, os.stat_result, str]]:
    out: list[tuple[str, os.stat_result, str]] = []
    stack = [("", str(root))]
    while stack:
        rel, folder = stack.pop()
        with os.scandir(folder) as it:
            for entry in it:
                sub = f"{rel}/{entry.name}" if rel else entry.name
                st = entry.stat(follow_symlinks=False)
                out.append((sub, st, entry.path))
                if stat.S_ISDIR(st.st_mode):
                    stack.append((sub, entry.path))
    out.sort(key=lambda item: item[0])
    return out


def context_hash(
    context: Path, *, buildargs: Mapping[str, str] | None = None, base_id: str = ""
) -> str:
    """Hex sha256 of the context directory, ``buildargs`` and the base image id."""
    h = hashlib.sha256()
    h.update(b"srb-context-v1\0")
    for key in sorted(buildargs or {}):
        h.update(f"arg\0{key}\0{(buildargs or {})[key]}\0".encode())
    h.update(f"base\0{base_id}\0".encode())
    for rel, st, path in _walk(context):
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            h.update(f"d\0{rel}\0".encode())
        elif stat.S_ISLNK(mode):
            h.update(f"l\0{rel}\0{os.readlink(path)}\0".encode())
        elif stat.S_ISREG(mode):
            h.update(f"f\0{rel}\0{mode & 0o111:o}\0{st.st_size}\0".encode())
            with open(path, "rb") as fh:
                while chunk := fh.read(READ_CHUNK):
                    h.update(chunk)
        else:
            h.update(f"s\0{rel}\0".encode())
    return h.hexdigest()
