"""What the log view knows about a run's log, without any widget: the live tail, a bounded
cache of stored lines, and (when one stream is shown) the line numbers of that stream.

Lines are addressed by their store ``seq`` (1, 2, 3 … without gaps). The view's row ``i``
is ``seq == i + 1`` when every stream is shown, else ``filtered[i]``. Nothing here grows
with the size of the log except the filtered index (8 bytes a line, built only on demand).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Sequence

Line = tuple[str, str]  # (stream, text)
STREAM_FILTERS = ("all", "stdout", "stderr", "srb")  # srb: the harness's own lines


class LogBuffer:
    """Live tail + history cache + optional per-stream index of one run's log."""

    def __init__(self, *, tail_size: int = 20_000, cache_size: int = 20_000) -> None:
        self.tail_size = tail_size
        self.cache_size = cache_size
        self.total = 0  # highest seq known to exist
        self._tail: list[Line] = []
        self._tail_base = 1  # seq of _tail[0]
        self._cache: OrderedDict[int, Line] = OrderedDict()
        self.stream = "all"
        self.filtered: array[int] | None = None
        self.filter_ready = True
        self.max_width = 0

    # -- lines -------------------------------------------------------------------------

    def add_live(self, last_seq: int, lines: Sequence[tuple[str, str, str]]) -> list[int]:
        """Take a batch the service published (``last_seq`` is its last line); return the
        seqs that belong to the shown stream and were appended to the filtered index."""
        if not lines:
            return []
        first = last_seq - len(lines) + 1
        if not self._tail or first != self._tail_base + len(self._tail):
            if first < self._tail_base + len(self._tail) and self._tail:
                # An overlap (a re-read): keep only what is new.
                skip = self._tail_base + len(self._tail) - first
                lines = lines[skip:]
                first += skip
            else:
                self._tail = []
                self._tail_base = first
        width = self.max_width
        for _ts, stream, text in lines:
            self._tail.append((stream, text))
            if len(text) > width:
                width = len(text)
        self.max_width = min(width, 2000)
        if len(self._tail) > 2 * self.tail_size:
            drop = len(self._tail) - self.tail_size
            del self._tail[:drop]
            self._tail_base += drop
        self.total = max(self.total, last_seq)
        added: list[int] = []
        if self.filtered is not None and self.filter_ready:
            last = self.filtered[-1] if self.filtered else 0
            for offset, (_ts, stream, _text) in enumerate(lines):
                seq = first + offset
                if stream == self.stream and seq > last:
                    self.filtered.append(seq)
                    added.append(seq)
        return added

    def add_stored(self, rows: Iterable[tuple[int, str, str]]) -> None:
        """Cache lines read from the store: ``(seq, stream, text)``."""
        cache = self._cache
        width = self.max_width
        for seq, stream, text in rows:
            cache[seq] = (stream, text)
            if len(text) > width:
                width = len(text)
        self.max_width = min(width, 2000)
        while len(cache) > self.cache_size:
            cache.popitem(last=False)

    def line(self, seq: int) -> Line | None:
        """The line with this seq if it is in memory."""
        offset = seq - self._tail_base
        if 0 <= offset < len(self._tail):
            return self._tail[offset]
        return self._cache.get(seq)

    def tail_lines_after(self, seq: int) -> list[tuple[int, str, str]]:
        """Lines of the live tail with a seq above ``seq``: ``(seq, stream, text)``."""
        start = max(0, seq + 1 - self._tail_base)
        return [
            (self._tail_base + i, stream, text)
            for i, (stream, text) in enumerate(self._tail[start:], start)
        ]

    # -- rows of the view -------------------------------------------------------------------

    @property
    def rows(self) -> int:
        return self.total if self.filtered is None else len(self.filtered)

    def seq_at(self, row: int) -> int:
        if self.filtered is None:
            return row + 1
        return self.filtered[row]

    def row_of(self, seq: int) -> int | None:
        """The row showing ``seq``, or None when the shown stream does not include it."""
        if self.filtered is None:
            return seq - 1 if 1 <= seq <= self.total else None
        row = bisect_left(self.filtered, seq)
        if row < len(self.filtered) and self.filtered[row] == seq:
            return row
        return None

    def nearest_row(self, seq: int) -> int:
        """The row of ``seq`` or of the first shown line after it."""
        if self.filtered is None:
            return max(0, min(seq - 1, self.total - 1))
        return min(bisect_left(self.filtered, seq), max(0, len(self.filtered) - 1))

    def set_stream(self, stream: str) -> None:
        """Show every line (``all``) or one stream; a stream index starts empty."""
        if stream not in STREAM_FILTERS:
            raise ValueError(f"stream filter must be one of {STREAM_FILTERS}, got {stream!r}")
        self.stream = stream
        if stream == "all":
            self.filtered = None
            self.filter_ready = True
        else:
            self.filtered = array("q")
            self.filter_ready = False

    def extend_index(self, seqs: Iterable[int]) -> None:
        """Seqs of the shown stream read from the store while the index is built."""
        assert self.filtered is not None
        last = self.filtered[-1] if self.filtered else 0
        for seq in seqs:
            if seq > last:
                self.filtered.append(seq)
                last = seq

    def finish_index(self) -> None:
        """The store has been read to its end: take the live lines it did not have yet."""
        assert self.filtered is not None
        last = self.filtered[-1] if self.filtered else 0
        self.extend_index(
            seq for seq, stream, _t in self.tail_lines_after(last) if stream == self.stream
        )
        self.filter_ready = True
