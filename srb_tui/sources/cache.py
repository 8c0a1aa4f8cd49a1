"""On-disk layout of the State A cache, keyed by the pinned sha256.

::

    <cache_dir>/<sha256>/archive/<file>          verified download (absent for git / shipped)
    <cache_dir>/<sha256>/strip-<N>/tree/         extracted tree, files read-only
    <cache_dir>/<sha256>/strip-<N>/state-a.json  record: source, counts, digest, manifest
    <cache_dir>/.tmp-<random>/                   work in progress, same layout

Everything is built under a scratch directory inside ``cache_dir`` and moved into place by
``rename`` only when complete and verified; a scratch directory is removed on any failure,
so the cache never holds a half-written entry. ``state-a.json`` is the completion marker.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from srb_tui.sources.manifest import ManifestEntry

RECORD_SCHEMA = "srb.state-a-cache/1"
RECORD_NAME = "state-a.json"
SCRATCH_PREFIX = ".tmp-"
STALE_SCRATCH_SEC = 6 * 3600


@dataclass(frozen=True)
class CacheRecord:
    """What ``state-a.json`` holds about one extracted tree."""

    sha256: str
    source: str
    archive_name: str | None
    strip_components: int
    file_count: int
    total_bytes: int
    content_digest: str
    manifest: tuple[ManifestEntry, ...]

    def to_json(self) -> str:
        return (
            json.dumps(
                {
                    "schema": RECORD_SCHEMA,
                    "sha256": self.sha256,
                    "source": self.source,
                    "archive": self.archive_name,
                    "strip_components": self.strip_components,
                    "file_count": self.file_count,
                    "total_bytes": self.total_bytes,
                    "content_digest": self.content_digest,
                    "manifest": [list(entry) for entry in self.manifest],
                },
                indent=1,
            )
            + "\n"
        )


def entry_dir(cache_dir: Path, sha256: str) -> Path:
    return cache_dir / sha256


def variant_dir(base: Path, strip_components: int) -> Path:
    """``strip-<N>`` under an entry (or a scratch directory laid out like one)."""
    return base / f"strip-{strip_components}"


def archive_in(base: Path) -> Path | None:
    """The single archive file under ``base/archive``, if there is one."""
    folder = base / "archive"
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    return files[0] if len(files) == 1 else None


def read_record(variant: Path) -> CacheRecord | None:
    """The record of a complete variant, or None if absent, unreadable or incomplete."""
    try:
        data = json.loads((variant / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != RECORD_SCHEMA:
        return None
    if not (variant / "tree").is_dir():
        return None
    try:
        manifest = tuple((str(p), int(s), str(d)) for p, s, d in data["manifest"])
        return CacheRecord(
            sha256=str(data["sha256"]),
            source=str(data["source"]),
            archive_name=None if data["archive"] is None else str(data["archive"]),
            strip_components=int(data["strip_components"]),
            file_count=int(data["file_count"]),
            total_bytes=int(data["total_bytes"]),
            content_digest=str(data["content_digest"]),
            manifest=manifest,
        )
    except (KeyError, TypeError, ValueError):
        return None


def write_record(variant: Path, record: CacheRecord) -> None:
    (variant / RECORD_NAME).write_text(record.to_json(), encoding="utf-8")


def new_scratch(cache_dir: Path) -> Path:
    cache_dir.mkdir(parents=True, exist_ok=True)
    sweep_stale_scratch(cache_dir)
    return Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=cache_dir))


def remove_tree(path: Path) -> None:
    """Remove a directory even if files in it were made read-only."""

    def _retry(func: object, target: str, _exc: object) -> None:
        os.chmod(os.path.dirname(target), 0o755)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, ignore_errors=True)
        else:
            os.unlink(target)

    if path.exists():
        shutil.rmtree(path, onerror=_retry)


def sweep_stale_scratch(cache_dir: Path) -> None:
    """Remove scratch directories left by a process that died long ago."""
    now = time.time()
    for child in cache_dir.glob(f"{SCRATCH_PREFIX}*"):
        try:
            if now - child.stat().st_mtime > STALE_SCRATCH_SEC:
                remove_tree(child)
        except OSError:
            continue


def install(scratch: Path, entry: Path) -> None:
    """Move the finished parts of ``scratch`` into ``entry``; parts another process
    installed first are kept and ours dropped. ``scratch`` is removed afterwards."""
    try:
        try:
            os.rename(scratch, entry)
            return
        except OSError:
            if not entry.is_dir():
                raise
        for part in sorted(scratch.iterdir()):
            target = entry / part.name
            if target.exists():
                continue
            try:
                os.rename(part, target)
            except OSError:
                if not target.exists():
                    raise
    finally:
        remove_tree(scratch)
