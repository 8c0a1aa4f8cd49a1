"""``try_test`` and ``report`` in a Stage III client lane (installed under both names).

    try_test FILE|DIR ...            try a candidate on both trees: pass or fail per side
    report [--claim TEXT] FILE|DIR ...   hand in the final candidate with its claim

A FILE is sent under its base name, a DIR as its files' paths relative to it (the
candidate's files, as the published harness's ``try_test``/``report`` tools take them).
srb judges the candidate outside this container; only the per-side result comes back.
"""

from __future__ import annotations

import json
import os
import socket
import sys

SOCKET = "/srb/desk/desk.sock"
MAX_FILES = 64


def _files(args: list[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for arg in args:
        if os.path.isdir(arg):
            for folder, _dirs, names in os.walk(arg):
                for name in sorted(names):
                    path = os.path.join(folder, name)
                    files[os.path.relpath(path, arg)] = path
        elif os.path.isfile(arg):
            files[os.path.basename(arg)] = arg
        else:
            sys.exit(f"{arg}: no such file or folder")
    if not files:
        sys.exit("name the candidate's file(s)")
    if len(files) > MAX_FILES:
        sys.exit(f"a candidate has at most {MAX_FILES} files")
    out = {}
    for rel, path in files.items():
        with open(path, encoding="utf-8", errors="replace") as handle:
            out[rel] = handle.read()
    return out


def main() -> None:
    tool = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if tool not in ("try_test", "report") or not args or args[0] in ("-h", "--help"):
        sys.exit(__doc__)
    request: dict[str, object] = {"tool": tool}
    if tool == "report" and args[0] == "--claim":
        if len(args) < 2:
            sys.exit("--claim needs a text")
        request["claim"], args = args[1], args[2:]
    request["files"] = _files(args)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(SOCKET)
    conn.sendall((json.dumps(request) + "\n").encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    try:
        text = json.loads(data).get("text", "")
    except ValueError:
        text = "srb gave no answer"
    print(text)
    sys.exit(0 if not text.startswith("refused") else 1)


if __name__ == "__main__":
    main()
