"""The author's command lines: ``--case "ARGS"`` and ``--cases-file FILE`` become the
behavioural cases (``{"id", "argv", "stdin"?}``) and the fuzzers' command lines.

A command line is split as a POSIX shell would (quotes, backslashes), without running a
shell: ``-n 3 inputs/a.txt`` is three words. ``< FILE`` (or ``<FILE``) gives the case that
file on standard input instead of an argument. Input files the author supplies
(``--inputs DIR``) are reachable as ``inputs/NAME`` from a case: the cases run in a scratch
copy of that folder's parent.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INPUTS = "inputs/"
MAX_SLUG = 40


class CaseError(ValueError):
    """A command line that cannot become a case (the message names it)."""


@dataclass(frozen=True)
class Case:
    """One behavioural case: the words after the program, and the input file fed on
    standard input (``inputs/NAME``) if any."""

    id: str
    argv: tuple[str, ...]
    stdin: str | None = None
    line: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"id": self.id, "argv": list(self.argv)}
        if self.stdin is not None:
            doc["stdin"] = self.stdin
        doc["command_line"] = self.line  # as the author wrote it (casekit ignores it)
        return doc

    def reads_files(self) -> bool:
        return any(word.startswith(INPUTS) for word in self.argv)


def read_cases_file(path: Path) -> list[str]:
    """One command line per line; blank lines and lines starting with ``#`` are skipped."""
    text = path.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _slug(words: tuple[str, ...], stdin: str | None) -> str:
    text = "-".join(words) + (f"-stdin-{Path(stdin).name}" if stdin else "")
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:MAX_SLUG].rstrip("-") or "no-args"


def parse_case(number: int, line: str, inputs: set[str]) -> Case:
    """Case ``number`` from one command line; ``inputs`` is the set of ``inputs/NAME``
    paths that exist (a word or stdin naming another ``inputs/`` path is refused)."""
    try:
        words = shlex.split(line, posix=True)
    except ValueError as exc:
        raise CaseError(f"case {number} {line!r}: {exc}") from None
    argv: list[str] = []
    stdin: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "<" or (word.startswith("<") and len(word) > 1):
            target = word[1:] if word != "<" else (words[i + 1] if i + 1 < len(words) else "")
            i += 1 if word != "<" else 2
            if not target:
                raise CaseError(f"case {number} {line!r}: '<' needs a file after it")
            if stdin is not None:
                raise CaseError(f"case {number} {line!r}: two '<' redirections")
            stdin = target
            continue
        argv.append(word)
        i += 1
    for word in [*argv, *([stdin] if stdin else [])]:
        if word.startswith(INPUTS) and word not in inputs:
            known = ", ".join(sorted(inputs)) or "none: pass --inputs DIR"
            raise CaseError(f"case {number} {line!r}: {word} is not one of the input files "
                            f"({known})")
    if stdin is not None and not stdin.startswith(INPUTS):
        raise CaseError(f"case {number} {line!r}: standard input must come from an input "
                        f"file (inputs/NAME), not {stdin!r}")
    return Case(f"c{number:02d}-{_slug(tuple(argv), stdin)}", tuple(argv), stdin, line)


def parse_cases(lines: list[str], inputs: set[str]) -> list[Case]:
    """Every line as a case, numbered from 1; the same command line twice is refused."""
    cases = [parse_case(n, line, inputs) for n, line in enumerate(lines, start=1)]
    seen: dict[tuple[tuple[str, ...], str | None], int] = {}
    for n, case in enumerate(cases, start=1):
        key = (case.argv, case.stdin)
        if key in seen:
            raise CaseError(f"case {n} {case.line!r} repeats case {seen[key]}")
        seen[key] = n
    return cases


def fuzz_argv(cases: list[Case]) -> dict[str, Any]:
    """``argv.json`` for the fuzzers: every distinct command line that reads standard input
    (names no input file), ``[]`` first; the tokens are every word the cases use outside
    input-file paths."""
    sets: list[list[str]] = [[]]
    for case in cases:
        if not case.reads_files() and list(case.argv) not in sets:
            sets.append(list(case.argv))
    tokens = [w for case in cases for w in case.argv if not w.startswith(INPUTS)]
    return {
        "about": "command lines a fuzzer pairs with the seed files (each seed goes to "
                 "standard input); tokens are the words a command-line mutation inserts",
        "argv": sets,
        "tokens": list(dict.fromkeys([*tokens, "--", "-"])),
    }
