"""A run's agent log as a line-API view: millions of lines, only the visible ones read.

``LogView`` is a ``ScrollView`` whose ``render_line`` looks a line up in memory (the live
tail the service published, or a bounded cache of stored lines) and, when it is not there,
asks the store for the page around it in a worker and draws a placeholder meanwhile.
Live lines arrive through :meth:`LogView.feed` (cheap: a list append) and are taken in on
a short timer, so a burst of thousands of lines costs one refresh.

Follow/pause, a stdout/stderr filter, search with next/previous and "jump to the first
error" are methods the screen binds to keys; results and notices go up as messages.
"""

from __future__ import annotations

from collections import OrderedDict

from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from srb_tui.store.logs import HARNESS_STREAM
from srb_tui.ui.palette import tone
from srb_tui.ui.widgets.log_buffer import STREAM_FILTERS, LogBuffer
from srb_tui.ui.widgets.log_read import ERROR_PATTERN, LogReader, first_error, next_match
from srb_tui.ui.widgets.log_render import no_newlines, render_body

PAGE = 256
INDEX_PAGE = 2000
DRAIN_EVERY_SEC = 0.05
HARNESS_MARK = "▸ srb  "  # before each of srb's own lines


class LogView(ScrollView, can_focus=True):
    """The log of one run: follow the end, or read anywhere in it."""

    DEFAULT_CSS = """
    LogView {
        background: $surface;
        scrollbar-gutter: stable;
    }
    """

    follow: reactive[bool] = reactive(True)
    stream: reactive[str] = reactive("all")

    class Changed(Message):
        """Line count, follow state or filter changed (merged: one in the queue at most)."""

        def __init__(self, view: LogView) -> None:
            super().__init__()
            self.view = view

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogView.Changed) and message.view is self.view

    class Notice(Message):
        """Something the operator should read (search result, no error found, …)."""

        def __init__(self, text: str, *, bad: bool = False) -> None:
            super().__init__()
            self.text = text
            self.bad = bad

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.buffer = LogBuffer()
        self.reader: LogReader | None = None
        self.run_id = ""
        self.cursor_seq: int | None = None
        self.search_text = ""
        self._pending: list[tuple[int, tuple[tuple[str, str, str], ...]]] = []
        self._loading: set[tuple[str, int]] = set()
        self._strips: OrderedDict[int, Strip] = OrderedDict()
        self._gutter = 6
        self._index_generation = 0

    # -- wiring -----------------------------------------------------------------------

    def on_mount(self) -> None:
        self.set_interval(DRAIN_EVERY_SEC, self._drain, name="log-drain")
        self.watch(self.app, "theme", self._restyle, init=False)

    def attach(self, reader: LogReader, run_id: str, total: int) -> None:
        """Show ``run_id``'s log, of which ``total`` lines are stored so far."""
        self.reader = reader
        self.run_id = run_id
        self.buffer.total = max(self.buffer.total, total)
        self._resize_virtual()
        if self.follow:
            self._to_end()
        self.refresh()
        self.post_message(self.Changed(self))

    def feed(self, last_seq: int, lines: tuple[tuple[str, str, str], ...]) -> None:
        """Queue a batch of published lines; taken in on the next drain tick."""
        self._pending.append((last_seq, lines))

    @property
    def line_count(self) -> int:
        """Rows the view shows (every line, or the lines of the shown stream)."""
        return self.buffer.rows

    @property
    def index_ready(self) -> bool:
        return self.buffer.filter_ready

    def line_text(self, seq: int) -> str | None:
        """The text of line ``seq`` if it is in memory (tests and the screen use this)."""
        line = self.buffer.line(seq)
        return None if line is None else line[1]

    def visible_seqs(self) -> list[int]:
        top = int(self.scroll_offset.y)
        rows = self.buffer.rows
        return [self.buffer.seq_at(r) for r in range(top, min(rows, top + self.size.height))]

    # -- taking lines in -----------------------------------------------------------------

    def _drain(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for last_seq, lines in pending:
            self.buffer.add_live(last_seq, lines)
        self._resize_virtual()
        if self.follow:
            self._to_end()
        self.refresh()
        self.post_message(self.Changed(self))

    def _resize_virtual(self) -> None:
        gutter = max(6, len(str(self.buffer.total)) + 2)
        if gutter != self._gutter:
            self._gutter = gutter
            self._strips.clear()
        width = self._gutter + self.buffer.max_width
        self.virtual_size = Size(width, self.buffer.rows)

    def _to_end(self) -> None:
        self.scroll_end(animate=False, immediate=False, x_axis=False)

    def on_resize(self) -> None:
        if self.follow:
            self._to_end()

    # -- drawing -----------------------------------------------------------------------

    def _restyle(self) -> None:
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if row >= self.buffer.rows:
            return Strip.blank(width, base)
        seq = self.buffer.seq_at(row)
        strip = self._strips.get(seq)
        if strip is None:
            line = self.buffer.line(seq)
            if line is None:
                self._request(row)
                placeholder = Text(f"{seq:>{self._gutter - 1}} …", style=tone(self.app, "muted"))
                return Strip(placeholder.render(self.app.console)).crop_extend(0, width, base)
            strip = self._make_strip(seq, line)
            self._strips[seq] = strip
            if len(self._strips) > 400:
                self._strips.popitem(last=False)
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_offsets(scroll_x, row)

    def _make_strip(self, seq: int, line: tuple[str, str]) -> Strip:
        stream, raw = line
        out = Text(no_wrap=True, end="", style=self.rich_style)
        out.append(f"{seq:>{self._gutter - 1}} ", style=tone(self.app, "muted"))
        if stream == HARNESS_STREAM:  # srb's own line: marked, in the accent colour
            out.append(f"{HARNESS_MARK}{raw}", style=tone(self.app, "accent"))
        else:
            body_style = tone(self.app, "bad") if stream == "stderr" else ""
            out.append_text(render_body(raw, body_style))
        if self.search_text:
            out.highlight_words([self.search_text], style=f"reverse {tone(self.app, 'warn')}",
                                case_sensitive=False)
        if seq == self.cursor_seq:
            out.stylize("reverse", 0, len(out))
        segments = list(out.render(self.app.console))
        return Strip(no_newlines(segments))

    # -- reading the store -------------------------------------------------------------

    def _request(self, row: int) -> None:
        if self.reader is None:
            return
        if self.buffer.filtered is None:
            block = (row // PAGE)
            key = ("all", block)
        else:
            block = row // PAGE
            key = (self.buffer.stream, block)
        if key in self._loading:
            return
        self._loading.add(key)
        self.run_worker(self._fetch(key, block), group="log-page")

    async def _fetch(self, key: tuple[str, int], block: int) -> None:
        reader = self.reader
        if reader is None:
            return
        try:
            if key[0] == "all":
                rows = await reader.read_log_lines(self.run_id, offset=block * PAGE, limit=PAGE)
            else:
                filtered = self.buffer.filtered
                if filtered is None or self.buffer.stream != key[0]:
                    return
                first = block * PAGE
                if first >= len(filtered):
                    return
                rows = await reader.read_log_after(
                    self.run_id, filtered[first] - 1, limit=PAGE, stream=key[0]
                )
        finally:
            self._loading.discard(key)
        self.buffer.add_stored((r.seq, r.stream, r.text) for r in rows)
        self._resize_virtual()
        self.refresh()

    # -- follow -------------------------------------------------------------------------

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self.cursor_seq = None
            self._strips.clear()
            self._to_end()
            self.refresh()
        self.post_message(self.Changed(self))

    def toggle_follow(self) -> None:
        self.follow = not self.follow

    def _pause(self) -> None:
        if self.follow:
            self.follow = False

    # Keys move without animation: an animated jump through a million lines would ask the
    # store for every page it passes.

    def _scroll_rows(self, rows: int) -> None:
        self.scroll_to(y=max(0, self.scroll_y + rows), animate=False, immediate=True)

    def action_scroll_up(self) -> None:
        self._pause()
        self._scroll_rows(-1)

    def action_scroll_down(self) -> None:
        self._scroll_rows(1)

    def action_page_up(self) -> None:
        self._pause()
        self._scroll_rows(-max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self._scroll_rows(max(1, self.scrollable_content_region.height - 1))

    def action_scroll_home(self) -> None:
        self._pause()
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_scroll_end(self) -> None:
        if self.follow:
            self._to_end()
        self.follow = True

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._pause()

    # -- stream filter -------------------------------------------------------------------

    def cycle_stream(self) -> str:
        order = STREAM_FILTERS
        self.stream = order[(order.index(self.stream) + 1) % len(order)]
        return self.stream

    def watch_stream(self, stream: str) -> None:
        if stream == self.buffer.stream:
            return
        keep = self.cursor_seq
        self.buffer.set_stream(stream)
        self._strips.clear()
        self._index_generation += 1
        if stream != "all":
            self.run_worker(self._build_index(stream, self._index_generation),
                            group="log-index", exclusive=True)
        self._resize_virtual()
        self._after_layout_change(keep)
        self.post_message(self.Changed(self))

    async def _build_index(self, stream: str, generation: int) -> None:
        reader = self.reader
        if reader is None:
            self.buffer.finish_index()
            return
        after = 0
        while True:
            rows = await reader.read_log_after(self.run_id, after, limit=INDEX_PAGE,
                                               stream=stream)
            if generation != self._index_generation:
                return
            self.buffer.extend_index(r.seq for r in rows)
            if rows:
                after = rows[-1].seq
            if len(rows) < INDEX_PAGE:
                break
            self._resize_virtual()
            if self.follow:
                self._to_end()
            self.refresh()
        self.buffer.finish_index()
        self._resize_virtual()
        self._after_layout_change(self.cursor_seq)
        self.post_message(self.Changed(self))

    def _after_layout_change(self, keep: int | None) -> None:
        if self.follow:
            self._to_end()
        elif keep is not None and self.buffer.filter_ready:
            self._centre(self.buffer.nearest_row(keep))
        self.refresh()

    # -- going to a line -------------------------------------------------------------------

    def go_to(self, seq: int) -> None:
        """Stop following, put the cursor on ``seq`` and centre it (shows every stream
        when the current filter hides that line)."""
        self.follow = False
        if (self.buffer.filtered is not None and self.buffer.filter_ready
                and self.buffer.row_of(seq) is None):
            self.stream = "all"
        self.cursor_seq = seq
        self._strips.clear()
        if self.buffer.filtered is None:
            self.buffer.total = max(self.buffer.total, seq)
            self._resize_virtual()
        if self.buffer.filter_ready:
            self._centre(self.buffer.nearest_row(seq))
        self.refresh()
        self.post_message(self.Changed(self))

    def _centre(self, row: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True)

    def _anchor_seq(self) -> int:
        if self.cursor_seq is not None:
            return self.cursor_seq
        top = int(self.scroll_offset.y)
        if self.buffer.rows == 0:
            return 0
        return self.buffer.seq_at(min(top, self.buffer.rows - 1))

    # -- search and errors ------------------------------------------------------------------

    def search(self, text: str) -> None:
        """Search forward from the cursor (or the top line) for ``text``."""
        self.search_text = text
        self._strips.clear()
        self.refresh()
        if text:
            start = self._anchor_seq() - 1 if self.cursor_seq is None else self._anchor_seq()
            self.run_worker(self._find(text, max(0, start), True), group="log-search",
                            exclusive=True)

    def search_again(self, forward: bool = True) -> None:
        if not self.search_text:
            self.post_message(self.Notice("nothing to repeat: search with / first"))
            return
        self.run_worker(self._find(self.search_text, self._anchor_seq(), forward),
                        group="log-search", exclusive=True)

    async def _find(self, text: str, start: int, forward: bool) -> None:
        if self.reader is None:
            return
        hit = await next_match(self.reader, self.run_id, text, start, forward=forward,
                               stream=self.buffer.stream)
        if hit is None:
            where = "below" if forward else "above"
            self.post_message(self.Notice(f"“{text}”: no more matches {where}", bad=True))
            return
        self.buffer.add_stored([(hit.seq, hit.stream, hit.text)])
        self.go_to(hit.seq)
        self.post_message(self.Notice(f"“{text}”: line {hit.seq}"))

    def jump_to_error(self) -> None:
        """Go to the first stderr line or line that says error / Traceback / FAIL."""
        self.run_worker(self._first_error(), group="log-search", exclusive=True)

    async def _first_error(self) -> None:
        if self.reader is None:
            return
        first = await first_error(self.reader, self.run_id)
        if first is None:
            self.post_message(self.Notice("no stderr line and no error, Traceback or FAIL"))
            return
        self.buffer.add_stored([(first.seq, first.stream, first.text)])
        self.go_to(first.seq)
        self.post_message(self.Notice(f"first error: line {first.seq} ({first.stream})"))

    def describe(self) -> str:
        """``following · all streams · 2,001 lines`` for a status bar."""
        mode = "following" if self.follow else "paused"
        stream = "all streams" if self.stream == "all" else f"{self.stream} only"
        rows = f"{self.buffer.rows:,} lines"
        if not self.buffer.filter_ready:
            rows += " (indexing…)"
        return f"{mode} · {stream} · {rows}"


__all__ = ["ERROR_PATTERN", "LogReader", "LogView", "render_body"]
