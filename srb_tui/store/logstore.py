"""Container log lines of a run: batched ingest, paging, counting, searching, resuming.

Line numbers (``seq``) start at 1 and have no gaps, so an unfiltered page is a primary-key
range and costs the same at line 10 as at line 1,000,000.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from srb_tui.store.base import Repository, query
from srb_tui.store.convert import log_from_row, need_int
from srb_tui.store.errors import StoreError
from srb_tui.store.logs import PLAIN_SQL, STREAMS, check_entries
from srb_tui.store.records import LogEntry, LogLine, LogResumePoint

# How far back from the last line log_resume_point looks for lines sharing its timestamp.
RESUME_WINDOW = 10_000


# A line's text as shown (escapes removed); the function runs only on lines holding ESC.
_SHOWN = f"(CASE WHEN instr(text, char(27)) > 0 THEN {PLAIN_SQL}(text) ELSE text END)"


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _check_page(offset: int, limit: int) -> None:
    need_int(offset, "offset", optional=False)
    need_int(limit, "limit", optional=False)
    if offset < 0 or limit < 0:
        raise StoreError("offset and limit must not be negative")


def _check_stream(stream: str | None) -> None:
    if stream is not None and stream not in STREAMS:
        raise StoreError(f"stream must be stdout or stderr, got {stream!r}")


class LogsRepository(Repository):
    """A run's log lines (``store.logs``)."""

    async def append_log_lines(
        self, run_id: str, lines: Sequence[LogEntry | tuple[str, str, str]]
    ) -> int:
        """Append ``(ts, stream, text)`` lines in order; return the last ``seq`` stored.

        One call is one batch (the runner should hand in a few hundred to a few thousand
        lines at a time); the writer merges batches waiting together into one transaction.
        """
        check_entries(run_id, lines)
        if not lines:
            return await self.max_log_seq(run_id)
        return await self._writer.append_logs(run_id, lines)

    async def max_log_seq(self, run_id: str) -> int:
        """The highest stored ``seq`` of the run (0 when it has no lines)."""
        rows = await self._rows("SELECT max(seq) FROM log_lines WHERE run_id = ?", (run_id,))
        return int(rows[0][0] or 0)

    async def last_log_ts(self, run_id: str) -> str | None:
        """The Docker timestamp of the run's last stored line, or None."""
        rows = await self._rows(
            "SELECT ts FROM log_lines WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
        )
        return str(rows[0][0]) if rows else None

    async def log_resume_point(self, run_id: str) -> LogResumePoint:
        """Last seq and timestamp, plus the lines stored at that very timestamp (for
        ``LogDeduper``), read in one snapshot."""
        async with self._readers.snapshot() as conn:
            last = await query(
                conn,
                "SELECT seq, ts FROM log_lines WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
                (run_id,),
            )
            if not last:
                return LogResumePoint(run_id=run_id, max_seq=0, last_ts=None)
            max_seq, last_ts = int(last[0][0]), str(last[0][1])
            same = await query(
                conn,
                "SELECT stream, text FROM log_lines WHERE run_id = ? AND seq > ? AND ts = ?"
                " ORDER BY seq",
                (run_id, max_seq - RESUME_WINDOW, last_ts),
            )
        return LogResumePoint(
            run_id=run_id,
            max_seq=max_seq,
            last_ts=last_ts,
            at_last_ts=tuple((str(row[0]), str(row[1])) for row in same),
        )

    async def read_log_lines(
        self, run_id: str, offset: int = 0, limit: int = 500, stream: str | None = None
    ) -> list[LogLine]:
        """Up to ``limit`` lines after skipping ``offset`` lines (of ``stream`` if given).

        Unfiltered, line ``offset`` is ``seq == offset + 1``: a key range, fast at any depth.
        With a stream filter the skip walks the run's lines (fine for the console's use).
        """
        _check_page(offset, limit)
        _check_stream(stream)
        if stream is None:
            sql = "SELECT * FROM log_lines WHERE run_id = ? AND seq > ? AND seq <= ? ORDER BY seq"
            params: tuple[Any, ...] = (run_id, offset, offset + limit)
        else:
            sql = (
                "SELECT * FROM log_lines WHERE run_id = ? AND stream = ?"
                " ORDER BY seq LIMIT ? OFFSET ?"
            )
            params = (run_id, stream, limit, offset)
        return [log_from_row(row) for row in await self._rows(sql, params)]

    async def read_log_after(
        self, run_id: str, after_seq: int, limit: int = 500, stream: str | None = None
    ) -> list[LogLine]:
        """Up to ``limit`` lines with ``seq > after_seq`` (a cursor; fast with a filter too)."""
        _check_page(after_seq, limit)
        _check_stream(stream)
        rows = await self._rows(
            "SELECT * FROM log_lines WHERE run_id = ? AND seq > ? AND (? IS NULL OR stream = ?)"
            " ORDER BY seq LIMIT ?",
            (run_id, after_seq, stream, stream, limit),
        )
        return [log_from_row(row) for row in rows]

    async def count_log_lines(self, run_id: str, stream: str | None = None) -> int:
        """How many lines the run has (of ``stream`` if given)."""
        _check_stream(stream)
        if stream is None:
            return await self.max_log_seq(run_id)
        rows = await self._rows(
            "SELECT count(*) FROM log_lines WHERE run_id = ? AND stream = ?", (run_id, stream)
        )
        return int(rows[0][0])

    async def search_log(
        self, run_id: str, text: str, after_seq: int = 0, limit: int = 100
    ) -> list[LogLine]:
        """Lines with ``seq > after_seq`` whose shown text (terminal escapes removed)
        contains ``text`` (ASCII case-insensitive), first match first."""
        return await self._search(run_id, text, after_seq, limit, forward=True)

    async def search_log_backwards(
        self, run_id: str, text: str, before_seq: int, limit: int = 100
    ) -> list[LogLine]:
        """Lines with ``seq < before_seq`` containing ``text``, nearest match first."""
        return await self._search(run_id, text, before_seq, limit, forward=False)

    async def _search(
        self, run_id: str, text: str, seq: int, limit: int, *, forward: bool
    ) -> list[LogLine]:
        if not isinstance(text, str) or not text:
            raise StoreError("search text must be non-empty")
        _check_page(seq, limit)
        # both fragments are constants chosen here; every value is bound
        beyond, order = (">", "seq") if forward else ("<", "seq DESC")
        rows = await self._rows(
            f"SELECT * FROM log_lines WHERE run_id = ? AND seq {beyond} ? AND "
            f"{_SHOWN} LIKE ? ESCAPE '\\' ORDER BY {order} LIMIT ?",
            (run_id, seq, f"%{_escape_like(text)}%", limit),
        )
        return [log_from_row(row) for row in rows]
