"""Collect a submission: stream ``get_archive`` and extract it safely in one pass.

The archive never sits in memory: it is read in 1 MiB chunks, optionally teed to a
file on disk (``keep_archive``), and extracted as it arrives by
:func:`srb_tui.runner.extract.extract_archive`, which applies the task's excludes
and caps. Extracting while streaming means a tar bomb is stopped at the cap: the
download is dropped there instead of being fetched whole first. The download itself
is capped at ``ExtractLimits.max_archive_bytes``.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from srb_tui.runner import sdk
from srb_tui.runner.containers import ContainerHandle
from srb_tui.runner.engine import DockerEngine
from srb_tui.runner.errors import CollectError, EngineUnavailable
from srb_tui.runner.extract import CollectResult, ExtractAborted, ExtractLimits, extract_archive
from srb_tui.runner.spec import REPO_DIR

CHUNK = 1024 * 1024


class ArchiveStream(io.RawIOBase):
    """A read-once file over the chunks of a download, with a byte cap and a tee."""

    def __init__(
        self, chunks: Iterator[bytes], max_bytes: int, source: str, tee: IO[bytes] | None = None
    ) -> None:
        super().__init__()
        self._chunks = chunks
        self._buf = memoryview(b"")
        self.max_bytes = max_bytes
        self.source = source
        self.tee = tee
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self.count += len(chunk)
            if self.count > self.max_bytes:
                raise ExtractAborted(
                    f"archive of {self.source} is larger than {self.max_bytes} bytes "
                    "(download cap); extraction stopped"
                )
            if self.tee is not None:
                self.tee.write(chunk)
            self._buf = memoryview(chunk)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def _collect(
    api: Any,
    cid: str,
    source: str,
    dest: Path,
    excludes: Sequence[str],
    limits: ExtractLimits,
    keep_archive: Path | None,
) -> CollectResult:
    chunks, _stat = api.get_archive(cid, source, chunk_size=CHUNK)
    tee = open(keep_archive, "wb") if keep_archive is not None else None  # noqa: SIM115
    try:
        raw = ArchiveStream(iter(chunks), limits.max_archive_bytes, source, tee)
        result = extract_archive(
            io.BufferedReader(raw, CHUNK),
            dest,
            root=posixpath.basename(source.rstrip("/")),
            excludes=excludes,
            limits=limits,
        )
        result.archive_bytes = raw.count
        return result
    finally:
        chunks.close()  # drop the rest of the download when extraction stopped early
        if tee is not None:
            tee.close()


async def collect_submission(
    engine: DockerEngine,
    handle: ContainerHandle,
    dest: Path,
    *,
    source: str = REPO_DIR,
    excludes: Sequence[str] = (),
    limits: ExtractLimits | None = None,
    keep_archive: Path | None = None,
) -> CollectResult:
    """Fetch ``source`` from the (running or stopped) container into ``dest``.

    ``dest`` must be absent or empty. The raw tar, as fetched, is also written to
    ``keep_archive`` when given (up to where extraction stopped).
    """
    limits = limits or ExtractLimits()
    api = await engine.api()
    try:
        return await engine.call(
            _collect, api, handle.id, source, dest, excludes, limits, keep_archive
        )
    except sdk.NotFound as err:
        raise CollectError(
            f"run {handle.run_id}: {source} not found in container {handle.name} "
            f"({err.explanation})"
        ) from err
    except sdk.APIError as err:
        if err.is_server_error():  # the engine failed, not the submission: infra, no zero
            raise EngineUnavailable(
                f"run {handle.run_id}: the engine failed while {source} was fetched: {err}"
            ) from err
        raise CollectError(f"run {handle.run_id}: cannot fetch {source}: {err}") from err
    except sdk.RequestsConnectionError as err:
        raise EngineUnavailable(
            f"run {handle.run_id}: lost the Docker engine while {source} was fetched: {err}"
        ) from err
    except ValueError as err:
        raise CollectError(f"run {handle.run_id}: {err}") from err
