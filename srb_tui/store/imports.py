"""Runs imported from a published-harness job directory, stored beside srb's own.

``import_runs`` writes every trial in one transaction, all or nothing, filled batch by batch
from a lazy iterable (the trials are read in a worker thread ``batch`` at a time, the next
batch while the last is written, so memory holds two batches, not the job): per batch one
``executemany`` per table — the run rows (status ``scored``, agent ``imported:…``), their
transitions, the score events the reports read, Stage II module rows, Stage III rounds,
Stage I's gate outcomes with their vote tallies (the same rows a native audit writes, so the
Stage I consistency table counts both alike), the stage results as the published files' JSON
text (a long one kept as a file beside the store, :class:`ResultFiles`, its row naming it;
a hard link to the published file when that is still the file read, so the import does not
write the job's bytes a second time — an edit of the published file in place would show in
the imported run too, a rewrite by rename would not),
and ``imported_runs`` rows with the source folder, agent cost and telemetry. A source folder
already imported is refused (naming it); a problem the reader reports while the trials
stream (``problems``) rolls the whole import back too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import aiosqlite

from srb_tui.store.base import Repository, query
from srb_tui.store.clock import new_run_id, utc_now
from srb_tui.store.convert import dump_json, outcome_params
from srb_tui.store.errors import ContentRefused
from srb_tui.store.provenance import PROVENANCE, PROVENANCE_STAGES
from srb_tui.store.run_extra import IMPORTED

# The grading records (:mod:`.grading_records`), the import record (:mod:`.run_extra_more`)
# and ctypes load with the first import that uses them: every Store builds this repository,
# and `srb run` never needs them.

_PATH = ("pending", "preparing", "agent", "collecting", "audit", "scored")
BATCH = 32
FILE_THRESHOLD = 16 * 1024
"""A stage result this long (characters) is kept as a file beside the store: written once,
where the WAL would write it twice (the import's cost was the store's write, not the read)."""


class PublishedFile(NamedTuple):
    """The file a stage result's text was read from, as the open descriptor saw it: when
    the same inode, size and modification time are still at ``path``, the import links the
    file into the store's folder instead of writing its text a second time."""

    path: str
    size: int
    mtime_ns: int
    ino: int
    dev: int

    @classmethod
    def of(cls, path: str, st: os.stat_result) -> PublishedFile:
        return cls(path, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)

    def same_as(self, st: os.stat_result) -> bool:
        return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev) == self[1:]


