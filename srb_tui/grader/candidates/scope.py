"""Stage III: the static scope scan of a candidate (one part of its adjudication).

A candidate is out of scope when it tells the trees apart by something other than their
behaviour: reading its own process or parents, file identity or timestamps, the whole
environment or a harness variable it was not handed, naming a path only one tree has, or
using a command the task denies. The scan reads every text file of the candidate.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .env import CANDIDATE_ENV

SCAN_MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class ScopeFinding:
    """One reason a candidate is out of scope: file, line, what was found."""

    path: str
    line: int
    rule: str
    text: str


_IDENTITY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reads /proc to learn about its own process or parents", re.compile(r"/proc/(self|\d|\$)")),
    ("reads its parent process", re.compile(r"\bgetppid\b|\$PPID\b|process\.ppid\b")),
    (
        "reads file identity or timestamps (inode, device, mtime, ctime)",
        re.compile(
            r"\bst_(ino|dev|mtime|ctime|atime|birthtime)\b|\bget[mca]time\b|\bmtimeMs\b|"
            r"\bctimeMs\b|\bbirthtime(Ms)?\b|\bstat\s+(-[A-Za-z]*[cf]\b|--format|--printf)|"
            r"\bls\s+-[A-Za-z]*i[A-Za-z]*\b|\bfind\b.*-(newer|inum|samefile)\b"
        ),
    ),
    (
        "dumps the whole environment",
        re.compile(
            r"\bprintenv\b|^\s*env\s*(\||$|>)|os\.environ\s*(\)|$|\.(items|keys|values|copy)\b)"
            r"|\bdict\(\s*os\.environ\s*\)|\bin\s+os\.environ\b|process\.env\s*(\)|;|$)|"
            r"Object\.(keys|entries|values)\(\s*process\.env\s*\)|\bcompgen\s+-e\b|\bexport\s+-p\b"
        ),
    ),
)
_ENV_NAME = re.compile(r"\bSRB_[A-Z0-9_]+")


def _tree_files(root: Path) -> set[str]:
    files: set[str] = set()
    for current, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules")]
        for name in names:
            files.add((Path(current) / name).relative_to(root).as_posix())
    return files


def _one_tree_markers(original: Path | None, submission: Path | None) -> dict[str, str]:
    """Distinctive names that only one tree has: marker -> which tree."""
    if original is None or submission is None:
        return {}
    a, b = _tree_files(original), _tree_files(submission)
    markers: dict[str, str] = {}
    for paths, only in ((a - b, "original"), (b - a, "submission")):
        for rel in sorted(paths)[:20000]:
            if "/" in rel and len(rel) >= 6:
                markers[rel] = only
    a_names = {rel.rsplit("/", 1)[-1] for rel in a}
    b_names = {rel.rsplit("/", 1)[-1] for rel in b}
    for names, only in ((a_names - b_names, "original"), (b_names - a_names, "submission")):
        for name in names:
            if "." in name.strip(".") and len(name) >= 6:
                markers[name] = only
    return markers


def _deny_pattern(command: str) -> re.Pattern[str]:
    words = [re.escape(word) for word in command.split()]
    return re.compile(r"(?<![\w./-])" + r"\s+".join(words) + r"(?![\w-])")


def scan_candidate(
    candidate_dir: Path,
    *,
    deny_commands: Iterable[str] = (),
    original: Path | None = None,
    submission: Path | None = None,
    allowed_env: Iterable[str] = CANDIDATE_ENV,
) -> list[ScopeFinding]:
    """Static scope scan of every text file of a candidate: tree-identity tricks (process,
    inode/timestamp, whole-environment and SRB_* reads, naming a path only one tree has) and
    denied commands."""
    allowed = set(allowed_env)
    denies = [(command, _deny_pattern(command)) for command in deny_commands if command.strip()]
    markers = _one_tree_markers(original, submission)
    marker_res = [
        (marker, only, re.compile(r"(?<![\w.-])" + re.escape(marker) + r"(?![\w-])"))
        for marker, only in markers.items()
    ]
    findings: list[ScopeFinding] = []
    for current, dirs, names in os.walk(candidate_dir):
        dirs.sort()
        for name in sorted(names):
            path = Path(current) / name
            rel = path.relative_to(candidate_dir).as_posix()
            try:
                if path.is_symlink() or path.stat().st_size > SCAN_MAX_FILE_BYTES:
                    findings.append(ScopeFinding(rel, 0, "unscannable file (link or too big)", ""))
                    continue
                data = path.read_bytes()
            except OSError as exc:
                findings.append(ScopeFinding(rel, 0, f"unreadable: {exc}", ""))
                continue
            if b"\0" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                text = line.strip()[:200]
                for rule, pattern in _IDENTITY_RULES:
                    if pattern.search(line):
                        findings.append(ScopeFinding(rel, number, rule, text))
                for env_name in _ENV_NAME.findall(line):
                    if env_name not in allowed:
                        findings.append(
                            ScopeFinding(rel, number, f"reads harness variable {env_name}", text)
                        )
                for marker, only, marker_re in marker_res:
                    if marker in line and marker_re.search(line):
                        findings.append(
                            ScopeFinding(
                                rel, number, f"names {marker!r}, which only the {only} has", text
                            )
                        )
                for command, deny_re in denies:
                    if deny_re.search(line):
                        findings.append(
                            ScopeFinding(rel, number, f"uses denied command {command!r}", text)
                        )
    return findings
