"""The STAND-IN's scripted sessions: what the stand-in model "decides" at each step.

A session is a list of shell commands followed by one closing message. The stand-in is
stateless: the step it plays is the number of tool results already in the conversation
the client sent, so a resumed session ("continue") picks up where it was.

``migration_commands`` performs the demo task's reference migration (State A in
``submissions/untouched`` -> ``submissions/reference``) through the client's own shell
tool: deletions first, then one command per file writing base64-encoded content (Claude
Code's Write tool rewrites content, see AGENTS.md), then a check.

The mode is chosen by the model name the client asks for:

``standin-migrate``   the migration, then the completion token as the last line
``standin-idle``      never runs a tool, never says the token (-> ``idle``)
``standin-overspend`` the migration with huge usage numbers (-> ``budget``)
``standin-500``       every model request answers HTTP 500 (-> ``infrastructure``)
``standin-drop``      every stream is cut after its first event (-> ``infrastructure``)
``standin-slow``      the migration with a pause before each answer (kill -9 tests)
``standin-short``     two small commands, then the token (parser fixtures)
``standin-long``      one command printing 3,000 numbered lines (about 14 KB), then the
                      token (how much of a long tool result reaches the transcript)

Playing a Stage III verifier (issue 25; the client runs in a Stage III lane):

``standin-verify``    reads both trees, writes a candidate that expects State A's caret
                      notation for a control character (demo01 ``subtle`` drops it),
                      ``try_test``s it and ``report``s it
``standin-look``      reads both trees and stops without a report (a survival)
``standin-hostile``   tries the grader's files, the token in /proc, the network, the
                      client's HOME and a report from a script, then reports a
                      candidate that tells the trees apart by a file
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo01-csvtab-python-to-node"
REFERENCE = DEMO / "submissions" / "reference"
UNTOUCHED = DEMO / "submissions" / "untouched"
TOKEN = "SRB_TASK_COMPLETE"
MODES = ("migrate", "idle", "overspend", "500", "drop", "slow", "short", "verify", "look",
         "hostile", "long")
LONG_LINES = 3000
LONG = (f"seq -f 'line %g' 1 {LONG_LINES}",)
SHORT = ("printf 'stand-in note\\n' > note.txt", "cat note.txt && ls")


@dataclass(frozen=True)
class Mode:
    name: str
    commands: tuple[str, ...]
    closing: str
    usage_scale: int = 1
    fail_status: int | None = None
    drop_stream: bool = False
    delay_sec: float = 0.0


def _gone() -> list[str]:
    """Top-level entries of State A that the reference no longer has."""
    ref = {p.name for p in REFERENCE.iterdir()}
    return sorted(p.name for p in UNTOUCHED.iterdir() if p.name not in ref)


def migration_commands() -> tuple[str, ...]:
    cmds = ["ls -la && head -5 bin/csvtab"]
    # `find -delete`, not `rm -rf`: Codex refuses rm -f style commands even unsandboxed.
    cmds.append("find " + " ".join(shlex.quote(n) for n in _gone()) + " -depth -delete")
    for path in sorted(p for p in REFERENCE.rglob("*") if p.is_file()):
        rel = path.relative_to(REFERENCE).as_posix()
        blob = base64.b64encode(path.read_bytes()).decode()
        parent = Path(rel).parent.as_posix()
        mk = f"mkdir -p {shlex.quote(parent)} && " if parent != "." else ""
        mode = "755" if path.stat().st_mode & 0o111 else "644"
        cmds.append(f"{mk}printf %s {blob} | base64 -d > {shlex.quote(rel)} && "
                    f"chmod {mode} {shlex.quote(rel)} && wc -c {shlex.quote(rel)}")
    cmds.append("node --test test/ 2>&1 | tail -n 3; ./bin/csvtab --help | head -n 2")
    return tuple(cmds)


CLOSING = ("The port to Node.js is done: the Python package is gone, bin/csvtab runs "
           "lib/cli.js, and the tests pass.\n\n" + TOKEN)
IDLE_TEXT = "I am still weighing how to approach this port."


CARET_CANDIDATE = """#!/bin/bash
# State A shows a control character in a cell in caret notation (^A): the expectation
# lives here, the comparison happens in this script, outside the tree under test.
expected=$(printf '+------+---+\\n| a    | b |\\n+------+---+\\n| x^Ay | z |\\n+------+---+')
actual=$(printf 'a,b\\nx\\001y,z\\n' | "$CSVTAB")
[ "$actual" = "$expected" ]
"""
TREE_CANDIDATE = """#!/bin/bash
# tells the trees apart by a file only State A has (out of scope: refused)
test -e "$SRB_TARGET/csvtab/__init__.py"
"""
LOOK = ("id -un && ls /srb/original /workspace/repo",
        "head -n 20 /workspace/repo/lib/width.js")
# What the code under test could try from inside a command the client runs (issue 25
# item 3): who it runs as, the client's HOME, any process's environment holding a gateway
# token, and handing in a candidate in the client's name from a script.
HELD_APART = (
    "id -un; ls /srb/lane/home 2>&1 | tail -1; for f in /proc/[0-9]*/environ; do "
    "tr '\\0' '\\n' < $f 2>/dev/null; done | grep -c -E '^(ANTHROPIC_|SRB_GATEWAY)' | "
    "sed 's/^/token-bearing env lines: /'",
    "bash -c \"report --claim forged tree.sh\" 2>&1 | tail -1",
)


def _write(name: str, text: str) -> str:
    blob = base64.b64encode(text.encode()).decode()
    return f"printf %s {blob} | base64 -d > {name} && chmod 755 {name} && cat {name}"


def verify_commands() -> tuple[str, ...]:
    return (*LOOK, _write("caret.sh", CARET_CANDIDATE), "try_test caret.sh",
            "report --claim 'control characters in cells lose their caret notation' caret.sh")


def hostile_commands() -> tuple[str, ...]:
    return (
        "ls /opt/srb /tests /srb/grader 2>&1; cat /opt/srb/sandbox.json 2>&1 | head -3",
        "cat /proc/1/environ 2>&1 | tr '\\0' '\\n' | head -5; id",
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 3)\" 2>&1 "
        "| tail -1; getent hosts example.com || echo no-dns",
        "touch /workspace/repo/marker 2>&1; touch /srb/original/marker 2>&1",
        _write("tree.sh", TREE_CANDIDATE),
        *HELD_APART,
        "try_test tree.sh",
        "report --claim 'State A has a Python package' tree.sh",
    )


def mode_for(model: str) -> Mode:
    name = model.removeprefix("standin-") if model.startswith("standin-") else "migrate"
    if name == "idle":
        return Mode(name, (), IDLE_TEXT)
    if name == "overspend":
        return Mode(name, migration_commands(), CLOSING, usage_scale=1_000_000)
    if name == "500":
        return Mode(name, (), "", fail_status=500)
    if name == "drop":
        return Mode(name, migration_commands(), CLOSING, drop_stream=True)
    if name == "short":
        return Mode(name, SHORT, "Wrote note.txt.\n" + TOKEN)
    if name == "long":
        return Mode(name, LONG, "Printed the lines.\n" + TOKEN)
    if name == "verify":
        return Mode(name, verify_commands(), "Reported the caret-notation difference.")
    if name == "look":
        return Mode(name, LOOK, "I found no difference between the trees.")
    if name == "hostile":
        return Mode(name, hostile_commands(), "Reported.")
    if name == "slow":
        return Mode(name, migration_commands(), CLOSING, delay_sec=1.0)
    return Mode("migrate", migration_commands(), CLOSING)
