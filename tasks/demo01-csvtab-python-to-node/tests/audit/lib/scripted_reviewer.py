#!/usr/bin/env python3
"""A deterministic, offline Stage I reviewer for demo01 (csvtab, Python -> Node).

It behaves like a model driving the tool loop, over JSON lines on stdin/stdout: it reads the
host's ``{"type": "start", "gates": [...]}`` line, emits ``{"tool": NAME, "args": {...}}``
and reads each ``tool_result``, and finally emits ``{"submit_review": {...}}``. It judges the
five demo gates by listing and searching the two trees, and every fail cites a real line of a
real file with an exact quote, so the grader's evidence re-check can confirm it:

* no-python-sources          any *.py[cio]/pyd or pyproject.toml / setup.py / setup.cfg
* no-interpreter-dependency  child_process, spawn/exec calls, a python shebang or a "python"
                             string outside Python and prose files
* node-present               too little non-test JavaScript next to State A's Python
* node-is-primary            the entry point (bin/csvtab or package.json "bin") is not a Node
                             script, or the JavaScript it reaches starts another process
* no-embedded-reference      State A's Python definitions, or an archive, in the submission

Standard library only; run it as ``python3 scripted_reviewer.py``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

PY_SUFFIXES = (".py", ".pyc", ".pyi", ".pyo", ".pyd")
PY_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
PROSE_SUFFIXES = (".md", ".rst", ".txt")
JS_SUFFIXES = (".js", ".mjs", ".cjs")
ARCHIVE_SUFFIXES = (".whl", ".egg", ".tar.gz", ".tgz", ".zip", ".pyz")
PROCESS_PATTERN = (
    r"child_process|(?<![.\w])(spawn|spawnSync|execSync|execFile|execFileSync|fork)\s*\("
    r"|(?<![.\w])exec\s*\(|#!.*python|[\"'`][^\"'`]*\bpython[0-9.]*\b"
)
PROCESS_RE = re.compile(PROCESS_PATTERN)
REQUIRE_RE = re.compile(r"""require\(\s*["'](\.{1,2}/[^"']+)["']\s*\)""")
MIN_JS_LINES = 20
JS_SHARE = 0.3


class Host:
    """The JSON-lines conversation with the grader."""

    def __init__(self) -> None:
        self.start = self.read()

    def read(self) -> dict[str, Any]:
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)
        message = json.loads(line)
        return message if isinstance(message, dict) else {}

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def tool(self, name: str, **args: Any) -> Any:
        self.send({"tool": name, "args": args})
        reply = self.read()
        return reply.get("result") if reply.get("ok") else None


def rel_of(ref: str) -> str:
    return ref.split(":", 1)[1]


def suffix_in(rel: str, suffixes: tuple[str, ...]) -> bool:
    return rel.lower().endswith(suffixes)


class Reviewer:
    """Collects facts with tools, then answers each gate."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.files = self.list_files("submission")
        self.original_files = self.list_files("original")

    def list_files(self, root: str) -> list[str]:
        listing = self.host.tool("list_dir", path=f"{root}:", depth=8)
        if not listing:
            return []
        return sorted(
            rel_of(entry["path"]) for entry in listing["entries"] if entry["type"] == "file"
        )

    def lines(self, ref: str) -> list[str] | None:
        fetched = self.host.tool("fetch_source", path=ref, start_line=1, end_line=2000)
        if not fetched:
            return None
        out = []
        for numbered in fetched["text"].split("\n") if fetched["text"] else []:
            _, _, text = numbered.partition(": ")
            out.append(text)
        return out

    def first_line_citation(self, ref: str, note: str) -> dict[str, Any] | None:
        lines = self.lines(ref)
        for number, text in enumerate(lines or [], start=1):
            if text.strip():
                return {"path": ref, "line": number, "quote": text.strip()[:160], "note": note}
        return None

    @staticmethod
    def hit_citation(hit: dict[str, Any], note: str) -> dict[str, Any]:
        return {
            "path": hit["path"],
            "line": hit["line"],
            "quote": hit["text"].strip()[:160],
            "note": note,
        }

    # ---------------------------------------------------------------- gates

    def no_python_sources(self) -> tuple[str, str, list[dict[str, Any]]]:
        found = [
            rel
            for rel in self.files
            if suffix_in(rel, PY_SUFFIXES) or rel.rsplit("/", 1)[-1] in PY_PROJECT_FILES
        ]
        if not found:
            return "pass", "no Python source or Python project file in the submission", []
        for rel in found:
            citation = self.first_line_citation(
                f"submission:{rel}", "a Python file is still in the tree"
            )
            if citation:
                return "fail", f"{len(found)} Python files remain, e.g. {rel}", [citation]
        return (
            "fail",
            f"{len(found)} Python files remain (none readable)",
            [{"path": f"submission:{found[0]}", "line": 1, "quote": "", "note": "binary"}],
        )

    def process_hits(self) -> list[dict[str, Any]]:
        result = self.host.tool("search", pattern=PROCESS_PATTERN, root="submission", glob="*")
        hits = result["matches"] if result else []
        return [
            hit
            for hit in hits
            if not suffix_in(rel_of(hit["path"]), PY_SUFFIXES + PROSE_SUFFIXES)
            and not rel_of(hit["path"]).rsplit("/", 1)[-1].lower().startswith(("readme", "license"))
        ]

    def no_interpreter_dependency(self) -> tuple[str, str, list[dict[str, Any]]]:
        hits = self.process_hits()
        if not hits:
            return "pass", "nothing outside Python/prose files starts a process or names python", []
        hit = hits[0]
        return (
            "fail",
            f"{rel_of(hit['path'])}:{hit['line']} reaches another process",
            [self.hit_citation(hit, "starts a process or names the Python interpreter")],
        )

    def count_code_lines(self, root: str, rels: list[str]) -> int:
        total = 0
        for rel in rels:
            lines = self.lines(f"{root}:{rel}") or []
            total += sum(1 for line in lines if line.strip())
        return total

    @staticmethod
    def is_test(rel: str) -> bool:
        parts = rel.split("/")
        return any(p in ("test", "tests", "__tests__") for p in parts[:-1]) or ".test." in rel

    def node_present(self) -> tuple[str, str, list[dict[str, Any]]]:
        js = [rel for rel in self.files if suffix_in(rel, JS_SUFFIXES) and not self.is_test(rel)]
        py = [
            rel for rel in self.original_files if suffix_in(rel, (".py",)) and not self.is_test(rel)
        ]
        js_lines = self.count_code_lines("submission", js)
        py_lines = self.count_code_lines("original", py)
        needed = max(MIN_JS_LINES, int(JS_SHARE * py_lines))
        if js_lines >= needed:
            return "pass", f"{js_lines} lines of JavaScript for {py_lines} lines of Python", []
        note = f"only {js_lines} non-test JavaScript lines; State A has {py_lines} of Python"
        candidates = js + [r for r in ("bin/csvtab", "package.json") if r in self.files]
        candidates += self.files
        for rel in candidates:
            citation = self.first_line_citation(f"submission:{rel}", note)
            if citation:
                return "fail", note, [citation]
        return "fail", note, []

    def entry_point(self) -> str | None:
        if "bin/csvtab" in self.files:
            return "bin/csvtab"
        if "package.json" in self.files:
            lines = self.lines("submission:package.json") or []
            try:
                manifest = json.loads("\n".join(lines))
            except ValueError:
                return None
            target = manifest.get("bin") if isinstance(manifest, dict) else None
            if isinstance(target, dict) and target:
                target = sorted(target.values())[0]
            if isinstance(target, str):
                rel = target.removeprefix("./")
                return rel if rel in self.files else None
        return None

    def node_is_primary(self) -> tuple[str, str, list[dict[str, Any]]]:
        entry = self.entry_point()
        if entry is None:
            return "pass", "no entry point found; nothing shows another runtime behind it", []
        lines = self.lines(f"submission:{entry}") or []
        if lines and lines[0].startswith("#!") and "node" not in lines[0]:
            return (
                "fail",
                f"{entry} is not a Node script",
                [
                    {
                        "path": f"submission:{entry}",
                        "line": 1,
                        "quote": lines[0].strip(),
                        "note": "the installed command runs another interpreter",
                    }
                ],
            )
        queue, seen = [entry], set()
        while queue and len(seen) < 40:
            rel = queue.pop(0)
            if rel in seen:
                continue
            seen.add(rel)
            body = lines if rel == entry else (self.lines(f"submission:{rel}") or [])
            for number, text in enumerate(body, start=1):
                if PROCESS_RE.search(text) and not text.lstrip().startswith("#!"):
                    return (
                        "fail",
                        f"the entry point reaches {rel}, which starts a process",
                        [
                            {
                                "path": f"submission:{rel}",
                                "line": number,
                                "quote": text.strip()[:160],
                                "note": "the JavaScript behind the command hands work to a process",
                            }
                        ],
                    )
                for target in REQUIRE_RE.findall(text):
                    queue.append(resolve_require(rel, target, self.files))
        return "pass", f"{entry} is a Node script whose modules do the work", []

    def no_embedded_reference(self) -> tuple[str, str, list[dict[str, Any]]]:
        archives = [rel for rel in self.files if suffix_in(rel, ARCHIVE_SUFFIXES)]
        for rel in self.original_files:
            if not suffix_in(rel, (".py",)) or self.is_test(rel):
                continue
            for text in self.lines(f"original:{rel}") or []:
                line = text.strip()
                if not line.startswith(("def ", "class ")) or len(line) < 20:
                    continue
                result = self.host.tool(
                    "search", pattern=re.escape(line), root="submission", glob="*", max_results=1
                )
                if result and result["matches"]:
                    hit = result["matches"][0]
                    return (
                        "fail",
                        f"State A's {line!r} is in {rel_of(hit['path'])}",
                        [self.hit_citation(hit, f"copied from original:{rel}")],
                    )
        if archives:
            return (
                "fail",
                f"an archive is shipped: {archives[0]}",
                [{"path": f"submission:{archives[0]}", "line": 1, "quote": "", "note": "archive"}],
            )
        return "pass", "no definition from State A's Python and no archive in the submission", []


