"""Map dotted key paths of a TOML document to the line that defines them.

``tomllib`` forgets where a value came from, so problems would have no line
number.  :class:`KeyLocator` re-reads the raw text with a small scanner that
understands just enough TOML (table headers, arrays of tables, dotted and quoted
keys, strings of every kind, arrays and inline tables) to record, for every key,
the line it is written on.

Paths use the loader's own spelling: ``stages.audit.gate[2].id`` for the ``id``
of the third ``[[stages.audit.gate]]`` table, ``artifacts[0].exclude[3]`` for the
fourth element of an array.  Only text that ``tomllib`` accepted is scanned, so the
scanner may assume well-formed input; it still never loops forever on bad input.
"""

from __future__ import annotations

import bisect
import json
import re

from srb_tui.grader.manifests.table import join_path

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_INDEX_TAIL = re.compile(r"\[\d+\]$")
_ML_BASIC_STOP = re.compile(r'\\.|"""', re.DOTALL)
_ML_LITERAL_STOP = re.compile("'''")


def parent_path(path: str) -> str:
    """The path one level up: ``a.b[2].c`` → ``a.b[2]`` → ``a.b`` → ``a`` → ``""``."""
    if _INDEX_TAIL.search(path):
        return _INDEX_TAIL.sub("", path)
    dot = path.rfind(".")
    return path[:dot] if dot >= 0 else ""


class KeyLocator:
    """Line numbers (1-based) of the keys, tables and array elements of one document."""

    def __init__(self, text: str) -> None:
        self._lines: dict[str, int] = {}
        _Scanner(text, self._lines).run()

    def exact(self, path: str) -> int | None:
        """The line that defines ``path`` itself, or ``None``."""
        return self._lines.get(path)

    def line(self, path: str) -> int | None:
        """The line of ``path``, else of its nearest ancestor that is written down.

        A missing key is thereby placed on its table's header; a top-level key
        that is missing has no line.
        """
        current = path
        while current:
            found = self._lines.get(current)
            if found is not None:
                return found
            current = parent_path(current)
        return None

    def paths(self) -> dict[str, int]:
        """Every recorded path with its line (a copy)."""
        return dict(self._lines)


