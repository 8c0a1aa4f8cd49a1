"""The shell of a Stage III client lane: where a command the client runs goes.

Installed twice in the lane: ``srb-run SCRIPT`` (Claude Code's ``CLAUDE_CODE_SHELL_PREFIX``
puts it before every shell command it runs, the whole command as one argument) and
``bash`` in a folder first on Codex's PATH and named as its shell (``bash -lc SCRIPT``).
It runs as the client. A command that is exactly one call of srb's ``try_test`` or
``report`` (no other shell syntax) runs here, as the client, so the desk credits it to the
client; every other command is sent to srb's desk, which runs it as the runner uid and
streams its output back (see desk.py). So the code under test, which only ever runs
inside such a command, never runs as the client: it cannot read the client's files,
transcript, memory or gateway token, nor try or report a candidate in its name.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import socket
import sys

SOCKET = "/srb/desk/desk.sock"
OWN = ("try_test", "report")
OPERATORS = set(";&|<>(){}\n")
BASH = "/bin/bash"


def _parse(argv: list[str]) -> tuple[str | None, bool]:
    """(script, login) from ``srb-run SCRIPT`` or ``bash [-l] -c SCRIPT`` / ``-lc``."""
    name = os.path.basename(argv[0])
    args = argv[1:]
    if name != "bash":
        return (args[-1] if args else ""), False
    login = False
    while args and args[0].startswith("-") and args[0] != "--":
        flag = args.pop(0)
        login = login or "l" in flag
        if "c" in flag:
            return (args[0] if args else ""), login
    return None, login  # ``bash FILE …`` (or bare)


def _own_call(script: str) -> bool:
    """Whether ``script`` is one plain call of try_test/report (Claude Code wraps the
    command as ``… && eval 'COMMAND' < /dev/null && pwd -P >| FILE``)."""
    try:
        words = shlex.split(script)
    except ValueError:
        return False
    command = script
    if "eval" in words:
        at = words.index("eval")
        command = words[at + 1] if at + 1 < len(words) else ""
    if not command.strip() or not _plain(command.strip()):
        return False
    try:
        first = shlex.split(command)
    except ValueError:
        return False
    return bool(first) and first[0] in OWN


def _plain(command: str) -> bool:
    """No expansion (``$``, backquote) outside single quotes, no operator or redirection
    outside quotes: the words are all the command does."""
    quote: str | None = None
    for char in command:
        if quote == "'":
            quote = None if char == "'" else quote
        elif char in "$`":
            return False
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in OPERATORS:
            return False
    return quote is None


def _forward(script: str, login: bool) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(SOCKET)
    except OSError as exc:
        sys.stderr.write(f"srb's desk is not answering ({exc})\n")
        return 125
    request = {"tool": "exec", "script": script, "login": login, "cwd": os.getcwd()}
    conn.sendall((json.dumps(request) + "\n").encode())
    buffered = b""
    out, err = sys.stdout.buffer, sys.stderr.buffer
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            sys.stderr.write("srb's desk closed the command\n")
            return 125
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if "x" in doc:
                out.flush()
                err.flush()
                return int(doc["x"])
            if "text" in doc:  # a refusal
                err.write((str(doc["text"]) + "\n").encode())
                err.flush()
                return 126
            target = out if "o" in doc else err
            target.write(base64.b64decode(doc.get("o") or doc.get("e") or ""))
            target.flush()


def main() -> None:
    script, login = _parse(sys.argv)
    if script is None:  # ``bash FILE …``: that too runs as the runner
        script = shlex.join([BASH, *sys.argv[1:]])
    elif _own_call(script):
        os.execv(BASH, [BASH, "-lc" if login else "-c", script])
    sys.exit(_forward(script, login))


if __name__ == "__main__":
    main()