class ImportProblems(ContentRefused):
    """The reader found problems while the trials streamed: nothing was stored."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(f"{len(problems)} problem(s); nothing imported")
        self.problems = list(problems)


def _take(it: Iterator[Mapping[str, Any]], n: int) -> list[Mapping[str, Any]]:
    return list(itertools.islice(it, n))


class ResultFiles:
    """Where one import keeps its large stage results: ``imports/.staging-TOKEN/`` under
    the store's folder while the transaction is open, renamed to ``imports/TOKEN/`` just
    before it commits (removed if it does not). The rows name ``imports/TOKEN/RUN.STAGE.json`` (one
    folder per import: a folder per run cost a ``mkdir`` each, a tenth of an import)
    (:data:`.grading_records.IMPORTED_FILE`), so a row never names a file that is not there,
    and a file left by a crash between the rename and the commit is named by no row."""

    def __init__(self, root: Path) -> None:
        self.token = f"{utc_now()[:10]}-{secrets.token_hex(6)}"
        self.base = root / "imports"
        self.staging = self.base / f".staging-{self.token}"
        self.final = self.base / self.token
        self.used = False
        self.written: list[Path] = []  # files whose text was written (not linked)

    def keep(self, rid: str, stage: str, text: str | None,
             source: PublishedFile | None = None) -> str:
        """Keep ``text`` in its file; the column value that names it. With ``source`` (the
        published file the text was read from, unchanged since), the file is a hard link to
        it: the bytes are on disk already, and writing them again was most of an import's
        cost. A link that cannot be made (another file system, a changed file) falls back
        to writing the text; without the text (a reader process kept it), to copying the
        file, refused if it is no longer the file that was read."""
        from srb_tui.store import grading_records as rec

        if not self.used:
            self.staging.mkdir(parents=True, exist_ok=True)
        name = f"{rid}.{stage}.json"
        dest = self.staging / name
        if source is None or not _linked(source, dest):
            if text is not None:
                with open(dest, "w", encoding="utf-8") as out:
                    out.write(text)
            elif source is None or not _copied(source, dest):
                where = source.path if source is not None else f"{rid} {stage}"
                raise ImportProblems([f"{where}: changed while it was imported"])
            self.written.append(dest)
        self.used = True
        return dump_json({rec.IMPORTED_FILE: f"imports/{self.token}/{name}"}, "ref")

    def publish(self) -> None:
        """Make the files durable and move them to the folder the rows name. A linked file
        is the published file itself (srb flushes only its new folder entry: its bytes are
        as durable as the harness left them); the written ones are flushed one by one, or,
        when there are many, with one flush of their file system."""
        if not self.used:
            return
        if len(self.written) > FSYNC_EACH_MAX:
            _sync_file_system(self.staging)
        else:
            for path in self.written:
                _fsync(path, os.O_RDONLY)
        _fsync(self.staging, os.O_DIRECTORY)
        os.rename(self.staging, self.final)
        _fsync(self.base, os.O_DIRECTORY)

    def discard(self) -> None:
        for folder in (self.staging, self.final):
            shutil.rmtree(folder, ignore_errors=True)


FSYNC_EACH_MAX = 64


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_file_system(folder: Path) -> None:
    """Flush the file system that holds ``folder`` (Linux ``syncfs``; else every one)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(folder, os.O_DIRECTORY)
        try:
            if libc.syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        pass
    os.sync()


def _linked(source: PublishedFile, dest: Path) -> bool:
    """Hard-link ``source`` at ``dest`` when it is still the file that was read."""
    try:
        os.link(source.path, dest)
    except OSError:
        return False
    try:
        if source.same_as(os.stat(dest)):
            return True
    except OSError:
        pass
    dest.unlink(missing_ok=True)  # replaced or changed since it was read: write the text
    return False


def _copied(source: PublishedFile, dest: Path) -> bool:
    """Copy ``source`` to ``dest`` when it is still the file that was read (before and
    after the copy); False (``dest`` removed) when it changed."""
    try:
        if not source.same_as(os.stat(source.path)):
            return False
        shutil.copyfile(source.path, dest)
        if source.same_as(os.stat(source.path)):
            return True
    except OSError:
        pass
    dest.unlink(missing_ok=True)
    return False


def _stage_rows(rid: str, source: str, stages: Mapping[str, Any], now: str,
                files: ResultFiles) -> list[tuple[Any, ...]]:
    rows = []
    for stage, value in stages.items():
        published: PublishedFile | None = None
        text: str | None
        if isinstance(value, tuple):  # (status, the published file's JSON text[, its file])
            status, text = value[0], value[1]  # text None: long, left in the published file
            published = value[2] if len(value) > 2 else None
        else:  # a decoded result
            status = value.get("status") if isinstance(value, Mapping) else None
            text = dump_json(value, f"{source} {stage}")
        if text is None or len(text) >= FILE_THRESHOLD:
            text = files.keep(rid, stage, text, published)
        rows.append((rid, stage, str(status or "ok"), text, now))
    return rows


def _telemetry(value: Any, source: str) -> str:
    return value if isinstance(value, str) else dump_json(value, f"{source} telemetry")


Rows = list[tuple[Any, ...]]


def _extra(source: str, provenance: Mapping[str, Any] | None) -> dict[str, Any]:
    """An imported run's extra: where it came from, and the provenance srb exported with it
    (split into its two keys as a run of srb's own keeps it)."""
    from srb_tui.store.run_extra_more import ImportedFrom

    extra: dict[str, Any] = {IMPORTED: ImportedFrom(source).to_json()}
    if provenance:
        record = dict(provenance)
        stages = record.pop("stages", None)
        extra[PROVENANCE] = record
        if isinstance(stages, Mapping):
            extra[PROVENANCE_STAGES] = dict(stages)
    return extra


