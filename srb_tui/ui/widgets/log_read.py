"""What the log view asks the store: its reading protocol, and the two searches that walk
the stored log page by page (the next match of a text, the first error).

No Textual here: the view (:mod:`.log_view`) moves its cursor to what these return.
"""

from __future__ import annotations

import re
from typing import Protocol

from srb_tui.store import LogLine
from srb_tui.store.logs import plain_text

SEARCH_PAGE = 200
ERROR_PAGE = 50
ERROR_WORDS = ("error", "Traceback", "FAIL")
ERROR_PATTERN = re.compile(r"error|Traceback|FAIL", re.IGNORECASE)


class LogReader(Protocol):
    """The part of the store the view reads (``store.logs`` satisfies it)."""

    async def read_log_lines(
        self, run_id: str, offset: int = 0, limit: int = 500, stream: str | None = None
    ) -> list[LogLine]: ...

    async def read_log_after(
        self, run_id: str, after_seq: int, limit: int = 500, stream: str | None = None
    ) -> list[LogLine]: ...

    async def count_log_lines(self, run_id: str, stream: str | None = None) -> int: ...

    async def search_log(
        self, run_id: str, text: str, after_seq: int = 0, limit: int = 100
    ) -> list[LogLine]: ...

    async def search_log_backwards(
        self, run_id: str, text: str, before_seq: int, limit: int = 100
    ) -> list[LogLine]: ...


async def next_match(reader: LogReader, run_id: str, text: str, start: int, *,
                     forward: bool, stream: str = "all") -> LogLine | None:
    """The first stored line after (``forward``) or before ``start`` that contains
    ``text``, on ``stream`` (``"all"``: any); None when there is none."""
    cursor = start
    while True:
        if forward:
            hits = await reader.search_log(run_id, text, after_seq=cursor, limit=SEARCH_PAGE)
        else:
            hits = await reader.search_log_backwards(run_id, text, before_seq=cursor,
                                                     limit=SEARCH_PAGE)
        for hit in hits:
            if stream == "all" or hit.stream == stream:
                return hit
        if len(hits) < SEARCH_PAGE:
            return None
        cursor = hits[-1].seq


async def first_error(reader: LogReader, run_id: str) -> LogLine | None:
    """The first stderr line or line that says error / Traceback / FAIL; None if none."""
    found: list[LogLine] = list(await reader.read_log_after(run_id, 0, limit=1,
                                                            stream="stderr"))
    for word in ERROR_WORDS:
        after = 0
        while True:
            hits = await reader.search_log(run_id, word, after_seq=after, limit=ERROR_PAGE)
            match = next((h for h in hits if ERROR_PATTERN.search(plain_text(h.text))), None)
            if match is not None:
                found.append(match)
                break
            if len(hits) < ERROR_PAGE:
                break
            after = hits[-1].seq
    return min(found, key=lambda line: line.seq) if found else None


__all__ = ["ERROR_PATTERN", "LogReader", "first_error", "next_match"]
