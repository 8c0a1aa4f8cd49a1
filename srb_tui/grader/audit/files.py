"""The read-only half of the reviewer's tools: two roots, paths inside them, and reading.

Roots are named ``original`` (State A) and ``submission`` (alias ``workspace``); every path
argument is a ``"root:rel"`` string. Each path is resolved (symlinks followed) and must stay
inside its root: ``..`` and links pointing out are refused. :class:`ReviewRoots` answers
``list_dir``, ``fetch_source`` (line range, size cap), ``search`` (regex + glob, result cap),
``diff`` (the same relative path in both roots, unified); :class:`.tools.Toolbox`
adds ``run``, the host-only ``check_evidence`` (citations re-checked) and the dispatch.

``search`` applies its pattern to windows of at most ``search_window_chars`` of a line (a 2 MB
one-line file costs as much as 2,000 short lines, never a regex over the whole line) and stops
at ``call_timeout_sec`` with ``truncated`` and ``timed_out`` set; files over the size caps are
listed as skipped, not read.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT_NAMES = ("original", "submission")
ROOT_ALIASES = {"workspace": "submission", "original": "original", "submission": "submission"}
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})


class ToolError(Exception):
    """A tool call that cannot be answered; the message goes back to the caller."""


@dataclass(frozen=True)
class ToolLimits:
    """Caps that keep a tool answer small enough for a model's context."""

    fetch_max_bytes: int = 64_000
    fetch_max_lines: int = 2_000
    search_max_results: int = 200
    search_max_file_bytes: int = 2_000_000
    search_max_files: int = 20_000
    line_max_chars: int = 400
    list_max_entries: int = 2_000
    diff_max_bytes: int = 64_000
    run_timeout_sec: float = 60.0
    run_output_bytes: int = 32_000
    call_timeout_sec: float = 15.0
    search_window_chars: int = 1024
    search_overlap_chars: int = 128
    diff_max_file_bytes: int = 1_000_000


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces, lower-cased (the citation comparison form)."""
    return " ".join(text.split()).lower()


def _is_binary(head: bytes) -> bool:
    return b"\0" in head[:8192]


class ReviewRoots:
    """Read-only tools over two roots. Construct once per review; every call is independent."""


    def __init__(
        self,
        original: str | os.PathLike[str],
        submission: str | os.PathLike[str],
        *,
        allow: Iterable[str] = (),
        limits: ToolLimits | None = None,
    ) -> None:
        self.roots = {
            "original": Path(original).resolve(),
            "submission": Path(submission).resolve(),
        }
        self.allow = tuple(sorted({Path(name).name for name in allow if name}))
        self.limits = limits or ToolLimits()

    # ------------------------------------------------------------------ paths

    def split(self, ref: object) -> tuple[str, str]:
        """Split ``"root:rel"`` into (canonical root name, relative part)."""
        if not isinstance(ref, str) or ":" not in ref:
            raise ToolError(f"path must be 'original:REL' or 'submission:REL', got {ref!r}")
        root, _, rel = ref.partition(":")
        canonical = ROOT_ALIASES.get(root.strip().lower())
        if canonical is None:
            raise ToolError(f"unknown root {root!r}: use 'original' or 'submission'")
        if "\0" in rel:
            raise ToolError("path contains a NUL byte")
        return canonical, rel.strip().lstrip("/")

    def resolve(self, ref: object) -> tuple[str, Path, str]:
        """(root name, resolved path, normalised rel) — refused if it leaves its root."""
        root_name, rel = self.split(ref)
        root = self.roots[root_name]
        candidate = (root / rel) if rel else root
        resolved = Path(os.path.realpath(candidate))
        if resolved != root and root not in resolved.parents:
            raise ToolError(f"{root_name}:{rel} resolves outside its root; refused")
        norm = resolved.relative_to(root).as_posix() if resolved != root else ""
        return root_name, resolved, "" if norm == "." else norm

    def ref(self, root_name: str, rel: str) -> str:
        """The ``root:rel`` string for a path."""
        return f"{root_name}:{rel}"

    # ------------------------------------------------------------------ tools

    def list_dir(self, path: str = "submission:", depth: int = 1) -> dict[str, Any]:
        """Entries under a folder, `depth` levels deep (1–8), links reported not followed."""
        root_name, folder, rel = self.resolve(path)
        if not folder.is_dir():
            raise ToolError(f"{root_name}:{rel} is not a folder")
        depth = max(1, min(int(depth), 8))
        entries: list[dict[str, Any]] = []
        truncated = False
        root = self.roots[root_name]

        def walk(current: Path, level: int) -> None:
            nonlocal truncated
            try:
                children = sorted(os.scandir(current), key=lambda entry: entry.name)
            except OSError as exc:
                raise ToolError(f"cannot list {current}: {exc}") from None
            for child in children:
                if len(entries) >= self.limits.list_max_entries:
                    truncated = True
                    return
                child_rel = Path(child.path).relative_to(root).as_posix()
                if child.is_symlink():
                    kind, size = "link", None
                elif child.is_dir():
                    kind, size = "dir", None
                else:
                    kind, size = "file", child.stat(follow_symlinks=False).st_size
                entry: dict[str, Any] = {"path": self.ref(root_name, child_rel), "type": kind}
                if size is not None:
                    entry["size"] = size
                entries.append(entry)
                if kind == "dir" and level < depth and child.name not in SKIP_DIRS:
                    walk(Path(child.path), level + 1)

        walk(folder, 1)
        return {"path": self.ref(root_name, rel), "entries": entries, "truncated": truncated}

    def _read_text(self, file: Path, label: str) -> str:
        if not file.is_file():
            raise ToolError(f"{label} is not a file")
        with file.open("rb") as handle:
            data = handle.read(self.limits.search_max_file_bytes * 8 + 1)
        if _is_binary(data):
            raise ToolError(f"{label} is a binary file")
        return data.decode("utf-8", "replace")

    def fetch_source(
        self, path: str, start_line: int = 1, end_line: int | None = None
    ) -> dict[str, Any]:
        """Numbered lines ``start_line..end_line`` of a text file, capped in lines and bytes."""
        root_name, file, rel = self.resolve(path)
        label = self.ref(root_name, rel)
        lines = self._read_text(file, label).splitlines()
        total = len(lines)
        start = max(1, int(start_line))
        stop = total if end_line is None else min(int(end_line), total)
        stop = min(stop, start + self.limits.fetch_max_lines - 1)
        out: list[str] = []
        used = 0
        truncated = False
        last = start - 1
        for number in range(start, stop + 1):
            line = f"{number}: {lines[number - 1]}"
            if used + len(line) + 1 > self.limits.fetch_max_bytes:
                truncated = True
                break
            out.append(line)
            used += len(line) + 1
            last = number
        wanted = total if end_line is None else min(int(end_line), total)
        truncated = truncated or last < wanted
        return {
            "path": label,
            "start_line": start,
            "end_line": last,
            "total_lines": total,
            "text": "\n".join(out),
            "truncated": truncated,
        }

    def _iter_files(self, root_name: str, under: Path) -> Iterable[tuple[str, Path]]:
        root = self.roots[root_name]
        count = 0
        for current, dirs, files in os.walk(under):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(files):
                path = Path(current) / name
                if path.is_symlink():
                    real = Path(os.path.realpath(path))
                    if real != root and root not in real.parents:
                        continue
                count += 1
                if count > self.limits.search_max_files:
                    return
                yield path.relative_to(root).as_posix(), path

    @staticmethod
    def glob_match(rel: str, pattern: str) -> bool:
        """A glob without '/' matches the basename; with '/' the whole relative path."""
        if not pattern or pattern in ("*", "**", "**/*"):
            return True
        if "/" not in pattern:
            return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
        return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(
            rel, pattern.replace("**/", "")
        )

    def search(
        self,
        pattern: str,
        root: str = "submission",
        glob: str = "*",
        path: str | None = None,
        ignore_case: bool = False,
        max_results: int | None = None,
    ) -> dict[str, Any]:
        """Regex search over text files of one root or ``both``; at most `max_results` hits."""
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except (re.error, TypeError) as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
        cap = self.limits.search_max_results
        if max_results is not None:
            cap = max(1, min(int(max_results), cap))
        names = list(ROOT_NAMES) if root == "both" else [self.split(f"{root}:")[0]]
        matches: list[dict[str, Any]] = []
        skipped: list[str] = []
        truncated = timed_out = False
        deadline = time.monotonic() + self.limits.call_timeout_sec
        for root_name in names:
            under = self.roots[root_name]
            if path:
                scoped_root, under, _ = self.resolve(path)
                if scoped_root != root_name:
                    continue
            for rel, file in self._iter_files(root_name, under):
                if not self.glob_match(rel, glob):
                    continue
                try:
                    if file.stat().st_size > self.limits.search_max_file_bytes:
                        skipped.append(self.ref(root_name, rel))
                        continue
                    data = file.read_bytes()
                except OSError:
                    continue
                if _is_binary(data):
                    continue
                for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                    if time.monotonic() >= deadline:
                        truncated = timed_out = True
                        break
                    hit = self._search_line(regex, line, deadline)
                    if hit is None:
                        continue
                    if len(matches) >= cap:
                        truncated = True
                        break
                    matches.append({"path": self.ref(root_name, rel), "line": number, "text": hit})
                if truncated:
                    break
            if truncated:
                break
        out: dict[str, Any] = {"pattern": pattern, "matches": matches, "truncated": truncated}
        if timed_out:
            out["timed_out"] = True
            out["note"] = f"stopped after {self.limits.call_timeout_sec:g} s"
        if skipped:
            out["skipped_large"] = skipped[:50]
        return out

    def _search_line(self, regex: re.Pattern[str], line: str, deadline: float) -> str | None:
        """The shown text of the first match in ``line`` (searched in bounded windows)."""
        window = self.limits.search_window_chars
        shown = self.limits.line_max_chars
        if len(line) <= window:
            return line[:shown] if regex.search(line) else None
        step = max(1, window - self.limits.search_overlap_chars)
        for start in range(0, len(line), step):
            piece = line[start : start + window]
            found = regex.search(piece)
            if found is not None:
                at = start + found.start()
                lo = max(0, at - shown // 4)
                return ("…" if lo else "") + line[lo : lo + shown]
            if time.monotonic() >= deadline:
                return None
        return None

    def diff(self, path: str, context: int = 3) -> dict[str, Any]:
        """Unified diff of the same relative path in both roots (files) or a name listing
        (folders)."""
        _, rel = self.split(path if ":" in path else f"submission:{path}")
        sides: dict[str, Path | None] = {}
        for root_name in ROOT_NAMES:
            try:
                _, resolved, _ = self.resolve(f"{root_name}:{rel}")
            except ToolError:
                resolved = None
            sides[root_name] = resolved if resolved is not None and resolved.exists() else None
        left, right = sides["original"], sides["submission"]
        if left is None and right is None:
            raise ToolError(f"{rel!r} exists in neither root")
        if left is None or right is None:
            only = "submission" if left is None else "original"
            return {"path": rel, "status": f"only_{only}", "diff": ""}
        if left.is_dir() or right.is_dir():
            if not (left.is_dir() and right.is_dir()):
                return {"path": rel, "status": "type_differs", "diff": ""}
            a, b = set(os.listdir(left)), set(os.listdir(right))
            return {
                "path": rel,
                "status": "folder",
                "only_original": sorted(a - b),
                "only_submission": sorted(b - a),
                "common": len(a & b),
            }
        cap = self.limits.diff_max_file_bytes
        if left.stat().st_size > cap or right.stat().st_size > cap:
            return {"path": rel, "status": "too_large", "diff": "", "truncated": True}
        a_bytes, b_bytes = left.read_bytes(), right.read_bytes()
        if a_bytes == b_bytes:
            return {"path": rel, "status": "same", "diff": ""}
        if _is_binary(a_bytes) or _is_binary(b_bytes):
            return {"path": rel, "status": "binary_differs", "diff": ""}
        lines = difflib.unified_diff(
            a_bytes.decode("utf-8", "replace").splitlines(),
            b_bytes.decode("utf-8", "replace").splitlines(),
            fromfile=f"original:{rel}",
            tofile=f"submission:{rel}",
            n=max(0, min(int(context), 20)),
            lineterm="",
        )
        text = "\n".join(lines)
        truncated = len(text) > self.limits.diff_max_bytes
        return {
            "path": rel,
            "status": "changed",
            "diff": text[: self.limits.diff_max_bytes],
            "truncated": truncated,
        }
