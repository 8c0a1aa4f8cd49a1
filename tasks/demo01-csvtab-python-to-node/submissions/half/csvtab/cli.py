"""The csvtab command line: option parsing, column selection and sorting."""

from __future__ import annotations

import re
import sys

from csvtab import CsvtabError, UsageError, __version__
from csvtab.reader import load, normalise_encoding
from csvtab.render import NUMBER, Table, render

HELP = """\
usage: csvtab [OPTIONS] [FILE ...]

Render CSV data as a table. With no FILE, or when FILE is -, read
standard input. Several files are concatenated; the header row of every
file after the first is skipped.

options:
  -f, --format FORMAT    table (default), markdown, json or tsv
      --style STYLE      table borders: ascii (default), box or plain
  -d, --delimiter CHAR   field separator, one character (default ,);
                         'tab' or '\\t' selects a tab
  -H, --no-header        the first row is data, not column names
  -c, --columns LIST     comma-separated column names or 1-based numbers
  -s, --sort COLUMN      sort rows by a column name or number
  -n, --numeric          sort numerically; non-numbers sort last
  -r, --reverse          reverse the sort order
  -w, --max-width N      truncate cells wider than N columns with an ellipsis
  -a, --align MODE       left, right or auto (default: numbers right)
  -e, --encoding NAME    utf-8 (default), utf-8-sig, latin-1 or ascii
  -h, --help             show this help and exit
  -V, --version          show the version and exit

exit status: 0 on success, 1 when input cannot be read or parsed,
2 when the command line is wrong.
"""

# long name -> whether the option takes a value
OPTIONS = {
    "format": True,
    "style": True,
    "delimiter": True,
    "no-header": False,
    "columns": True,
    "sort": True,
    "numeric": False,
    "reverse": False,
    "max-width": True,
    "align": True,
    "encoding": True,
    "help": False,
    "version": False,
}
SHORT = {
    "f": "format",
    "d": "delimiter",
    "H": "no-header",
    "c": "columns",
    "s": "sort",
    "n": "numeric",
    "r": "reverse",
    "w": "max-width",
    "a": "align",
    "e": "encoding",
    "h": "help",
    "V": "version",
}
CHOICES = {
    "format": ("table", "markdown", "json", "tsv"),
    "style": ("ascii", "box", "plain"),
    "align": ("left", "right", "auto"),
}
DEFAULTS: dict[str, str | bool] = {
    "format": "table",
    "style": "ascii",
    "delimiter": ",",
    "align": "auto",
    "encoding": "utf-8",
}


def whole(text: str) -> int | None:
    """Read a string of ASCII digits; absurdly long ones count as 10**9."""
    if not re.fullmatch(r"[0-9]+", text):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= 9 else 10**9


