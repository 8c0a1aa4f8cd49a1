#!/usr/bin/env python3
"""A scripted Stage III adversary (JSON lines on stdin/stdout) whose candidate reads the
tree instead of running it: the first line of the entry point names python on State A and
node on the port, so ``head | grep`` passes on State A and fails on the faithful port
(issue 32, item 6). It reports that candidate whatever the try said; the stage's own
adjudication decides."""

import json
import sys

CANDIDATES = {
    "peek": """#!/bin/bash
set -u
head -n 1 "$CSVTAB" | grep -q python
""",
    # runs the program once (so the exec boundary starts one), then reads the entry point
    "run-then-peek": """#!/bin/bash
set -u
"$CSVTAB" --help > /dev/null 2>&1
head -n 1 "$CSVTAB" | grep -q python
""",
}
CANDIDATE = CANDIDATES[sys.argv[1] if len(sys.argv) > 1 else "peek"]


def read() -> dict:
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    start = read()
    assert start.get("type") == "start", start
    send({"tool": "try_test", "args": {"files": {"candidate.sh": CANDIDATE}}})
    tried = read()
    verdict = tried.get("result", {}).get("outcome", "?")
    send({"report": {
        "found": True,
        "summary": f"the port's entry point is not python (try: {verdict})",
        "claim": "State A's entry point starts with a python shebang",
        "files": {"candidate.sh": CANDIDATE},
    }})
    read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
