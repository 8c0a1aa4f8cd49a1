"""Output for headless commands: Rich for people, exactly one JSON document for ``--json``.

Rich loads with the first console a command writes to, so a ``--json`` command that
prints nothing for people (``srb run --json``) never imports it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def _console(*, stderr: bool) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def plain_columns(rows: Sequence[tuple[str, ...]]) -> str:
    """Space-padded columns with every value whole (for pipes, ``--no-trunc``): the first
    row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                     .rstrip() for row in rows) + "\n"


class Output:
    """Where a command writes. Errors always go to stderr."""

    def __init__(self, json_mode: bool = False, console: Console | None = None,
                 err: Console | None = None) -> None:
        self.json_mode = json_mode
        self._console = console
        self._err = err
        self.emitted = False  # a JSON document went to stdout
        self.errors: list[str] = []  # every error message, in order

    @property
    def piped(self) -> bool:
        """Whether stdout is a pipe or a file (and no console was handed in): listings
        print plain columns there, every value whole, not a table cut to 80 columns."""
        return self._console is None and not sys.stdout.isatty()

    @property
    def console(self) -> Console:
        if self._console is None:
            self._console = _console(stderr=False)
        return self._console

    @property
    def err(self) -> Console:
        if self._err is None:
            self._err = _console(stderr=True)
        return self._err

    def emit_json(self, document: Any) -> None:
        self.emitted = True
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str))
        sys.stdout.write("\n")
        sys.stdout.flush()

    def error(self, message: str) -> None:
        """``error: message`` on stderr (the message is plain text, never markup)."""
        from rich.markup import escape

        self.errors.append(message)
        self.err.print(f"[bold red]error:[/] {escape(message)}", markup=True)

    def finish(self, code: int) -> int:
        """``code``, after keeping ``--json``'s promise of exactly one document: a command
        that ends non-zero without one prints ``{"error": {"exit_code", "messages"}}`` (the
        messages also went to stderr)."""
        if self.json_mode and code != 0 and not self.emitted:
            self.emit_json({"error": {"exit_code": code, "messages": list(self.errors)}})
        return code

    def warn(self, message: str) -> None:
        """``warning: message`` on stderr, also in ``--json`` mode (stdout stays one doc)."""
        from rich.markup import escape

        self.err.print(f"[bold yellow]warning:[/] {escape(message)}", markup=True)

    def lines(self, texts: Iterable[str]) -> None:
        """Plain text lines on stdout, exactly as given (no markup, no wrapping): a long
        listing of a headless command without Rich's per-line rendering. Through Rich when
        a console was handed in (tests that capture it)."""
        if self._console is not None:
            for text in texts:
                self._console.print(text, markup=False, highlight=False)
            return
        sys.stdout.writelines(f"{text}\n" for text in texts)
        sys.stdout.flush()

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.console.print(*objects, **kwargs)
