"""DiffView: one file's diff, unified or side by side, highlighted, with a hunk cursor.

A Line-API ``ScrollView``: only the rows on screen are rendered (and cached per file,
layout, width and theme), so a 10,000-line diff scrolls as fast as a 10-line one. The
highlighting (Rich ``Syntax``, lexer guessed from the file name) is done by
``prepare_diff`` in a worker thread before the widget sees the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.color import Color, ColorParseError
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from srb_tui.service.views.diff_files import DiffLine, FileDiff, side_by_side, split_lines

Layout = Literal["unified", "split"]
RowKind = Literal["hunk", "line", "pair", "note"]
GUTTER = 6
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
MAX_HIGHLIGHT_CHARS = 1_000_000


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\u2421" if code == 0x7F else chr(0x2400 + code)


def visible_text(text: str) -> str:
    """Tabs as four spaces, other control characters as their Unicode pictures (␁, ␡)."""
    return _CONTROL.sub(_picture, text.replace("\t", "    "))


def highlight_lines(text: str | None, path: str, dark: bool) -> list[Text]:
    """The lines of ``text`` (numbered as ``split_lines`` numbers them) as highlighted Text."""
    lines = [visible_text(line) for line in split_lines(text)]
    if not lines:
        return []
    joined = "\n".join(lines)
    if len(joined) > MAX_HIGHLIGHT_CHARS:
        return [Text(line) for line in lines]
    lexer = Syntax.guess_lexer(path, joined)
    syntax = Syntax(
        joined, lexer, theme="monokai" if dark else "friendly", background_color="default"
    )
    highlighted = _without_backgrounds(syntax.highlight(joined))
    parts = highlighted.split("\n", allow_blank=True)
    if len(parts) < len(lines):
        parts.extend(Text(line) for line in lines[len(parts) :])
    return list(parts[: len(lines)])


def _without_backgrounds(text: Text) -> Text:
    """The same text with every background removed (the diff rows set their own)."""
    text.style = ""
    spans = []
    for span in text.spans:
        style = Style.parse(span.style) if isinstance(span.style, str) else span.style
        if style.bgcolor is not None:
            style = Style(
                color=style.color, bold=style.bold, italic=style.italic,
                underline=style.underline, strike=style.strike,
            )
        if style:
            spans.append(span._replace(style=style))
    text.spans = spans
    return text


@dataclass
class PreparedDiff:
    """A FileDiff with both sides' lines highlighted (built off the UI thread)."""

    diff: FileDiff
    old_lines: list[Text] = field(default_factory=list)
    new_lines: list[Text] = field(default_factory=list)


def prepare_diff(diff: FileDiff, dark: bool) -> PreparedDiff:
    return PreparedDiff(
        diff,
        highlight_lines(diff.old_text, diff.path, dark) if diff.hunks else [],
        highlight_lines(diff.new_text, diff.path, dark) if diff.hunks else [],
    )


@dataclass(frozen=True, slots=True)
class ViewRow:
    """One rendered row of the side-by-side diff (a line pair or a hunk header)."""

    kind: RowKind
    hunk: int
    left: DiffLine | None = None
    right: DiffLine | None = None
    text: str = ""


def build_rows(diff: FileDiff, layout: Layout) -> tuple[list[ViewRow], list[int]]:
    """Rows for ``layout`` and the row index of each hunk header."""
    rows: list[ViewRow] = []
    starts: list[int] = []
    if not diff.hunks:
        note = diff.note or ("binary file" if diff.binary else "no differences")
        return [ViewRow("note", -1, text=note)], starts
    for number, hunk in enumerate(diff.hunks):
        starts.append(len(rows))
        rows.append(ViewRow("hunk", number, text=hunk.header))
        if layout == "unified":
            rows.extend(ViewRow("line", number, left=line) for line in hunk.lines)
        else:
            rows.extend(ViewRow("pair", number, left=a, right=b) for a, b in side_by_side(hunk))
    return rows, starts


