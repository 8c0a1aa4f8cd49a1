"""The suite command's stdout lines, written by a thread of their own.

A module's ``@srb-checks`` line is hundreds of kilobytes through Docker's exec stream; written
in line, the next module waited for the host to read it (7 ms a module at 25,000 checks).
Written here, in the order given, the next module starts at once; :meth:`LinesOut.close`
waits for every line before the grader exits.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import threading
from typing import Any, BinaryIO

from ..contract import SUITE_CHECKS_MARK, SUITE_PROGRESS_MARK, SUITE_RESULT_MARK


class LinesOut:
    """Lines (bytes, each ending in a newline) to ``out`` in the order put, from a thread."""

    def __init__(self, out: BinaryIO | None = None) -> None:
        self._out = out if out is not None else sys.stdout.buffer
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="stdout-lines", daemon=True)
        self._thread.start()

    def put(self, line: bytes) -> None:
        self._queue.put(line)

    def _run(self) -> None:
        while (line := self._queue.get()) is not None:
            with contextlib.suppress(OSError, ValueError):  # the reader went away
                self._out.write(line)
                self._out.flush()

    def close(self) -> None:
        """Every line put so far is written when this returns."""
        self._queue.put(None)
        self._thread.join()


PROGRESS_MARK = SUITE_PROGRESS_MARK


def progress_line(doc: dict[str, Any]) -> bytes:
    """One line on stdout per module start and end (the host streams them to watchers);
    the modules' own output goes to their log files, never here."""
    return (PROGRESS_MARK + json.dumps(doc, sort_keys=True) + "\n").encode("ascii")


CHECKS_MARK = SUITE_CHECKS_MARK


def checks_line(module: str, checks: str) -> bytes:
    """One line on stdout per ended module with its checks as the stage result holds them
    (``{"module": ..., "checks": [...]}``; ``checks`` is their JSON, which holds no raw
    newline), so the host can record them while later modules run. UTF-8 whatever the
    container's locale (a lone surrogate as its JSON escape)."""
    text = f'{CHECKS_MARK}{{"module": {json.dumps(module)}, "checks": {checks}}}\n'
    return text.encode("utf-8", "backslashreplace")


RESULT_MARK = SUITE_RESULT_MARK


def result_line(document: str, checks: int) -> bytes:
    """The last line: the stage result just written, without its checks (``document``, its
    JSON with ``"checks": []``), and how many checks the ``@srb-checks`` lines carried; the
    host puts those lines' checks back in order and need not fetch the file."""
    text = f'{RESULT_MARK}{{"checks_streamed": {checks}, "document": {document}}}\n'
    return text.encode("utf-8", "backslashreplace")