def _batch_rows(ids: Sequence[str], chunk: Sequence[Mapping[str, Any]], sources: Sequence[str],
                now: str, files: ResultFiles) -> tuple[Rows, ...]:
    """Every table's rows for one batch (runs, transitions, stage results, modules, gate
    outcomes, rounds, score events, imported_runs), its long results kept as files."""
    runs: Rows = []
    moves: Rows = []
    stages: Rows = []
    modules: Rows = []
    rounds: Rows = []
    gates: Rows = []
    events: Rows = []
    imported: Rows = []
    for rid, t, source in zip(ids, chunk, sources, strict=True):
        runs.append((rid, t["task"], source, t["agent"], t["model"], t["effort"], now, now,
                     now, now, int(bool(t["valid"])), t["score"], t["max_score"],
                     t["blocked_by"], t["harness_error"],
                     dump_json([f"imported from {source}"], "notes"),
                     dump_json(_extra(source, t.get("provenance")), "extra")))
        moves += [(rid, prev, status, now)
                  for prev, status in zip((None, *_PATH), _PATH, strict=False)]
        stages += _stage_rows(rid, source, dict(t["stage_results"]), now, files)
        modules += [(rid, m["id"], position, m["weight"], m["status"], m["rate"],
                     m["passed"], max(0, m["scored"] - m["passed"]), m["scored"])
                    for position, m in enumerate(t["modules"])]
        gates += outcome_params(rid, t.get("gates") or [])
        rounds += [(rid, rd["adversary"], rd["model"], rd["status"], rd["duration_sec"],
                    dump_json({"effort": rd["effort"]} if rd.get("effort") else {},
                              f"{source} round")) for rd in t["rounds"]]
        events.append((rid, now, dump_json(t["envelope"], f"{source} score")))
        imported.append((rid, source, t.get("job"), t.get("category"), t.get("cost_usd"),
                         now, _telemetry(t.get("telemetry"), source)))
    return runs, moves, stages, modules, gates, rounds, events, imported


ORPHAN_AGE_SEC = 3600.0
"""How old a folder under ``imports/`` that no row names must be before ``srb gc`` removes
it: an import renames its folder a moment before it commits, so a younger one may be an
import committing now."""


