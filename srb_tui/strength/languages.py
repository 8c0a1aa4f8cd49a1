"""Which file is which language, and which tree-sitter grammar parses it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".c": "c", ".h": "c", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".go": "go", ".rs": "rust",
    ".ts": "typescript", ".tsx": "tsx", ".java": "java", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
}
SHEBANGS: dict[str, str] = {"python": "python", "node": "javascript"}
# language -> (module, function returning the grammar)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"), "c": ("tree_sitter_c", "language"),
    "javascript": ("tree_sitter_javascript", "language"), "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"), "java": ("tree_sitter_java", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}
SKIP_DIRS = frozenset({"test", "tests", "__tests__", "spec", "node_modules", "vendor", ".git",
                       "build", "dist", "target", "__pycache__"})
MAX_BYTES = 1_000_000


class MutationUnavailable(RuntimeError):
    """tree-sitter or a grammar is not installed."""


def is_test_file(name: str) -> bool:
    stem = name.split(".", 1)[0]
    return (name.startswith("test_") and name.endswith(".py")) or stem.endswith("_test") \
        or ".test." in name or ".spec." in name


def language_of(path: Path) -> str | None:
    """The language of `path` by extension, else by its shebang line; None when neither says."""
    lang = EXTENSIONS.get(path.suffix.lower())
    if lang is not None:
        return lang
    if path.suffix:
        return None
    try:
        with path.open("rb") as fh:
            first = fh.readline(200)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and words[0].endswith("/env"):
        words = [w for w in words[1:] if not w.startswith("-")]
    prog = Path(words[0]).name if words else ""
    for key, value in SHEBANGS.items():
        if prog.startswith(key):
            return value
    return None


def parser_for(language: str) -> Any:
    """A tree_sitter.Parser for `language`; MutationUnavailable when the extra is missing."""
    try:
        tree_sitter = importlib.import_module("tree_sitter")
        module_name, func = GRAMMARS[language]
        grammar = getattr(importlib.import_module(module_name), func)()
    except ImportError as exc:
        raise MutationUnavailable(
            "install the strength extra: pip install -e '.[strength]'") from exc
    return tree_sitter.Parser(tree_sitter.Language(grammar))
