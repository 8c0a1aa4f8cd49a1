"""Helpers for log ingestion: line validation and de-duplication when re-attaching."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from srb_tui.store.clock import docker_ts_ns
from srb_tui.store.errors import StoreError
from srb_tui.store.records import LogEntry, LogResumePoint

HARNESS_STREAM = "srb"  # lines srb itself writes into a run's log (its steps and stages)
STREAMS = frozenset({"stdout", "stderr", HARNESS_STREAM})

# Terminal escapes a tool writes into its output: CSI (colours, cursor moves), OSC
# (titles, hyperlinks, ended by BEL or ST) and two-character escapes. Lines are stored as
# written; searches match the text without them, as the log view shows it.
ANSI_ESCAPE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]"
)
#: The SQL function (on every reader connection) that gives a line's text without escapes.
PLAIN_SQL = "srb_plain"


def plain_text(text: str) -> str:
    """``text`` without terminal escape sequences."""
    return ANSI_ESCAPE.sub("", text) if "\x1b" in text else text


def check_entries(run_id: str, lines: Iterable[LogEntry | tuple[str, str, str]]) -> None:
    """Raise StoreError naming the run and line if any entry is malformed."""
    for index, line in enumerate(lines):
        if len(line) != 3:
            raise StoreError(f"run {run_id}: log line {index} is not (ts, stream, text)")
        ts, stream, text = line
        if stream not in STREAMS:
            raise StoreError(
                f"run {run_id}: log line {index} has stream {stream!r} (want stdout, stderr or srb)"
            )
        if not isinstance(ts, str) or not isinstance(text, str):
            raise StoreError(f"run {run_id}: log line {index}: ts and text must be text")


class LogDeduper:
    """Drops the lines of a resumed Docker log stream that the store already holds.

    Docker's ``since`` is inclusive and its timestamps are not unique, so after re-attach the
    stream may repeat lines stamped at or before the last stored one. Lines older than the
    resume point are dropped; lines stamped exactly at it are dropped once per copy already
    stored; the first newer line ends filtering for good.
    """

    def __init__(self, point: LogResumePoint) -> None:
        self._last_ns = docker_ts_ns(point.last_ts) if point.last_ts else None
        self._seen: Counter[tuple[str, str]] = Counter(
            (str(pair[0]), str(pair[1])) for pair in point.at_last_ts
        )
        self._done = self._last_ns is None

    def filter(self, lines: Iterable[LogEntry]) -> list[LogEntry]:
        """The lines of ``lines`` that are new, in order."""
        if self._done:
            return list(lines)
        out: list[LogEntry] = []
        for line in lines:
            if self._done:
                out.append(line)
                continue
            ns = docker_ts_ns(line.ts)
            if ns is None or self._last_ns is None or ns > self._last_ns:
                self._done = True
                out.append(line)
            elif ns == self._last_ns and self._seen[(line.stream, line.text)] > 0:
                self._seen[(line.stream, line.text)] -= 1
            elif ns == self._last_ns:
                out.append(line)
        return out
