"""Small behaviour changes ("mutants") of a source tree, found with tree-sitter (issue 36)."""

from __future__ import annotations

import difflib
import hashlib
import os
import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from srb_tui.strength.languages import (
    MAX_BYTES,
    SKIP_DIRS,
    MutationUnavailable,
    is_test_file,
    language_of,
    parser_for,
)
from srb_tui.strength.operators import OPERATORS, walk_sites

__all__ = [
    "OPERATORS", "Mutant", "MutantStale", "MutationUnavailable", "apply_mutant", "find_sites",
    "mutant_diff", "mutated_text", "sample_mutants", "site_counts", "source_files",
]


class MutantStale(ValueError):
    """The file's bytes at [start:end] are not the mutant's `before`."""


@dataclass(frozen=True)
class Mutant:
    """One small behaviour change of a source file: where (path, line, column, byte span),
    which operator, and the text before and after; `key` names it across seeds."""

    id: str
    key: str
    path: str
    line: int
    column: int
    operator: str
    language: str
    start: int
    end: int
    before: str
    after: str

    def describe(self) -> str:
        change = f"`{_short(self.before)}` → `{_short(self.after)}`"
        return f"{self.path}:{self.line} {self.operator} {change}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Mutant:
        try:
            return cls(**{name: doc[name] for name in cls.__dataclass_fields__})
        except KeyError as exc:
            raise ValueError(f"mutant JSON lacks key {exc.args[0]!r}") from exc


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= 40 else one[:37] + "..."


def _key(path: str, start: int, end: int, after: str) -> str:
    return hashlib.sha256(f"{path}\0{start}\0{end}\0{after}".encode()).hexdigest()[:12]


def _is_binary(path: Path) -> bool:
    with path.open("rb") as fh:
        return b"\0" in fh.read(8192)


def source_files(tree: Path) -> list[tuple[str, str]]:
    """(relpath, language) of the tree's mutable source files, sorted; no tests/vendored."""
    found: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            path = Path(dirpath) / name
            if is_test_file(name) or not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size > MAX_BYTES or _is_binary(path):
                continue
            language = language_of(path)
            if language is not None:
                found.append((path.relative_to(tree).as_posix(), language))
    return sorted(found)


def _file_sites(rel: str, language: str, source: bytes) -> list[Mutant]:
    parser = parser_for(language)
    root = parser.parse(source).root_node
    seen: set[tuple[int, int, str]] = set()
    out: list[Mutant] = []
    for operator, start, end, after in walk_sites(root, language):
        before = source[start:end].decode("utf-8", "replace")
        if after == before or (start, end, after) in seen:
            continue
        seen.add((start, end, after))
        text = source[:start] + after.encode() + source[end:]
        if parser.parse(text).root_node.has_error:
            continue
        line = source.count(b"\n", 0, start) + 1
        column = start - (source.rfind(b"\n", 0, start) + 1) + 1
        out.append(Mutant("", _key(rel, start, end, after), rel, line, column, operator,
                          language, start, end, before, after))
    return out


def find_sites(tree: Path) -> list[Mutant]:
    """Every valid mutation site of the tree, ordered by (path, start, operator, after)."""
    sites: list[Mutant] = []
    for rel, language in source_files(tree):
        sites.extend(_file_sites(rel, language, (tree / rel).read_bytes()))
    return sorted(sites, key=lambda m: (m.path, m.start, m.operator, m.after))


def site_counts(tree: Path) -> dict[str, int]:
    """Operator → number of sites (every operator listed, zero included)."""
    counts = dict.fromkeys(OPERATORS, 0)
    for mutant in find_sites(tree):
        counts[mutant.operator] += 1
    return counts


def sample_mutants(tree: Path, n: int, seed: int) -> list[Mutant]:
    """n sites chosen round-robin over operators (each a seeded shuffle interleaved by file)."""
    rng = random.Random(seed)
    sites = find_sites(tree)
    queues: list[list[Mutant]] = []
    for operator in OPERATORS:
        by_file: dict[str, list[Mutant]] = {}
        for mutant in sites:
            if mutant.operator == operator:
                by_file.setdefault(mutant.path, []).append(mutant)
        files = sorted(by_file)
        rng.shuffle(files)
        for path in files:
            rng.shuffle(by_file[path])
        queue: list[Mutant] = []
        while any(by_file[p] for p in files):
            queue.extend(by_file[p].pop() for p in files if by_file[p])
        queues.append(queue)
    order = list(range(len(OPERATORS)))
    rng.shuffle(order)
    picked: list[Mutant] = []
    while len(picked) < n and any(queues):
        for index in order:
            if queues[index] and len(picked) < n:
                picked.append(queues[index].pop(0))
    return [replace(m, id=f"m{i:03d}") for i, m in enumerate(picked, 1)]


def mutated_text(source: bytes, mutant: Mutant) -> bytes:
    """`source` with the mutant applied; MutantStale when its span no longer holds `before`."""
    if source[mutant.start:mutant.end] != mutant.before.encode():
        raise MutantStale(f"{mutant.path}:{mutant.line}: bytes {mutant.start}..{mutant.end} "
                          f"are not {mutant.before!r} (the file changed)")
    return source[:mutant.start] + mutant.after.encode() + source[mutant.end:]


def apply_mutant(tree: Path, mutant: Mutant) -> None:
    """Rewrite the mutant's file in place (its mode kept)."""
    path = tree / mutant.path
    path.write_bytes(mutated_text(path.read_bytes(), mutant))


def mutant_diff(tree: Path, mutant: Mutant) -> str:
    """Unified diff (a/path, b/path, 3 lines of context) of the mutant vs the unmutated tree."""
    source = (tree / mutant.path).read_bytes()
    new = mutated_text(source, mutant)
    return "".join(difflib.unified_diff(
        source.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
        f"a/{mutant.path}", f"b/{mutant.path}", n=3))