def resolve_require(current: str, target: str, files: list[str]) -> str:
    base = current.rsplit("/", 1)[0].split("/") if "/" in current else []
    for part in target.split("/"):
        if part == "..":
            base = base[:-1]
        elif part not in (".", ""):
            base.append(part)
    rel = "/".join(base)
    for option in (rel, rel + ".js", rel + "/index.js", rel + ".cjs", rel + ".mjs"):
        if option in files:
            return option
    return rel


def main() -> int:
    host = Host()
    gates = [gate["id"] for gate in host.start.get("gates", []) if isinstance(gate, dict)]
    reviewer = Reviewer(host)
    judges = {
        "no-python-sources": reviewer.no_python_sources,
        "no-interpreter-dependency": reviewer.no_interpreter_dependency,
        "node-present": reviewer.node_present,
        "node-is-primary": reviewer.node_is_primary,
        "no-embedded-reference": reviewer.no_embedded_reference,
    }
    answers = []
    for gate in gates:
        judge = judges.get(gate)
        if judge is None:
            verdict, reasoning, evidence = "pass", "not a gate this scripted reviewer knows", []
        else:
            verdict, reasoning, evidence = judge()
        answers.append(
            {
                "id": gate,
                "verdict": verdict,
                "confidence": 1.0,
                "reasoning": reasoning,
                "evidence": evidence,
            }
        )
    failed = [a["id"] for a in answers if a["verdict"] == "fail"]
    summary = "failed: " + ", ".join(failed) if failed else "every gate passed"
    review = {"summary": summary, "gates": answers}
    for _ in range(2):
        host.send({"submit_review": review})
        reply = host.read()
        if reply.get("type") != "review_rejected":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
