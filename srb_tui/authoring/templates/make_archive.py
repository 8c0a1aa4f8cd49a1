"""Pack State A: environment/original.tar.gz and original.sha256 from a folder.

    python3 make_archive.py [--source DIR] [--out FILE]

The default source is this task's submissions/untouched (State A as written by
`srb tasks new`). The archive is reproducible: members in path order at the archive
root, mtime 0, owner 0 with no names, mode 0755 for folders and executables and 0644
for other files, and a gzip header with no name or time. Symbolic links are refused
(State A must be plain files); __pycache__ folders and *.pyc files are left out.
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
LEFT_OUT_DIRS = {"__pycache__"}
LEFT_OUT_SUFFIXES = (".pyc",)


def members(source: Path) -> list[Path]:
    """Every folder and file under ``source`` in path order (links included, to refuse)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in LEFT_OUT_DIRS)
        here = Path(folder)
        found += [here / d for d in dirs]
        found += [here / f for f in files if not f.endswith(LEFT_OUT_SUFFIXES)]
    return sorted(found, key=lambda p: p.relative_to(source).as_posix())


def pack(source: Path) -> bytes:
    """The gzip-compressed tar of ``source``, the same bytes every time."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in members(source):
            if path.is_symlink():
                raise SystemExit(f"{path}: State A may not hold symbolic links")
            info = tarfile.TarInfo(path.relative_to(source).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                continue
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(plain.getvalue())
    return packed.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=HERE / "submissions" / "untouched")
    parser.add_argument("--out", type=Path, default=HERE / "environment" / "original.tar.gz")
    args = parser.parse_args()
    if not args.source.is_dir() or not any(args.source.iterdir()):
        print(f"{args.source}: not a folder with files in it", file=sys.stderr)
        return 1
    data = pack(args.source)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    args.out.with_name("original.sha256").write_text(f"{digest}  {args.out.name}\n")
    print(f"{args.out}: {len(data)} bytes, sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
