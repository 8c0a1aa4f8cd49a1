#!/usr/bin/env python3
"""A scripted Stage III adversary for the ladder tests (JSON lines on stdin/stdout).

It lists the submission through the reading tools, tries one candidate with ``try_test``
(a control character must come out in caret notation, as State A prints it) and reports
that candidate whatever the try said, so the stage's own adjudication decides.
"""

import json
import sys

CANDIDATE = """#!/bin/bash
set -u
out=$(printf 'x\\001y\\n' | "$CSVTAB" -H)
case "$out" in
  *'x^Ay'*) exit 0 ;;
  *) echo "no caret notation in: $out" >&2; exit 1 ;;
esac
"""


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
    send({"tool": "list_dir", "args": {"path": "submission:", "depth": 1}})
    listing = read()
    names = [e["path"] for e in listing.get("result", {}).get("entries", [])]
    send({"tool": "try_test", "args": {"files": {"candidate.sh": CANDIDATE}}})
    tried = read()
    verdict = tried.get("result", {}).get("outcome", "?")
    send(
        {
            "report": {
                "found": True,
                "summary": f"control characters lose caret notation (try: {verdict}; "
                f"saw {len(names)} entries)",
                "claim": "State A prints ^A for byte 0x01 in a table cell",
                "files": {"candidate.sh": CANDIDATE},
            }
        }
    )
    read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
