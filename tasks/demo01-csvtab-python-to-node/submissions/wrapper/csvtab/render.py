"""Output formats: bordered or plain tables, Markdown, JSON lines and TSV."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from csvtab.width import pad, text_width, truncate, visible

NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

BORDERS = {
    # top, separator, bottom as (left, joint, right, rule); then the row bar.
    "ascii": (("+", "+", "+", "-"), ("+", "+", "+", "-"), ("+", "+", "+", "-"), "|"),
    "box": (
        ("\u250c", "\u252c", "\u2510", "\u2500"),
        ("\u251c", "\u253c", "\u2524", "\u2500"),
        ("\u2514", "\u2534", "\u2518", "\u2500"),
        "\u2502",
    ),
}


def is_number(text: str) -> bool:
    """True when *text* is a plain decimal number, optionally signed."""
    return NUMBER.fullmatch(text) is not None


@dataclass
class Table:
    """Rows ready to print: an optional header and equally long body rows."""

    header: list[str] | None
    rows: list[list[str]]

    @property
    def width(self) -> int:
        return len(self.header) if self.header is not None else len(self.rows[0])

    def column_aligns(self, mode: str) -> list[str]:
        """Per-column alignment; ``auto`` right-aligns all-numeric columns."""
        if mode != "auto":
            return [mode] * self.width
        aligns = []
        for col in range(self.width):
            values = [row[col] for row in self.rows if row[col] != ""]
            numeric = bool(values) and all(is_number(value) for value in values)
            aligns.append("right" if numeric else "left")
        return aligns


def _cells(table: Table, max_width: int | None, newline: str) -> list[list[str]]:
    lines = ([table.header] if table.header is not None else []) + table.rows
    out = []
    for line in lines:
        cells = [visible(cell, newline) for cell in line]
        if max_width is not None:
            cells = [truncate(cell, max_width) for cell in cells]
        out.append(cells)
    return out


def _widths(cells: list[list[str]], minimum: int = 0) -> list[int]:
    return [
        max([minimum] + [text_width(line[col]) for line in cells])
        for col in range(len(cells[0]))
    ]


def render_table(table: Table, style: str, align: str, max_width: int | None) -> str:
    cells = _cells(table, max_width, "\u21b5")
    widths = _widths(cells)
    aligns = table.column_aligns(align)
    if style == "plain":
        return _render_plain(table, cells, widths, aligns)
    top, sep, bottom, bar = BORDERS[style]

    def rule(parts: tuple[str, str, str, str]) -> str:
        left, joint, right, fill = parts
        return left + joint.join(fill * (w + 2) for w in widths) + right

    def row(line: list[str]) -> str:
        padded = (pad(cell, w, a) for cell, w, a in zip(line, widths, aligns))
        return bar + bar.join(f" {cell} " for cell in padded) + bar

    out = [rule(top)]
    body = cells
    if table.header is not None:
        out.append(row(cells[0]))
        body = cells[1:]
        if body:
            out.append(rule(sep))
    out.extend(row(line) for line in body)
    out.append(rule(bottom))
    return "\n".join(out) + "\n"


def _render_plain(
    table: Table, cells: list[list[str]], widths: list[int], aligns: list[str]
) -> str:
    out = []
    for index, line in enumerate(cells):
        text = "  ".join(pad(cell, w, a) for cell, w, a in zip(line, widths, aligns))
        out.append(text.rstrip(" "))
        if index == 0 and table.header is not None:
            out.append("  ".join("-" * w for w in widths).rstrip(" "))
    return "\n".join(out) + "\n"


def render_markdown(table: Table, align: str, max_width: int | None) -> str:
    header = table.header
    if header is None:
        header = [f"c{col + 1}" for col in range(table.width)]
    cells = _cells(Table(header, table.rows), max_width, "<br>")
    cells = [[cell.replace("|", "\\|") for cell in line] for line in cells]
    widths = _widths(cells, minimum=3)
    aligns = table.column_aligns(align)
    rules = ["-" * (w - 1) + ":" if a == "right" else "-" * w for w, a in zip(widths, aligns)]

    def row(line: list[str]) -> str:
        return "| " + " | ".join(pad(c, w, a) for c, w, a in zip(line, widths, aligns)) + " |"

    out = [row(cells[0]), "| " + " | ".join(rules) + " |"]
    out.extend(row(line) for line in cells[1:])
    return "\n".join(out) + "\n"


def render_json(table: Table) -> str:
    if not table.rows:
        return "[]\n"
    items = []
    for line in table.rows:
        values = [json.dumps(cell, ensure_ascii=False) for cell in line]
        if table.header is None:
            items.append("[" + ", ".join(values) + "]")
        else:
            keys = [json.dumps(name, ensure_ascii=False) for name in table.header]
            pairs = (f"{key}: {value}" for key, value in zip(keys, values))
            items.append("{" + ", ".join(pairs) + "}")
    return "[\n" + ",\n".join("  " + item for item in items) + "\n]\n"


def _tsv_escape(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
    )


def render_tsv(table: Table) -> str:
    lines = ([table.header] if table.header is not None else []) + table.rows
    return "".join("\t".join(_tsv_escape(cell) for cell in line) + "\n" for line in lines)


def render(table: Table, fmt: str, style: str, align: str, max_width: int | None) -> str:
    """Render *table* in the output format *fmt*."""
    if fmt == "table":
        return render_table(table, style, align, max_width)
    if fmt == "markdown":
        return render_markdown(table, align, max_width)
    if fmt == "json":
        return render_json(table)
    return render_tsv(table)
