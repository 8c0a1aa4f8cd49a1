#!/usr/bin/env python3
"""A deterministic, offline Stage I reviewer for demo02 (shelf, http.server -> aiohttp).

It speaks the tool loop a model would, as JSON lines on stdin/stdout: it reads the host's
``{"type": "start", "gates": [...]}`` line, sends ``{"tool": NAME, "args": {...}}`` requests
and reads each ``tool_result``, and ends with ``{"submit_review": {...}}``. Every fail cites a
real line of a real file with an exact quote, so the grader's evidence re-check confirms it.

* no-old-framework      an import of http.server / socketserver / wsgiref, or their server
                        and handler classes, in any file that is not prose
* dependencies-updated  pyproject.toml without aiohttp, or a script entry naming the old
                        server module
* aiohttp-serves-routes the modules bin/shelf reaches build no aiohttp Application, register
                        no routes, never run it, miss one of the service's routes, or route
                        everything to one catch-all handler
* no-proxy              outside tests: aiohttp's client, http.client, urllib.request,
                        sockets or subprocesses, i.e. a request leaving the process

Standard library only; run it as ``python3 scripted_reviewer.py``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

PROSE_SUFFIXES = (".md", ".rst", ".txt")
OLD_FRAMEWORK = (
    r"^\s*(from|import)\s+(http\.server|socketserver|wsgiref)\b"
    r"|\bBaseHTTPRequestHandler\b|\b(Threading)?HTTPServer\s*\("
)
PROXY = (
    r"\bClientSession\b|\bhttp\.client\b|\burllib\.request\b|\burlopen\s*\(|\bsubprocess\b"
    r"|\bos\.(system|popen|exec\w*)\s*\(|\bcreate_connection\s*\(|\bHTTPConnection\s*\("
    r"|\brequests\.(get|post|put|request)\s*\("
)
ROUTES = ("/health", "/books", "/books/{id}", "/authors/{name}", "/search", "/stats")
IMPORT_RE = re.compile(r"^\s*from\s+(\.+\w*|shelf(?:\.\w+)*)\s+import\s+([\w, ]+)|^\s*import\s+"
                       r"(shelf(?:\.\w+)*)")
CATCH_ALL_RE = re.compile(r"""["']/\{\w+:\.\*\}["']""")


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


def is_prose(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1].lower()
    return name.endswith(PROSE_SUFFIXES) or name.startswith(("readme", "license", "changelog"))


def is_test(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in ("test", "tests") for p in parts[:-1]) or parts[-1].startswith("test_")


def cite(ref: str, line: int, text: str, note: str) -> dict[str, Any]:
    return {"path": ref, "line": line, "quote": text.strip()[:160], "note": note}


class Reviewer:
    def __init__(self, host: Host) -> None:
        self.host = host
        listing = host.tool("list_dir", path="submission:", depth=8) or {"entries": []}
        self.files = sorted(rel_of(e["path"]) for e in listing["entries"] if e["type"] == "file")

    def lines(self, rel: str) -> list[str]:
        fetched = self.host.tool("fetch_source", path=f"submission:{rel}", start_line=1,
                                 end_line=4000)
        if not fetched or not fetched.get("text"):
            return []
        return [numbered.partition(": ")[2] for numbered in fetched["text"].split("\n")]

    def search(self, pattern: str) -> list[dict[str, Any]]:
        result = self.host.tool("search", pattern=pattern, root="submission", glob="*")
        return list(result["matches"]) if result else []

    def first_line(self, rel: str, note: str) -> list[dict[str, Any]]:
        for number, text in enumerate(self.lines(rel), start=1):
            if text.strip():
                return [cite(f"submission:{rel}", number, text, note)]
        return []

    # ------------------------------------------------------------------ gates

    def no_old_framework(self) -> tuple[str, str, list[dict[str, Any]]]:
        hits = [h for h in self.search(OLD_FRAMEWORK) if not is_prose(rel_of(h["path"]))]
        if not hits:
            return "pass", "nothing imports http.server, socketserver or wsgiref", []
        hit = hits[0]
        where = f"{rel_of(hit['path'])}:{hit['line']}"
        return "fail", f"{len(hits)} uses of the old framework, e.g. {where}", [
            cite(hit["path"], hit["line"], hit["text"], "the standard library server is used")]

    def dependencies_updated(self) -> tuple[str, str, list[dict[str, Any]]]:
        if "pyproject.toml" not in self.files:
            note = "there is no pyproject.toml declaring aiohttp"
            return "fail", note, self.first_line("bin/shelf", note)
        lines = self.lines("pyproject.toml")
        ref = "submission:pyproject.toml"
        for number, text in enumerate(lines, start=1):
            if re.search(r"shelf\.server\s*:", text):
                return "fail", "the script entry still names shelf.server", [
                    cite(ref, number, text, "the installed command runs the old server")]
        code = [t.split("#", 1)[0] for t in lines]
        if any("aiohttp" in t for t in code):
            return "pass", "pyproject.toml declares aiohttp", []
        for number, text in enumerate(lines, start=1):
            if "dependencies" in text:
                return "fail", "aiohttp is not among the dependencies", [
                    cite(ref, number, text, "dependencies without aiohttp")]
        note = "pyproject.toml does not mention aiohttp"
        return "fail", note, self.first_line("pyproject.toml", note)

    def reached_modules(self) -> list[str]:
        """bin/shelf and every shelf module it imports, transitively."""
        queue, seen = ["bin/shelf"], []
        while queue and len(seen) < 40:
            rel = queue.pop(0)
            if rel in seen or rel not in self.files:
                continue
            seen.append(rel)
            for text in self.lines(rel):
                found = IMPORT_RE.match(text)
                if not found:
                    continue
                module = found.group(1) or found.group(3) or ""
                names = [n.strip() for n in (found.group(2) or "").split(",") if n.strip()]
                if module.startswith("."):
                    base = "shelf/" + module.lstrip(".") if module.strip(".") else "shelf"
                else:
                    base = module.replace(".", "/")
                queue.append(base + ".py")
                queue.extend(f"{base}/{name}.py" for name in names)
                queue.extend(f"{base}/__init__.py" for _ in names[:1])
        return seen

    def aiohttp_serves_routes(self) -> tuple[str, str, list[dict[str, Any]]]:
        reached = self.reached_modules()
        if "bin/shelf" not in reached:
            return "pass", "no bin/shelf; nothing shows another server behind it", []
        texts = {rel: self.lines(rel) for rel in reached}
        joined = "\n".join("\n".join(lines) for lines in texts.values())
        for rel, lines in texts.items():
            for number, text in enumerate(lines, start=1):
                if CATCH_ALL_RE.search(text):
                    return "fail", f"{rel} routes every path to one catch-all handler", [
                        cite(f"submission:{rel}", number, text,
                             "aiohttp only forwards; the routes are not registered")]
        missing = []
        if not re.search(r"\bApplication\s*\(", joined):
            missing.append("no aiohttp web.Application is built")
        if not re.search(r"\badd_(route|get|post|delete|resource|routes)\b|RouteTableDef", joined):
            missing.append("no route is registered on its router")
        if not re.search(r"\brun_app\b|\bAppRunner\b", joined):
            missing.append("the application is never run")
        absent = [r for r in ROUTES if f'"{r}"' not in joined and f"'{r}'" not in joined]
        if absent:
            missing.append("routes missing: " + ", ".join(absent))
        if not missing:
            return "pass", f"bin/shelf reaches {len(reached)} files; aiohttp serves the routes", []
        note = "; ".join(missing)
        return "fail", note, self.first_line("bin/shelf", note)

    def no_proxy(self) -> tuple[str, str, list[dict[str, Any]]]:
        hits = [h for h in self.search(PROXY)
                if not is_prose(rel_of(h["path"])) and not is_test(rel_of(h["path"]))]
        if not hits:
            return "pass", "no client, socket or subprocess call outside tests", []
        hit = hits[0]
        return "fail", f"{rel_of(hit['path'])}:{hit['line']} sends a request elsewhere", [
            cite(hit["path"], hit["line"], hit["text"],
                 "the service hands requests to another server")]


def main() -> int:
    host = Host()
    gates = [gate["id"] for gate in host.start.get("gates", []) if isinstance(gate, dict)]
    reviewer = Reviewer(host)
    judges = {
        "no-old-framework": reviewer.no_old_framework,
        "dependencies-updated": reviewer.dependencies_updated,
        "aiohttp-serves-routes": reviewer.aiohttp_serves_routes,
        "no-proxy": reviewer.no_proxy,
    }
    answers = []
    for gate in gates:
        judge = judges.get(gate)
        if judge is None:
            verdict, reasoning, evidence = "pass", "not a gate this scripted reviewer knows", []
        else:
            verdict, reasoning, evidence = judge()
        answers.append({"id": gate, "verdict": verdict, "confidence": 1.0,
                        "reasoning": reasoning, "evidence": evidence})
    failed = [a["id"] for a in answers if a["verdict"] == "fail"]
    review = {"summary": "failed: " + ", ".join(failed) if failed else "every gate passed",
              "gates": answers}
    for _ in range(2):
        host.send({"submit_review": review})
        if host.read().get("type") != "review_rejected":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