class Exit(Exception):
    """Stop after printing *text* to standard output, successfully."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def parse_args(argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    """Split *argv* into options and file names, getopt style."""
    opts: dict[str, str | bool] = dict(DEFAULTS)
    files: list[str] = []
    index = 0
    options_done = False

    def take(name: str, value: str | bool) -> None:
        if name == "help":
            raise Exit(HELP)
        if name == "version":
            raise Exit(f"csvtab {__version__}\n")
        opts[name] = value

    while index < len(argv):
        arg = argv[index]
        index += 1
        if options_done or arg == "-" or not arg.startswith("-"):
            files.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name not in OPTIONS:
                raise UsageError(f"unknown option --{name}")
            if not OPTIONS[name]:
                if eq:
                    raise UsageError(f"option --{name} does not take a value")
                take(name, True)
                continue
            if not eq:
                if index >= len(argv):
                    raise UsageError(f"option --{name} needs a value")
                value = argv[index]
                index += 1
            take(name, value)
        else:
            pos = 1
            while pos < len(arg):
                name = SHORT.get(arg[pos], "")
                if not name:
                    raise UsageError(f"unknown option -{arg[pos]}")
                pos += 1
                if not OPTIONS[name]:
                    take(name, True)
                    continue
                if pos < len(arg):
                    value = arg[pos:]
                elif index < len(argv):
                    value = argv[index]
                    index += 1
                else:
                    raise UsageError(f"option -{arg[pos - 1]} needs a value")
                take(name, value)
                break
    return opts, files


def check_options(opts: dict[str, str | bool]) -> None:
    """Validate option values, normalising them in place."""
    for name, allowed in CHOICES.items():
        if opts[name] not in allowed:
            raise UsageError(f"--{name} must be one of: {', '.join(allowed)}")
    opts["encoding"] = normalise_encoding(str(opts["encoding"]))
    delimiter = str(opts["delimiter"])
    if delimiter in ("tab", "\\t"):
        delimiter = "\t"
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise UsageError("--delimiter must be a single character other than a quote or newline")
    opts["delimiter"] = delimiter
    if "max-width" in opts:
        number = whole(str(opts["max-width"]))
        if number is None or number < 1:
            raise UsageError("--max-width must be a positive whole number")


def find_column(spec: str, header: list[str] | None, count: int) -> int:
    """Resolve a column name or 1-based number to an index."""
    if header is not None and spec in header:
        return header.index(spec)
    number = whole(spec)
    if number is not None and 1 <= number <= count:
        return number - 1
    raise UsageError(f"no such column: {spec!r}")


def sort_rows(rows: list[list[str]], col: int, numeric: bool, reverse: bool) -> list[list[str]]:
    """Stable sort on one column; numbers before everything else when numeric."""
    if not numeric:
        return sorted(rows, key=lambda row: row[col], reverse=reverse)

    def key(row: list[str]) -> tuple[int, float]:
        value = row[col]
        if NUMBER.fullmatch(value):
            return (0, float(value))
        return (1, 0.0)

    return sorted(rows, key=key, reverse=reverse)


def build_table(records: list[list[str]], opts: dict[str, str | bool]) -> Table:
    """Square up ragged records, then sort and select columns."""
    count = max(len(record) for record in records)
    squared = [record + [""] * (count - len(record)) for record in records]
    header: list[str] | None = None
    rows = squared
    if not opts.get("no-header"):
        width = len(records[0])
        header = [name if col < width else f"c{col + 1}" for col, name in enumerate(squared[0])]
        rows = squared[1:]
    if "sort" in opts:
        col = find_column(str(opts["sort"]), header, count)
        rows = sort_rows(rows, col, bool(opts.get("numeric")), bool(opts.get("reverse")))
    if "columns" in opts:
        picked = [find_column(spec, header, count) for spec in str(opts["columns"]).split(",")]
        rows = [[row[col] for col in picked] for row in rows]
        if header is not None:
            header = [header[col] for col in picked]
    return Table(header, rows)


def run(argv: list[str]) -> str:
    opts, files = parse_args(argv)
    check_options(opts)
    records = load(
        files or ["-"],
        str(opts["delimiter"]),
        str(opts["encoding"]),
        header=not opts.get("no-header"),
    )
    if not records:
        return "[]\n" if opts["format"] == "json" else ""
    table = build_table(records, opts)
    max_width = whole(str(opts["max-width"])) if "max-width" in opts else None
    return render(table, str(opts["format"]), str(opts["style"]), str(opts["align"]), max_width)


def main(argv: list[str] | None = None) -> int:
    """Run csvtab on *argv* (default: the process arguments); returns the exit status."""
    try:
        output = run(sys.argv[1:] if argv is None else argv)
    except Exit as done:
        output = done.text
    except CsvtabError as exc:
        sys.stderr.write(f"csvtab: {exc.message}\n")
        if exc.exit_status == 2:
            sys.stderr.write("usage: csvtab [OPTIONS] [FILE ...] (see --help)\n")
        return exc.exit_status
    try:
        sys.stdout.buffer.write(output.encode("utf-8"))
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        pass
    return 0
