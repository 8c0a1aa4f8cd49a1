"""Prepare a task's State A: find or fetch the archive, verify it, extract it, cache it.

Order of preference: the archive the task ships (``environment/original.tar.gz`` with its
``original.sha256``), then the cache, then the network by ``[srb.state_a].kind``. A
download is verified against the pinned sha256 before anything is kept; a git checkout is
verified by its content digest. Offline mode (the ``offline`` flag or ``SRB_OFFLINE=1``)
refuses every network access and is satisfied only by a shipped archive or the cache.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srb_tui.schema.archive_facts import file_sha256 as archive_sha256
from srb_tui.sources import cache
from srb_tui.sources.errors import StateAError
from srb_tui.sources.manifest import content_digest, file_sha256, tree_manifest

if TYPE_CHECKING:
    from srb_tui.schema.state_a import StateASource
    from srb_tui.sources.registries import ResolvedArchive

# Fetching (HTTP, registries, git) and extracting load only when State A is not in the
# cache: a launch from the cache never needs them (bench/bench_launch.py).

Progress = Callable[[str], None]

SHIPPED_ARCHIVE = "environment/original.tar.gz"
# Where the published tasks keep the archive's digest (most in environment/).
SHIPPED_DIGESTS = (
    "environment/original.sha256",
    "tests/behavioural/data/original.sha256",
    "tests/verification/data/original.sha256",
)
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class PreparedStateA:
    """A verified State A tree in the cache.

    ``archive`` is the verified archive (the task's own file when it ships one, else the
    cached download; None for git). ``sha256`` is the pinned digest the cache is keyed by:
    the archive's, or for git the content digest. ``tree`` is the extracted tree (files
    read-only); ``record`` its ``state-a.json`` with the full manifest.
    """

    archive: Path | None
    sha256: str
    tree: Path
    file_count: int
    total_bytes: int
    content_digest: str
    source: str
    from_cache: bool
    record: Path


def _offline(flag: bool) -> bool:
    return flag or os.environ.get("SRB_OFFLINE", "").strip().lower() in ("1", "true", "yes")


def _say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


def _safe_filename(name: str) -> str:
    base = re.sub(r"[^A-Za-z0-9._+-]", "_", name.rsplit("/", 1)[-1])
    return base if base and not base.startswith(".") else "archive"


def shipped_digest(task_dir: Path) -> tuple[str, str] | None:
    """``(digest, relative file)`` from the first original.sha256 the task has."""
    for rel in SHIPPED_DIGESTS:
        path = task_dir / rel
        if not path.is_file():
            continue
        try:
            words = path.read_text(encoding="utf-8").split()
        except (OSError, UnicodeDecodeError) as exc:
            raise StateAError(f"{task_dir.name}: cannot read {rel} ({exc})") from exc
        if not words or not _HEX64.fullmatch(words[0]):
            raise StateAError(
                f"{task_dir.name}: {rel} does not start with a sha256 (64 hex digits)"
            )
        return words[0].lower(), rel
    return None


def _from_record(
    record: cache.CacheRecord, variant: Path, archive: Path | None, from_cache: bool
) -> PreparedStateA:
    return PreparedStateA(
        archive=archive,
        sha256=record.sha256,
        tree=variant / "tree",
        file_count=record.file_count,
        total_bytes=record.total_bytes,
        content_digest=record.content_digest,
        source=record.source,
        from_cache=from_cache,
        record=variant / cache.RECORD_NAME,
    )


def _finish_tree(
    scratch: Path, sha256: str, source: str, archive_name: str | None, strip: int
) -> cache.CacheRecord:
    """Manifest the extracted ``scratch/strip-N/tree``, write its record, seal it."""
    from srb_tui.sources.extract import make_read_only

    variant = cache.variant_dir(scratch, strip)
    manifest = tuple(tree_manifest(variant / "tree"))
    record = cache.CacheRecord(
        sha256=sha256,
        source=source,
        archive_name=archive_name,
        strip_components=strip,
        file_count=len(manifest),
        total_bytes=sum(size for _p, size, _d in manifest),
        content_digest=content_digest(manifest),
        manifest=manifest,
    )
    make_read_only(variant / "tree")
    cache.write_record(variant, record)
    return record


def _mismatch(task: str, what: str, expected: str, actual: str, pinned_in: str) -> StateAError:
    return StateAError(
        f"{task}: sha256 mismatch for {what}: expected {expected} ({pinned_in}), "
        f"got {actual}; nothing was kept"
    )


def _install_variant(cache_dir: Path, scratch: Path, sha256: str, strip: int) -> Path:
    """Move the scratch into the cache entry, replacing an unusable variant there."""
    entry = cache.entry_dir(cache_dir, sha256)
    existing = cache.variant_dir(entry, strip)
    if existing.exists() and cache.read_record(existing) is None:
        cache.remove_tree(existing)
    cache.install(scratch, entry)
    return cache.variant_dir(entry, strip)


def _prepare_shipped(
    task_dir: Path,
    archive: Path,
    expected: str,
    pinned_in: str,
    strip: int,
    cache_dir: Path,
    progress: Progress | None,
) -> PreparedStateA:
    task = task_dir.name
    _say(progress, f"verifying {SHIPPED_ARCHIVE}")
    actual = archive_sha256(archive)  # read once per version of the file in this process
    if actual != expected:
        raise _mismatch(task, SHIPPED_ARCHIVE, expected, actual, pinned_in)
    variant = cache.variant_dir(cache.entry_dir(cache_dir, expected), strip)
    record = cache.read_record(variant)
    if record is not None:
        _say(progress, f"State A {expected[:12]} served from the cache")
        return _from_record(record, variant, archive, True)
    scratch = cache.new_scratch(cache_dir)
    try:
        tree = cache.variant_dir(scratch, strip) / "tree"
        tree.mkdir(parents=True)
        _say(progress, f"extracting {SHIPPED_ARCHIVE}")
        from srb_tui.sources.extract import safe_extract

        safe_extract(archive, tree, strip)
        record = _finish_tree(scratch, expected, f"{task}/{SHIPPED_ARCHIVE}", archive.name, strip)
        variant = _install_variant(cache_dir, scratch, expected, strip)
    finally:
        cache.remove_tree(scratch)
    return _from_record(record, variant, archive, False)


def _resolve(
    task: str,
    source: StateASource,
    pypi_url: str | None,
    npm_registry: str | None,
    progress: Progress | None,
) -> tuple[str, str, str]:
    """``(download URL, archive file name, description)`` of a pypi/npm/url source."""
    if source.kind == "url":
        assert source.url is not None
        path = urllib.parse.urlsplit(source.url).path
        return source.url, _safe_filename(urllib.parse.unquote(path)), f"url {source.url}"
    package = source.package
    assert package is not None and source.spec is not None
    name, version = package
    from srb_tui.sources.registries import resolve_npm, resolve_pypi

    resolved: ResolvedArchive
    if source.kind == "pypi":
        _say(progress, f"resolving {source.spec} on PyPI")
        resolved = resolve_pypi(name, version, source.sha256, pypi_url)
        if resolved.listed_sha256 is not None and resolved.listed_sha256 != source.sha256:
            raise StateAError(
                f"{task}: PyPI lists {resolved.filename} with sha256 "
                f"{resolved.listed_sha256}, but task.toml [srb.state_a].sha256 pins "
                f"{source.sha256} ({resolved.index_url}); nothing was downloaded"
            )
    else:
        _say(progress, f"resolving {source.spec} on the npm registry")
        resolved = resolve_npm(name, version, npm_registry)
    description = f"{source.kind} {source.spec} ({resolved.url})"
    return resolved.url, _safe_filename(resolved.filename), description


def _prepare_download(
    task_dir: Path,
    source: StateASource,
    cache_dir: Path,
    offline: bool,
    progress: Progress | None,
    pypi_url: str | None,
    npm_registry: str | None,
) -> PreparedStateA:
    task, sha, strip = task_dir.name, source.sha256, source.strip_components
    entry = cache.entry_dir(cache_dir, sha)
    variant = cache.variant_dir(entry, strip)
    cached_archive = cache.archive_in(entry)
    record = cache.read_record(variant)
    if record is not None:
        _say(progress, f"State A {sha[:12]} served from the cache")
        return _from_record(record, variant, cached_archive, True)
    if cached_archive is not None and file_sha256(cached_archive) != sha:
        cached_archive = None  # damaged copy: fetch again
    if cached_archive is None and offline:
        raise StateAError(
            f"{task}: offline, and State A ({source.kind} "
            f"{source.spec or source.url}, sha256 {sha}) is not in the cache {cache_dir}"
        )
    from srb_tui.sources.download import download
    from srb_tui.sources.extract import safe_extract

    scratch = cache.new_scratch(cache_dir)
    try:
        if cached_archive is not None:
            archive_name = cached_archive.name
            what = source.url if source.kind == "url" else source.spec
            description = f"{source.kind} {what} (cached {archive_name})"
            local = cached_archive
        else:
            url, archive_name, description = _resolve(
                task, source, pypi_url, npm_registry, progress
            )
            (scratch / "archive").mkdir()
            local = scratch / "archive" / archive_name
            try:
                actual, size = download(url, local, progress=progress)
            except StateAError as exc:
                raise StateAError(f"{task}: {exc}") from exc
            if actual != sha:
                raise _mismatch(
                    task, url, sha, f"{actual} ({size} bytes)", "task.toml [srb.state_a].sha256"
                )
            _say(progress, f"verified {archive_name}: sha256 {sha[:12]}…, {size} bytes")
        tree = cache.variant_dir(scratch, strip) / "tree"
        tree.mkdir(parents=True)
        _say(progress, f"extracting {archive_name}")
        try:
            safe_extract(local, tree, strip)
        except StateAError as exc:
            raise StateAError(f"{task}: {exc}") from exc
        record = _finish_tree(scratch, sha, description, archive_name, strip)
        variant = _install_variant(cache_dir, scratch, sha, strip)
    finally:
        cache.remove_tree(scratch)
    return _from_record(record, variant, cache.archive_in(entry), False)


def _prepare_git(
    task_dir: Path, source: StateASource, cache_dir: Path, offline: bool, progress: Progress | None
) -> PreparedStateA:
    task, sha = task_dir.name, source.sha256
    assert source.url is not None and source.commit is not None
    variant = cache.variant_dir(cache.entry_dir(cache_dir, sha), 0)
    record = cache.read_record(variant)
    if record is not None:
        _say(progress, f"State A {sha[:12]} served from the cache")
        return _from_record(record, variant, None, True)
    if offline:
        raise StateAError(
            f"{task}: offline, and State A (git {source.url} @ "
            f"{source.commit}, content sha256 {sha}) is not in the cache "
            f"{cache_dir}"
        )
    from srb_tui.sources.git import checkout_commit

    scratch = cache.new_scratch(cache_dir)
    try:
        work = scratch / "work"
        work.mkdir()
        tree = cache.variant_dir(scratch, 0) / "tree"
        tree.parent.mkdir(parents=True)
        try:
            checkout_commit(source.url, source.commit, work, tree, progress)
        except StateAError as exc:
            raise StateAError(f"{task}: {exc}") from exc
        cache.remove_tree(work)
        description = f"git {source.url} @ {source.commit}"
        record = _finish_tree(scratch, sha, description, None, 0)
        if record.content_digest != sha:
            raise _mismatch(
                task,
                f"the content of {source.url} @ {source.commit}",
                sha,
                f"{record.content_digest} ({record.file_count} files)",
                "task.toml [srb.state_a].sha256, a content digest",
            )
        variant = _install_variant(cache_dir, scratch, sha, 0)
    finally:
        cache.remove_tree(scratch)
    return _from_record(record, variant, None, False)


def prepare_state_a(
    task_dir: Path,
    source: StateASource | None,
    cache_dir: Path,
    *,
    offline: bool = False,
    progress: Progress | None = None,
    pypi_url: str | None = None,
    npm_registry: str | None = None,
) -> PreparedStateA:
    """Verified, extracted State A of the task at ``task_dir`` (see module doc).

    ``pypi_url``/``npm_registry`` override ``SRB_PYPI_URL``/``SRB_NPM_REGISTRY``.
    Raises :class:`StateAError` with a message naming the task on every failure.
    """
    task = task_dir.name
    offline = _offline(offline)
    shipped = task_dir / SHIPPED_ARCHIVE
    if shipped.is_file():
        digest = shipped_digest(task_dir)
        if source is not None and source.kind == "archive":
            if digest is not None and digest[0] != source.sha256:
                raise StateAError(
                    f"{task}: task.toml [srb.state_a].sha256 {source.sha256} disagrees with "
                    f"{digest[1]} {digest[0]}"
                )
            return _prepare_shipped(
                task_dir,
                shipped,
                source.sha256,
                "task.toml [srb.state_a].sha256",
                source.strip_components,
                cache_dir,
                progress,
            )
        if digest is not None:
            if source is not None:
                _say(
                    progress,
                    f"{SHIPPED_ARCHIVE} is shipped; [srb.state_a] kind = {source.kind} is not used",
                )
            return _prepare_shipped(task_dir, shipped, digest[0], digest[1], 0, cache_dir, progress)
        if source is None:
            raise StateAError(
                f"{task}: {SHIPPED_ARCHIVE} has no original.sha256 to verify it "
                "and task.toml has no [srb.state_a] table"
            )
    if source is None:
        raise StateAError(
            f"{task}: no State A: {SHIPPED_ARCHIVE} is missing and task.toml "
            "has no [srb.state_a] table"
        )
    if source.kind == "archive":
        raise StateAError(
            f'{task}: [srb.state_a] kind = "archive" but {SHIPPED_ARCHIVE} is missing'
        )
    if source.kind == "git":
        return _prepare_git(task_dir, source, cache_dir, offline, progress)
    return _prepare_download(task_dir, source, cache_dir, offline, progress, pypi_url, npm_registry)