class DiffView(ScrollView, can_focus=True):
    """The diff of one file. ``current_hunk`` is the hunk cursor (-1: no hunk)."""

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
    }
    """

    layout_mode: reactive[Layout] = reactive("unified")
    current_hunk: reactive[int] = reactive(-1)

    class HunkMoved(Message):
        """The hunk cursor moved (index, how many hunks)."""

        def __init__(self, index: int, count: int) -> None:
            super().__init__()
            self.index = index
            self.count = count

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.prepared: PreparedDiff | None = None
        self.rows: list[ViewRow] = []
        self.hunk_rows: list[int] = []
        self._cache: dict[tuple[int, int], Strip] = {}
        self._wide = 0

    # -- data ----------------------------------------------------------------------------

    def show(self, prepared: PreparedDiff | None) -> None:
        """Display a prepared diff (None clears the view)."""
        self.prepared = prepared
        self._rebuild()
        self.scroll_to(0, 0, animate=False)
        self.current_hunk = 0 if self.hunk_rows else -1
        self.post_message(self.HunkMoved(self.current_hunk, len(self.hunk_rows)))

    def _rebuild(self) -> None:
        self._cache.clear()
        if self.prepared is None:
            self.rows, self.hunk_rows = [], []
        else:
            self.rows, self.hunk_rows = build_rows(self.prepared.diff, self.layout_mode)
        self._wide = self._content_width()
        self._resize_virtual()
        self.refresh()

    def _content_width(self) -> int:
        if self.prepared is None or self.layout_mode == "split":
            return 0
        longest = 0
        for row in self.rows:
            text = self._line_text(row.left) if row.left is not None else Text(row.text)
            longest = max(longest, text.cell_len)
        return longest + 2 * GUTTER + 3

    def _resize_virtual(self) -> None:
        split = self.layout_mode == "split"
        self.styles.overflow_x = "hidden" if split else "auto"
        width = self.scrollable_content_region.width if split else self._wide
        self.virtual_size = Size(max(width, 1), len(self.rows))

    def on_resize(self) -> None:
        self._cache.clear()
        self._resize_virtual()

    def watch_layout_mode(self) -> None:
        keep = self.current_hunk
        self._rebuild()
        if 0 <= keep < len(self.hunk_rows):
            self.current_hunk = keep
            self._scroll_to_hunk()

    def retheme(self) -> None:
        """Forget rendered rows (the theme's colours changed)."""
        self._cache.clear()
        self.refresh()

    # -- hunk cursor ---------------------------------------------------------------------

    def next_hunk(self) -> bool:
        """Move to the next hunk; False when there is none."""
        if self.current_hunk + 1 >= len(self.hunk_rows):
            return False
        self.current_hunk += 1
        return True

    def previous_hunk(self) -> bool:
        if self.current_hunk <= 0:
            return False
        self.current_hunk -= 1
        return True

    def watch_current_hunk(self) -> None:
        self._cache.clear()
        self._scroll_to_hunk()
        self.refresh()
        self.post_message(self.HunkMoved(self.current_hunk, len(self.hunk_rows)))

    def _scroll_to_hunk(self) -> None:
        if 0 <= self.current_hunk < len(self.hunk_rows):
            self.scroll_to(y=self.hunk_rows[self.current_hunk], animate=False)

    # -- rendering -----------------------------------------------------------------------

    def _colours(self) -> tuple[Style, Style, Style, Style]:
        """Backgrounds of removed and added lines, gutter and hunk-header styles."""
        variables = self.app.theme_variables

        def colour(name: str, fallback: str) -> Color:
            try:
                return Color.parse(variables.get(name) or fallback)
            except ColorParseError:
                return Color.parse(fallback)

        base = colour("surface", "#000000")
        removed = base.blend(colour("error", "#800000"), 0.22)
        added = base.blend(colour("success", "#008000"), 0.22)
        muted = colour("foreground-muted", "#808080")
        accent = colour("accent", "#0000ff")
        return (
            Style(bgcolor=removed.rich_color),
            Style(bgcolor=added.rich_color),
            Style(color=muted.rich_color),
            Style(color=accent.rich_color, bold=True),
        )

    def _line_text(self, line: DiffLine | None) -> Text:
        if line is None or self.prepared is None:
            return Text()
        source = self.prepared.new_lines if line.kind == "+" else self.prepared.old_lines
        number = line.new_no if line.kind == "+" else line.old_no
        if number is not None and 0 < number <= len(source):
            return source[number - 1]
        return Text(visible_text(line.text))

    def _cell(self, line: DiffLine | None, numbers: str, styles: tuple[Style, ...]) -> Text:
        removed, added, gutter, _ = styles
        if line is None:
            return Text(" " * (GUTTER + 2), style=gutter)
        background = removed if line.kind == "-" else added if line.kind == "+" else Style()
        text = Text(style=background)
        text.append(numbers, style=gutter)
        text.append(f"{line.kind} ")
        text.append_text(self._line_text(line))
        return text

    def _render_row(self, index: int, width: int) -> Strip:
        row = self.rows[index]
        styles = self._colours()
        console = self.app.console
        if row.kind in ("hunk", "note"):
            style = styles[3] if row.kind == "hunk" else styles[2]
            if row.kind == "hunk" and row.hunk == self.current_hunk:
                style = style + Style(reverse=True)
            marker = "▶ " if row.kind == "hunk" and row.hunk == self.current_hunk else "  "
            text = Text(marker + row.text, style=style)
            return Strip(list(text.render(console))).extend_cell_length(width)
        if row.kind == "line":
            line = row.left
            assert line is not None
            numbers = f"{line.old_no or '':>{GUTTER - 1}} {line.new_no or '':>{GUTTER - 1}} "
            text = self._cell(line, numbers, styles)
            background = text.style if isinstance(text.style, Style) else None
            return Strip(list(text.render(console))).extend_cell_length(width, background)
        half = max(1, (width - 1) // 2)
        parts: list[Strip] = []
        for line, number in ((row.left, "old_no"), (row.right, "new_no")):
            label = getattr(line, number, None) if line is not None else None
            cell = self._cell(line, f"{label or '':>{GUTTER - 1}} ", styles)
            background = cell.style if isinstance(cell.style, Style) else None
            parts.append(Strip(list(cell.render(console))).crop_extend(0, half, background))
        separator = Strip([Segment("│", styles[2])])
        return Strip.join([parts[0], separator, parts[1]])

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        full = max(width, self._wide) if self.layout_mode == "unified" else width
        key = (index, full)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(index, full)
            if len(self._cache) > 4000:
                self._cache.clear()
            self._cache[key] = strip
        if self.layout_mode == "unified":
            strip = strip.crop_extend(scroll_x, scroll_x + width, None)
        return strip.apply_style(self.rich_style)
