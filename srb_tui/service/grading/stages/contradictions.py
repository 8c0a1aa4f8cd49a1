"""srb's deterministic evidence against a Stage I pass (issue 37, defence b).

A gate may declare ``[[stages.audit.gate.metadata.contradicted_by]]`` entries: files that must not
be in the submission (old-stack files), or lines in files of the build closure that name the
old toolchain (a pattern), or audit-scan checks whose fail says the same. When one of them
finds something, a pass the reviewers voted on that gate is overruled to fail and the
evidence is recorded (:func:`find_contradictions`). The walk reads the submission on the
host: regular files only, links never followed, each file size-capped.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.schema import Gate

MAX_BYTES = 512 * 1024
MAX_FILES = 5000
MAX_EVIDENCE = 5


@dataclass
class Contradicted:
    """The deterministic evidence against a pass on one gate."""

    gate: str
    says: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def reason(self) -> str:
        where = ", ".join(
            f"{e['path']}:{e['line']}" if e.get("line") else str(e["path"])
            for e in self.evidence[:MAX_EVIDENCE]
        )
        return f"srb's deterministic scan: {'; '.join(self.says)} ({where})"

    def to_dict(self) -> dict[str, Any]:
        return {"gate": self.gate, "says": self.says, "evidence": self.evidence}


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    count = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            count += 1
            if count > MAX_FILES:
                return
            path = Path(folder) / name
            yield path.relative_to(root).as_posix(), path


def _matches(rel: str, globs: Sequence[str]) -> bool:
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(base, g) for g in globs)


def _lines(path: Path) -> list[str]:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_BYTES:
            return []
        return path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def _file_evidence(
    files: list[tuple[str, Path]], globs: Sequence[str], pattern: str | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    compiled = re.compile(pattern) if pattern else None
    for rel, path in files:
        if not _matches(rel, globs):
            continue
        if compiled is None:
            out.append({"path": f"submission:{rel}", "line": 0, "quote": "(the file exists)"})
        else:
            for number, line in enumerate(_lines(path), start=1):
                if compiled.search(line):
                    quote = line.strip()[:160]
                    out.append({"path": f"submission:{rel}", "line": number, "quote": quote})
                    break
        if len(out) >= MAX_EVIDENCE:
            break
    return out


def _scan_evidence(
    checks: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> list[dict[str, Any]]:
    out = []
    for check in checks:
        ident = str(check.get("id", "")).removeprefix("scan/")
        if check.get("verdict") == "fail" and any(fnmatch.fnmatchcase(ident, n) for n in names):
            out.append({"path": f"scan/{ident}", "line": 0, "quote": str(check.get("summary"))})
    return out[:MAX_EVIDENCE]


def find_contradictions(
    gates: Sequence[Gate], submission: Path, scan_checks: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Contradicted]:
    """Gate id -> the deterministic evidence against a pass, for every gate that has some."""
    declared = [g for g in gates if g.contradicted_by]
    if not declared:
        return {}
    files = list(_walk(submission)) if submission.is_dir() else []
    found: dict[str, Contradicted] = {}
    for gate in declared:
        for entry in gate.contradicted_by:
            evidence = _file_evidence(files, entry.files, entry.pattern) if entry.files else []
            evidence += _scan_evidence(scan_checks, entry.scan) if entry.scan else []
            if evidence:
                item = found.setdefault(gate.id, Contradicted(gate.id))
                item.says.append(entry.says)
                item.evidence.extend(evidence)
    return found