class _Scanner:
    """A single forward pass over the text, recording the first line of each path."""

    def __init__(self, text: str, out: dict[str, int]) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.out = out
        self.table = ""
        self.array_tables: dict[str, int] = {}
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # -- helpers -----------------------------------------------------------------

    def line_of(self, index: int) -> int:
        return bisect.bisect_right(self.line_starts, index)

    def record(self, path: str, index: int) -> None:
        if path and path not in self.out:
            self.out[path] = self.line_of(index)

    def peek(self) -> str:
        return self.text[self.i] if self.i < self.n else ""

    def skip_blank(self, *, newlines: bool) -> None:
        """Skip spaces, tabs, comments and (if asked) line breaks."""
        while self.i < self.n:
            c = self.text[self.i]
            if c in " \t" or (c in "\r\n" and newlines):
                self.i += 1
            elif c == "#":
                end = self.text.find("\n", self.i)
                self.i = self.n if end < 0 else end
                if not newlines:
                    return
            else:
                return

    def skip_line(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = self.n if end < 0 else end + 1

    # -- document structure ------------------------------------------------------

    def run(self) -> None:
        while True:
            self.skip_blank(newlines=True)
            if self.i >= self.n:
                return
            start = self.i
            if self.peek() == "[":
                self.header()
            else:
                self.key_value(self.table)
            self.skip_blank(newlines=False)
            if self.i == start or self.peek() not in ("\n", "\r", ""):
                # Not something this scanner understands: give up on the line.
                self.skip_line()

    def header(self) -> None:
        start = self.i
        double = self.text.startswith("[[", self.i)
        self.i += 2 if double else 1
        parts = self.key_parts()
        self.skip_blank(newlines=False)
        self.i += 2 if double else 1
        path = ""
        for k, part in enumerate(parts):
            base = join_path(path, part)
            if double and k == len(parts) - 1:
                count = self.array_tables.get(base, 0)
                self.array_tables[base] = count + 1
                path = f"{base}[{count}]"
                self.record(base, start)
            elif base in self.array_tables:
                path = f"{base}[{self.array_tables[base] - 1}]"
            else:
                path = base
            self.record(path, start)
        self.table = path

    def key_value(self, table: str) -> None:
        start = self.i
        parts = self.key_parts()
        if not parts:
            return
        path = table
        for part in parts:
            path = join_path(path, part)
            self.record(path, start)
        self.skip_blank(newlines=False)
        if self.peek() != "=":
            return
        self.i += 1
        self.skip_blank(newlines=False)
        self.value(path)

    def key_parts(self) -> list[str]:
        parts: list[str] = []
        while True:
            self.skip_blank(newlines=False)
            c = self.peek()
            if c == '"':
                end = self.basic_string_end(self.i + 1)
                raw = self.text[self.i + 1 : end - 1]
                try:
                    parts.append(str(json.loads(f'"{raw}"')))
                except ValueError:
                    parts.append(raw)
                self.i = end
            elif c == "'":
                end = self.text.find("'", self.i + 1)
                end = self.n if end < 0 else end
                parts.append(self.text[self.i + 1 : end])
                self.i = end + 1
            else:
                match = _BARE_KEY.match(self.text, self.i)
                if match is None:
                    return parts
                parts.append(match.group())
                self.i = match.end()
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                return parts
            self.i += 1

    # -- values ------------------------------------------------------------------

    def value(self, path: str) -> None:
        c = self.peek()
        if self.text.startswith('"""', self.i):
            self.i = self.multiline_end('"""', escapes=True)
        elif self.text.startswith("'''", self.i):
            self.i = self.multiline_end("'''", escapes=False)
        elif c == '"':
            self.i = self.basic_string_end(self.i + 1)
        elif c == "'":
            end = self.text.find("'", self.i + 1)
            self.i = self.n if end < 0 else end + 1
        elif c == "[":
            self.array(path)
        elif c == "{":
            self.inline_table(path)
        else:
            while self.i < self.n and self.text[self.i] not in ",]}#\r\n":
                self.i += 1

    def basic_string_end(self, i: int) -> int:
        """Index just past the closing quote of a one-line basic string."""
        while i < self.n:
            c = self.text[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            elif c == "\n":
                return i
            else:
                i += 1
        return self.n

    def multiline_end(self, delimiter: str, *, escapes: bool) -> int:
        """Index just past a multi-line string opened at ``self.i`` (with up to two
        extra quote characters that belong to the content)."""
        pattern = _ML_BASIC_STOP if escapes else _ML_LITERAL_STOP
        i = self.i + 3
        while True:
            match = pattern.search(self.text, i)
            if match is None:
                return self.n
            if match.group() != delimiter:
                i = match.end()
                continue
            i = match.end()
            extra = 0
            while extra < 2 and i < self.n and self.text[i] == delimiter[0]:
                i += 1
                extra += 1
            return i

    def array(self, path: str) -> None:
        self.i += 1
        index = 0
        while self.i < self.n:
            self.skip_blank(newlines=True)
            if self.peek() == "]":
                self.i += 1
                return
            element = f"{path}[{index}]"
            start = self.i
            self.record(element, start)
            self.value(element)
            index += 1
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.i += 1
            elif self.peek() == "]":
                self.i += 1
                return
            elif self.i == start:
                self.i += 1

    def inline_table(self, path: str) -> None:
        self.i += 1
        while self.i < self.n:
            self.skip_blank(newlines=True)
            if self.peek() == "}":
                self.i += 1
                return
            start = self.i
            self.key_value(path)
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.i += 1
            elif self.peek() == "}":
                self.i += 1
                return
            elif self.i == start:
                self.i += 1
