"""Numbers about a tree comparison: +/- lines per file, lines of code per language, search.

All of it reads files, so the console computes it in a worker after the tree is shown:
``iter_line_counts`` yields one ``LineCount`` per differing file (in batches the caller can
post as they arrive); ``language_table`` counts non-blank lines per language on each side
(language by extension, or by the ``#!`` line of files without one); ``search`` finds a
text in file names and contents of either tree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from srb_tui.service.views.diff import FileEntry, TreeComparison
from srb_tui.service.views.diff_files import BINARY_SNIFF, MAX_DIFF_BYTES, diff_lines, split_lines
from srb_tui.service.views.safe_read import read_in_tree

LANGUAGES: dict[str, str] = {
    ".py": "Python", ".pyi": "Python", ".pyx": "Cython",
    ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
    ".ts": "TypeScript", ".tsx": "TypeScript", ".go": "Go", ".rs": "Rust",
    ".java": "Java", ".kt": "Kotlin", ".scala": "Scala", ".c": "C", ".h": "C",
    ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".cs": "C#",
    ".rb": "Ruby", ".php": "PHP", ".swift": "Swift", ".lua": "Lua", ".pl": "Perl",
    ".sh": "Shell", ".bash": "Shell", ".zsh": "Shell", ".sql": "SQL",
    ".html": "HTML", ".css": "CSS", ".scss": "CSS", ".md": "Markdown", ".rst": "reST",
    ".txt": "Text", ".toml": "TOML", ".json": "JSON", ".yaml": "YAML", ".yml": "YAML",
    ".xml": "XML", ".cfg": "Config", ".ini": "Config", ".csv": "CSV",
}
SHEBANGS: tuple[tuple[str, str], ...] = (
    ("python", "Python"), ("node", "JavaScript"), ("deno", "TypeScript"), ("bash", "Shell"),
    ("/sh", "Shell"), ("ruby", "Ruby"), ("perl", "Perl"),
)
OTHER = "Other"
BINARY = "Binary"


@dataclass(frozen=True, slots=True)
class LineCount:
    """Lines added and removed in one file (``binary`` files count no lines)."""

    path: str
    added: int
    removed: int
    binary: bool = False

    @property
    def text(self) -> str:
        return "binary" if self.binary else f"+{self.added} −{self.removed}"


@dataclass(frozen=True, slots=True)
class LanguageLines:
    """One row of the before/after table."""

    language: str
    files_a: int
    lines_a: int
    files_b: int
    lines_b: int


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A match: in the file name (``line`` None) or on a line of side ``A`` or ``B``."""

    path: str
    side: str
    line: int | None
    text: str


@dataclass(frozen=True)
class SearchResult:
    """The hits of a search over both trees of a diff, and whether it was cut short."""

    needle: str
    hits: tuple[SearchHit, ...]
    paths: frozenset[str]
    truncated: bool


def _read(root: Path, rel: str) -> bytes | None:
    """``rel``'s bytes by the host-side read policy (no link followed, no FIFO opened);
    None for a link, a special file or one over MAX_DIFF_BYTES."""
    try:
        read = read_in_tree(root, rel, MAX_DIFF_BYTES)
    except OSError:
        return None
    return None if read.truncated else read.data


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", "replace")


def line_count(comparison: TreeComparison, entry: FileEntry) -> LineCount:
    """+/- lines of one entry (all lines of an added or removed file)."""
    if entry.status == "same":
        return LineCount(entry.path, 0, 0)
    old = _text(_read(comparison.left, entry.path)) if entry.status != "added" else ""
    new = _text(_read(comparison.right, entry.path)) if entry.status != "removed" else ""
    if old is None or new is None:
        return LineCount(entry.path, 0, 0, binary=True)
    if entry.status == "added":
        return LineCount(entry.path, len(split_lines(new)), 0)
    if entry.status == "removed":
        return LineCount(entry.path, 0, len(split_lines(old)))
    added = removed = 0
    for hunk in diff_lines(split_lines(old), split_lines(new), context=0):
        for line in hunk.lines:
            added += line.kind == "+"
            removed += line.kind == "-"
    return LineCount(entry.path, added, removed)


def iter_line_counts(
    comparison: TreeComparison, entries: Sequence[FileEntry] | None = None, batch: int = 200
) -> Iterator[list[LineCount]]:
    """Line counts of the differing entries (or of ``entries``), ``batch`` at a time."""
    todo = comparison.differing() if entries is None else [e for e in entries]
    for start in range(0, len(todo), batch):
        yield [line_count(comparison, entry) for entry in todo[start : start + batch]]


def language_of(path: str, head: bytes = b"") -> str:
    """A language name from the extension, else from a ``#!`` first line, else Other."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        return LANGUAGES.get(name[dot:].lower(), OTHER)
    if head.startswith(b"#!"):
        first = head.split(b"\n", 1)[0].decode("utf-8", "replace").lower()
        for marker, language in SHEBANGS:
            if marker in first:
                return language
    return OTHER


def _count_tree(root: Path, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    for rel in paths:
        data = _read(root, rel)
        text = _text(data)
        if text is None:
            language, lines = BINARY, 0
        else:
            language = language_of(rel, data[:200] if data else b"")
            lines = sum(1 for line in text.splitlines() if line.strip())
        files, total = totals.get(language, (0, 0))
        totals[language] = (files + 1, total + lines)
    return totals


def language_table(comparison: TreeComparison) -> list[LanguageLines]:
    """Non-blank lines per language before (State A) and after, biggest change first."""
    a_paths = [e.path for e in comparison.entries if e.status != "added"]
    b_paths = [e.path for e in comparison.entries if e.status != "removed"]
    a = _count_tree(comparison.left, a_paths)
    b = _count_tree(comparison.right, b_paths)
    rows = [
        LanguageLines(lang, *a.get(lang, (0, 0)), *b.get(lang, (0, 0)))
        for lang in a.keys() | b.keys()
    ]
    rows.sort(key=lambda r: (-abs(r.lines_b - r.lines_a), -max(r.lines_a, r.lines_b), r.language))
    return rows


def search(
    comparison: TreeComparison,
    needle: str,
    *,
    only_differing: bool = False,
    limit: int = 1000,
) -> SearchResult:
    """Case-insensitive matches of ``needle`` in file names and in the text of both sides."""
    wanted = needle.strip().lower()
    if not wanted:
        return SearchResult(needle, (), frozenset(), False)
    hits: list[SearchHit] = []
    paths: set[str] = set()
    truncated = False
    for entry in comparison.entries:
        if only_differing and entry.status == "same":
            continue
        if wanted in entry.path.lower():
            paths.add(entry.path)
            if len(hits) < limit:
                hits.append(SearchHit(entry.path, "name", None, entry.path))
        sides = []
        if entry.status != "added":
            sides.append(("A", comparison.left))
        if entry.status != "removed" and entry.status != "same":
            sides.append(("B", comparison.right))
        for side, root in sides:
            data = _read(root, entry.path)
            if data is None or (wanted.isascii() and wanted.encode() not in data.lower()):
                continue
            text = _text(data)
            if text is None:
                continue
            paths.add(entry.path)
            for number, line in enumerate(text.splitlines(), 1):
                if wanted in line.lower():
                    if len(hits) >= limit:
                        truncated = True
                        break
                    hits.append(SearchHit(entry.path, side, number, line.strip()[:200]))
    return SearchResult(needle, tuple(hits), frozenset(paths), truncated)
