"""Terminal display width of text, and cell clean-up before measuring.

A character is zero columns wide when it is a combining or enclosing mark
or an invisible format character, two columns wide when Unicode gives it
the East Asian Wide or Fullwidth property, and one column otherwise.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "\u2026"
NEWLINE_MARK = "\u21b5"
_ZERO_CATEGORIES = frozenset({"Mn", "Me", "Cf"})


def char_width(char: str) -> int:
    """Columns occupied by a single character."""
    if unicodedata.category(char) in _ZERO_CATEGORIES:
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


def text_width(text: str) -> int:
    """Columns occupied by *text* on one line."""
    return sum(char_width(char) for char in text)


def visible(text: str, newline: str = NEWLINE_MARK) -> str:
    """Make a value safe to show on one line.

    Line breaks (CRLF, LF or CR) become *newline*, a tab becomes one space,
    and every other C0 control character and DEL is written in caret
    notation (``^A``, ``^?``) so it cannot move the cursor.
    """
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\r" and text.startswith("\n", index + 1):
            out.append(newline)
            index += 2
            continue
        if char in "\r\n":
            out.append(newline)
        elif char == "\t":
            out.append(" ")
        elif char < " " or char == "\x7f":
            out.append("^" + chr(ord(char) ^ 0x40))
        else:
            out.append(char)
        index += 1
    return "".join(out)


def truncate(text: str, limit: int) -> str:
    """Shorten *text* to at most *limit* columns, ending in an ellipsis."""
    if text_width(text) <= limit:
        return text
    room = limit - 1
    kept: list[str] = []
    used = 0
    for char in text:
        width = char_width(char)
        if used + width > room:
            break
        kept.append(char)
        used += width
    return "".join(kept) + ELLIPSIS


def pad(text: str, width: int, align: str) -> str:
    """Pad *text* with spaces to *width* columns, on the left for ``right``."""
    fill = " " * max(0, width - text_width(text))
    return fill + text if align == "right" else text + fill
