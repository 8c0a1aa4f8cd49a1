"""Rebuild environment/original.tar.gz (State A) from submissions/untouched.

    python3 make_archive.py [--source DIR] [--out FILE]

The archive is deterministic: members sorted by path, top-level entries at
the archive root, mtime 0, uid/gid 0 with empty owner names, modes 0755 for
directories and executables and 0644 otherwise, and a gzip header with no
name and no timestamp.  __pycache__ directories and *.pyc files are never
packed.  The sha256 is written next to the archive as original.sha256.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = (".pyc",)


def tree_entries(source: Path) -> list[Path]:
    """Every directory and file under *source*, sorted by relative path."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
        base = Path(dirpath)
        found.extend(base / d for d in dirnames)
        found.extend(base / f for f in filenames if not f.endswith(SKIPPED_SUFFIXES))
    return sorted(found, key=lambda p: p.relative_to(source).as_posix())


def build(source: Path) -> bytes:
    """The gzip-compressed tar of *source*, byte for byte reproducible."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in tree_entries(source):
            if path.is_symlink():
                raise SystemExit(f"{path}: symbolic links are not allowed in State A")
            info = tarfile.TarInfo(path.relative_to(source).as_posix())
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
                continue
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=HERE / "submissions" / "untouched")
    parser.add_argument("--out", type=Path, default=HERE / "environment" / "original.tar.gz")
    args = parser.parse_args()
    if not (args.source / "src" / "greet.c").is_file():
        print(f"{args.source}: not a greet tree (src/greet.c missing)", file=sys.stderr)
        return 1
    data = build(args.source)
    args.out.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    args.out.with_name("original.sha256").write_text(f"{digest}  {args.out.name}\n")
    print(f"{args.out}: {len(data)} bytes, sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
