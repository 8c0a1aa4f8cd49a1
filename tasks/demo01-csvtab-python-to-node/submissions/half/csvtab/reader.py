"""Decoding raw bytes and splitting CSV text into records.

The parser follows RFC 4180 with a few practical allowances: records may
end in LF, CRLF or a lone CR, blank lines are skipped, and a double quote
that does not open a field is kept as an ordinary character.  A quoted
field may span lines; inside it a doubled quote stands for one quote.
"""

from __future__ import annotations

import sys

from csvtab import InputError, UsageError

ENCODINGS = {
    "utf-8": "utf-8",
    "utf8": "utf-8",
    "utf-8-sig": "utf-8",
    "utf8-sig": "utf-8",
    "latin-1": "latin-1",
    "latin1": "latin-1",
    "iso-8859-1": "latin-1",
    "ascii": "ascii",
    "us-ascii": "ascii",
}


def normalise_encoding(name: str) -> str:
    """Map a user-supplied encoding name onto one of the supported codecs."""
    key = name.strip().lower().replace("_", "-")
    if key not in ENCODINGS:
        raise UsageError(f"unsupported encoding: {name!r}")
    return ENCODINGS[key]


def decode(data: bytes, encoding: str, source: str) -> str:
    """Decode *data* strictly; a leading byte order mark is dropped."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{source}: cannot decode byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start} as {encoding}"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


class _Parser:
    """A single pass over one document, producing lists of fields."""

    def __init__(self, text: str, delimiter: str, source: str) -> None:
        self.text = text
        self.delimiter = delimiter
        self.source = source
        self.pos = 0
        self.line = 1

    def newline_at(self, pos: int) -> int:
        """Length of the line break starting at *pos* (0 if there is none)."""
        char = self.text[pos] if pos < len(self.text) else ""
        if char == "\n":
            return 1
        if char == "\r":
            return 2 if self.text.startswith("\n", pos + 1) else 1
        return 0

    def records(self) -> list[list[str]]:
        text = self.text
        out: list[list[str]] = []
        while self.pos < len(text):
            brk = self.newline_at(self.pos)
            if brk:
                # A blank line carries no record at all.
                self.pos += brk
                self.line += 1
                continue
            out.append(self.record())
        return out

    def record(self) -> list[str]:
        fields: list[str] = []
        while True:
            value, ended = self.field()
            fields.append(value)
            if ended:
                return fields

    def field(self) -> tuple[str, bool]:
        """Read one field; the flag says whether the record ended after it."""
        text = self.text
        if self.pos < len(text) and text[self.pos] == '"':
            return self.quoted_field()
        start = self.pos
        while self.pos < len(text):
            char = text[self.pos]
            if char == self.delimiter:
                value = text[start:self.pos]
                self.pos += 1
                return value, False
            brk = self.newline_at(self.pos)
            if brk:
                value = text[start:self.pos]
                self.pos += brk
                self.line += 1
                return value, True
            self.pos += 1
        return text[start:], True

    def quoted_field(self) -> tuple[str, bool]:
        text = self.text
        opened_on = self.line
        self.pos += 1
        parts: list[str] = []
        while True:
            if self.pos >= len(text):
                raise InputError(
                    f"{self.source}: line {opened_on}: quoted field is never closed"
                )
            char = text[self.pos]
            if char == '"':
                if text.startswith('"', self.pos + 1):
                    parts.append('"')
                    self.pos += 2
                    continue
                self.pos += 1
                break
            brk = self.newline_at(self.pos)
            if brk:
                parts.append(text[self.pos:self.pos + brk])
                self.pos += brk
                self.line += 1
                continue
            parts.append(char)
            self.pos += 1
        value = "".join(parts)
        if self.pos >= len(text):
            return value, True
        if text[self.pos] == self.delimiter:
            self.pos += 1
            return value, False
        brk = self.newline_at(self.pos)
        if brk:
            self.pos += brk
            self.line += 1
            return value, True
        raise InputError(
            f"{self.source}: line {self.line}: unexpected {text[self.pos]!r} "
            "after a closing quote"
        )


def parse(text: str, delimiter: str = ",", source: str = "<stdin>") -> list[list[str]]:
    """Split *text* into records of fields."""
    return _Parser(text, delimiter, source).records()


def read_source(path: str) -> bytes:
    """Read all bytes of a file, or of standard input when *path* is ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or "unreadable"
        raise InputError(f"cannot read {path}: {reason}") from None


def load(paths: list[str], delimiter: str, encoding: str, header: bool) -> list[list[str]]:
    """Read every input in order; later files lose their header record."""
    rows: list[list[str]] = []
    for index, path in enumerate(paths):
        source = "<stdin>" if path == "-" else path
        records = parse(decode(read_source(path), encoding, source), delimiter, source)
        if header and index > 0:
            records = records[1:]
        rows.extend(records)
    return rows