class ImportsRepository(Repository):
    """The imported_runs table and the rows an import writes (``store.imports``)."""

    async def sweep_import_files(self, *, older_than_sec: float = ORPHAN_AGE_SEC
                                 ) -> list[str]:
        """Remove what imports left under ``imports/`` that no row names: a folder a crash
        left between its rename and the commit, a staging folder of an import that died
        (each older than ``older_than_sec``); the names removed."""
        from srb_tui.store.grading_records import IMPORTED_FILE

        base = self.path.parent / "imports"
        if not base.is_dir():
            return []
        rows = await self._rows(
            f"SELECT json_extract(result, '$.{IMPORTED_FILE}') FROM stage_results"
            f" WHERE json_valid(result) AND json_extract(result, '$.{IMPORTED_FILE}')"
            " IS NOT NULL")
        named = {Path(str(r[0])).parts[1] for r in rows if len(Path(str(r[0])).parts) > 1}
        cutoff = time.time() - older_than_sec
        gone = []
        for child in sorted(base.iterdir()):
            if child.name in named or not child.is_dir() or child.stat().st_ctime > cutoff:
                continue
            await asyncio.to_thread(shutil.rmtree, child, True)
            gone.append(child.name)
        return gone

    async def import_runs(
        self,
        trials: Iterable[Mapping[str, Any]],
        *,
        problems: Sequence[str] | None = None,
        batch: int = BATCH,
    ) -> list[str]:
        """Store every trial (all or none); return the new run ids in order. ``trials`` may
        be lazy (it is consumed in a worker thread); when ``problems`` is not empty once it
        is exhausted, ImportProblems and nothing is stored (after a first problem the rest
        is still read, for its problems, but not written)."""
        now = utc_now()
        seen = problems if problems is not None else ()
        files = ResultFiles(self.path.parent)

        async def job(conn: aiosqlite.Connection) -> list[str]:
            ids: list[str] = []
            it = iter(trials)
            size = max(1, batch)
            ahead = asyncio.ensure_future(asyncio.to_thread(_take, it, size))
            try:
                while chunk := await ahead:
                    # Read the next batch while this one is written: SQLite releases the
                    # GIL while it writes, so parsing and writing overlap (two batches in
                    # memory at most).
                    ahead = asyncio.ensure_future(asyncio.to_thread(_take, it, size))
                    if not seen:
                        ids += await self._import_batch(conn, chunk, now, set(ids), files)
            finally:
                if not ahead.done():
                    with contextlib.suppress(BaseException):
                        await ahead
            if seen:
                raise ImportProblems(seen)
            await asyncio.to_thread(files.publish)  # the last step before the commit
            return ids

        try:
            return await self._write(job)
        except BaseException:
            await asyncio.to_thread(files.discard)
            raise

    async def _import_batch(self, conn: aiosqlite.Connection,
                            chunk: Sequence[Mapping[str, Any]], now: str,
                            taken: set[str], files: ResultFiles) -> list[str]:
        sources = [str(t["source_dir"]) for t in chunk]
        marks = ", ".join("?" for _ in sources)
        known = await query(conn, "SELECT source_dir, run_id FROM imported_runs WHERE"
                                  f" source_dir IN ({marks})", sources)
        if known:
            first = dict(known[0])
            raise ImportProblems([f"{first['source_dir']}: already imported as run "
                                  f"{first['run_id']}"])
        ids = [new_run_id() for _ in chunk]
        while True:
            clash = {str(r[0]) for r in await query(
                conn, f"SELECT id FROM runs WHERE id IN ({', '.join('?' for _ in ids)})", ids)}
            clash |= {i for n, i in enumerate(ids) if i in taken or i in ids[:n]}
            if not clash:
                break
            ids = [new_run_id() if i in clash else i for i in ids]
        # Built off the event loop: the links and writes of the long results release the
        # GIL, so they overlap the reader parsing the next batch.
        rows = await asyncio.to_thread(_batch_rows, ids, chunk, sources, now, files)
        runs, moves, stages, modules, gates, rounds, events, imported = rows
        await conn.executemany(
            "INSERT INTO runs (id, task_id, task_path, agent, model, effort, status,"
            " created_at, updated_at, started_at, finished_at, valid, score, max_score,"
            " blocked_by, harness_error, notes, extra) VALUES (?, ?, ?, ?, ?, ?,"
            " 'scored', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", runs)
        await conn.executemany(
            "INSERT INTO run_transitions (run_id, from_status, to_status, at, reason)"
            " VALUES (?, ?, ?, ?, 'imported')", moves)
        await conn.executemany(
            "INSERT INTO stage_results (run_id, stage, status, result, recorded_at)"
            " VALUES (?, ?, ?, ?, ?)", stages)
        await conn.executemany(
            "INSERT INTO module_results (run_id, stage, module_id, position, weight,"
            " status, rate, passed, failed, scored) VALUES (?, 'behavioural', ?, ?,"
            " ?, ?, ?, ?, ?, ?)", modules)
        await conn.executemany(
            "INSERT INTO gate_outcomes (run_id, gate_id, title, required, verdict,"
            " votes_pass, votes_fail, votes_error, tie, extra)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", gates)
        await conn.executemany(
            "INSERT INTO adversary_rounds (run_id, adversary_id, model, status,"
            " duration_sec, extra) VALUES (?, ?, ?, ?, ?, ?)", rounds)
        await conn.executemany(
            "INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, 'score', ?)", events)
        await conn.executemany(
            "INSERT INTO imported_runs (run_id, source_dir, job, category, cost_usd,"
            " imported_at, telemetry) VALUES (?, ?, ?, ?, ?, ?, ?)", imported)
        return ids
