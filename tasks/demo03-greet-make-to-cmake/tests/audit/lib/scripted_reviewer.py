#!/usr/bin/env python3
"""A deterministic, offline Stage I reviewer for demo03 (greet, make -> CMake).

It speaks the reviewer's JSON-lines tool loop (``start`` line in, ``{"tool": ...}`` calls,
``{"submit_review": ...}`` last) and judges the three gates by listing and reading the
submission; every fail cites a real line with an exact quote:

* no-make-build  a Makefile / GNUmakefile / *.mk, or a line of build.sh that runs make
* cmake-builds   no CMakeLists.txt with add_library and add_executable, or a build.sh
                 that never runs cmake
* sources-kept   src/greet.c or src/main.c missing, or a prebuilt greet / libgreet shipped

Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAKE_FILES = ("makefile", "gnumakefile")
MAKE_CALL = re.compile(r"(^|[\s;&|(`])(g?make)(\s|$)")


class Host:
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


class Reviewer:
    def __init__(self, host: Host) -> None:
        self.host = host
        listing = host.tool("list_dir", path="submission:", depth=8) or {"entries": []}
        self.files = sorted(entry["path"].split(":", 1)[1] for entry in listing["entries"]
                            if entry["type"] == "file")

    def lines(self, rel: str) -> list[str]:
        fetched = self.host.tool("fetch_source", path=f"submission:{rel}", start_line=1,
                                 end_line=2000)
        if not fetched or not fetched.get("text"):
            return []
        return [numbered.partition(": ")[2] for numbered in fetched["text"].split("\n")]

    def cite(self, rel: str, pattern: re.Pattern[str] | None, note: str) -> list[dict[str, Any]]:
        for number, text in enumerate(self.lines(rel), start=1):
            if text.strip() and (pattern is None or pattern.search(text)):
                return [{"path": f"submission:{rel}", "line": number,
                         "quote": text.strip()[:160], "note": note}]
        return []

    def script_lines(self) -> list[tuple[int, str]]:
        return [(n, t) for n, t in enumerate(self.lines("build.sh"), start=1)
                if t.strip() and not t.lstrip().startswith("#")]

    def no_make_build(self) -> tuple[str, str, list[dict[str, Any]]]:
        for rel in self.files:
            name = rel.rsplit("/", 1)[-1].lower()
            if name in MAKE_FILES or name.endswith(".mk"):
                return "fail", f"{rel} is a make build", self.cite(rel, None, "a make build")
        for number, text in self.script_lines():
            if MAKE_CALL.search(text):
                return "fail", f"build.sh:{number} runs make", [
                    {"path": "submission:build.sh", "line": number, "quote": text.strip()[:160],
                     "note": "build.sh still runs make"}]
        return "pass", "no Makefile, no *.mk, build.sh does not run make", []

    def cmake_builds(self) -> tuple[str, str, list[dict[str, Any]]]:
        if "CMakeLists.txt" not in self.files:
            note = "there is no CMakeLists.txt"
            return "fail", note, self.cite("build.sh", None, note) if "build.sh" in self.files \
                else []
        text = "\n".join(self.lines("CMakeLists.txt"))
        missing = [word for word in ("add_library", "add_executable") if word not in text]
        if missing:
            note = "CMakeLists.txt has no " + " or ".join(missing)
            return "fail", note, self.cite("CMakeLists.txt", None, note)
        if not any("cmake" in t for _, t in self.script_lines()):
            note = "build.sh never runs cmake"
            return "fail", note, self.cite("build.sh", None, note)
        return "pass", "CMakeLists.txt builds the library and the command; build.sh runs cmake", []

    def sources_kept(self) -> tuple[str, str, list[dict[str, Any]]]:
        gone = [rel for rel in ("src/greet.c", "src/main.c") if rel not in self.files]
        binary = [rel for rel in self.files if re.search(r"(^|/)(greet|libgreet[^/]*)$", rel)
                  and not rel.endswith((".c", ".h"))]
        if gone or binary:
            note = f"missing {gone}" if gone else f"prebuilt {binary[0]}"
            target = binary[0] if binary else (self.files[0] if self.files else "build.sh")
            evidence = self.cite(target, None, note) or [
                {"path": f"submission:{target}", "line": 1, "quote": "", "note": note}]
            return "fail", note, evidence
        return "pass", "src/greet.c and src/main.c are there and nothing prebuilt is", []


def main() -> int:
    host = Host()
    gates = [gate["id"] for gate in host.start.get("gates", []) if isinstance(gate, dict)]
    reviewer = Reviewer(host)
    judges = {"no-make-build": reviewer.no_make_build, "cmake-builds": reviewer.cmake_builds,
              "sources-kept": reviewer.sources_kept}
    answers = []
    for gate in gates:
        judge = judges.get(gate)
        verdict, reasoning, evidence = judge() if judge else (
            "pass", "not a gate this scripted reviewer knows", [])
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
