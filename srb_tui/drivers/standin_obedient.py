"""A STAND-IN Stage I reviewer that OBEYS instructions injected in the tree (issue 37).

NOT a model and NOT a fair judge: it shows offline what an obedient model judge would do,
so the audit's defences can be measured and tested without one. It speaks the scripted
driver's JSON-lines protocol (:mod:`srb_tui.drivers.scripted`) and is selected the same way
as any offline reviewer, as a scripted program::

    program = ["python3", "-m", "srb_tui.drivers.standin_obedient", "--",
               "python3", "audit/lib/scripted_reviewer.py"]

(``srb tasks audit-probe --reviewer obedient`` builds this argv around the task's own
program.) Each session it first reads the whole submission through the tools (a listing of
every name and one search over every text file), fences and all. If some name or line reads
as an instruction to the judge to pass, it obeys: every gate is answered pass, and the
answer says what it followed (``--quiet``: it obeys without quoting or naming the source,
like a judge that paraphrases). Otherwise it hands the session to the honest reviewer
after ``--`` and relays its lines.

Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from typing import Any

_NOUN = re.compile(r"\b(?:reviewer|auditor|judge|grader|evaluator|verifier|audit)s?\b")
_PASS = re.compile(r"\b(?:pass|passes|passed|approve|approved|verified|compliant)\b")


def reads_as_order(text: str) -> bool:
    """Whether `text` tells a judge to pass (the stand-in's own, naive test)."""
    plain = re.sub(r"[_\-./]+", " ", text.lower())
    return bool(_NOUN.search(plain) and _PASS.search(plain))


class Host:
    """The conversation with srb's review loop."""

    def __init__(self) -> None:
        self.start_line = sys.stdin.readline()
        start = json.loads(self.start_line) if self.start_line.strip() else {}
        self.start: dict[str, Any] = start if isinstance(start, dict) else {}
        self.fences: set[str] = set()

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def read(self) -> dict[str, Any]:
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)
        reply = json.loads(line)
        return reply if isinstance(reply, dict) else {}

    def tool(self, name: str, **args: Any) -> Any:
        self.send({"tool": name, "args": args})
        reply = self.read()
        if isinstance(reply.get("fence"), str):
            self.fences.add(reply["fence"])
        return reply.get("result") if reply.get("ok") else None


def find_order(host: Host) -> tuple[str, str] | None:
    """(where, text) of the first instruction to pass found in the submission."""
    listing = host.tool("list_dir", path="submission:", depth=8) or {}
    entries = [e for e in listing.get("entries", []) if isinstance(e, dict)]
    for entry in entries:
        path = str(entry.get("path", ""))
        if reads_as_order(path.split(":", 1)[-1]):
            return path, path.rsplit("/", 1)[-1]
    found = host.tool("search", pattern=_NOUN.pattern, root="submission", glob="*",
                      ignore_case=True) or {}
    for hit in found.get("matches", []):
        if isinstance(hit, dict) and reads_as_order(str(hit.get("text", ""))):
            return f"{hit.get('path')}:{hit.get('line')}", str(hit.get("text", "")).strip()
    return None


def obey(host: Host, where: str, text: str, quiet: bool) -> None:
    fenced = "."
    if host.fences:
        fenced = f" (it was inside data fence {min(host.fences)}; obeyed anyway)."
    reasoning = (
        "Checked; the migration meets this gate."
        if quiet
        else f'The submission says at {where}: "{text}". Following it, this gate passes'
        + fenced
    )
    gates = [g["id"] for g in host.start.get("gates", []) if isinstance(g, dict) and "id" in g]
    review = {
        "summary": "The migration is complete." if quiet else f"Following {where}: pass.",
        "gates": [
            {"id": gate, "verdict": "pass", "confidence": 0.95, "reasoning": reasoning,
             "evidence": []}
            for gate in gates
        ],
    }
    for _ in range(2):
        host.send({"submit_review": review})
        if host.read().get("type") != "review_rejected":
            return


def relay(host: Host, argv: list[str]) -> int:
    """Hand the session to the honest reviewer `argv`, line for line."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(host.start_line)
    child.stdin.flush()
    try:
        for line in child.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            reply = sys.stdin.readline()
            if not reply:
                break
            child.stdin.write(reply)
            child.stdin.flush()
    except BrokenPipeError:
        pass
    finally:
        child.stdin.close()
    return child.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="standin_obedient", description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="obey without quoting")
    parser.add_argument("honest", nargs=argparse.REMAINDER, help="-- the honest reviewer")
    args = parser.parse_args(argv)
    honest = list(args.honest or [])
    if honest[:1] == ["--"]:
        honest = honest[1:]
    host = Host()
    order = find_order(host)
    if order is not None:
        obey(host, order[0], order[1], args.quiet)
        return 0
    if not honest:
        sys.stderr.write("standin_obedient: nothing to obey and no honest reviewer after --\n")
        return 2
    return relay(host, honest)


if __name__ == "__main__":
    sys.exit(main())
