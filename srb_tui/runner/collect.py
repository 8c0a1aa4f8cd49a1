"""Collect a submission: stream ``get_archive`` to a file on disk, then extract it safely.

The archive never sits in memory: chunks go straight to a temporary file (or to
``keep_archive``), the download stops at ``ExtractLimits.max_archive_bytes``, and
:func:`srb_tui.runner.extract.extract_archive` applies the task's excludes and caps.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docker.errors import APIError, NotFound  # type: ignore[import-untyped]

from srb_tui.runner.containers import ContainerHandle
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import CollectError
from srb_tui.runner.extract import CollectResult, ExtractLimits, extract_archive
from srb_tui.runner.spec import REPO_DIR

CHUNK = 1024 * 1024


def download_archive(api: Any, cid: str, source: str, target: Path, max_bytes: int) -> int | None:
    """Write the tar of ``source`` to ``target``; the byte count, or None past ``max_bytes``."""
    bits, _stat = api.get_archive(cid, source, chunk_size=CHUNK)
    written = 0
    with open(target, "wb") as out:
        for chunk in bits:
            written += len(chunk)
            if written > max_bytes:
                bits.close()
                return None
            out.write(chunk)
    return written


def _collect(
    api: Any,
    cid: str,
    source: str,
    dest: Path,
    excludes: Sequence[str],
    limits: ExtractLimits,
    archive: Path,
) -> CollectResult:
    size = download_archive(api, cid, source, archive, limits.max_archive_bytes)
    if size is None:
        dest.mkdir(parents=True, exist_ok=True)
        return CollectResult(
            dest=dest,
            aborted_reason=(
                f"archive of {source} is larger than {limits.max_archive_bytes} bytes "
                "(download cap); nothing extracted"
            ),
            archive_bytes=limits.max_archive_bytes,
        )
    result = extract_archive(
        archive,
        dest,
        root=posixpath.basename(source.rstrip("/")),
        excludes=excludes,
        limits=limits,
    )
    result.archive_bytes = size
    return result


async def collect_submission(
    engine: DockerEngine,
    handle: ContainerHandle,
    dest: Path,
    *,
    source: str = REPO_DIR,
    excludes: Sequence[str] = (),
    limits: ExtractLimits | None = None,
    keep_archive: Path | None = None,
    work_dir: Path | None = None,
) -> CollectResult:
    """Fetch ``source`` from the (running or stopped) container into ``dest``.

    ``dest`` must be absent or empty. The raw tar is kept at ``keep_archive`` if
    given, else written to a temporary file in ``work_dir`` and deleted.
    """
    limits = limits or ExtractLimits()
    api = await engine.api()
    if keep_archive is not None:
        archive, temp = keep_archive, False
    else:
        fd, name = tempfile.mkstemp(prefix="srb-collect-", suffix=".tar", dir=work_dir)
        os.close(fd)
        archive, temp = Path(name), True
    try:
        return await engine.call(_collect, api, handle.id, source, dest, excludes, limits, archive)
    except NotFound as err:
        raise CollectError(
            f"run {handle.run_id}: {source} not found in container {handle.name} "
            f"({err.explanation})"
        ) from err
    except APIError as err:
        raise CollectError(f"run {handle.run_id}: cannot fetch {source}: {err}") from err
    except ValueError as err:
        raise CollectError(f"run {handle.run_id}: {err}") from err
    finally:
        if temp:
            archive.unlink(missing_ok=True)
