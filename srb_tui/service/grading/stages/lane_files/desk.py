"""srb's desk in a Stage III client lane (runs as root in the lane container).

    desk.py SOCKET CLIENT_UID RUNNER_UID RUNNER_HOME ALLOWED_DIR...

Listens on a Unix socket for three requests, each from a caller whose uid it reads from
the socket (SO_PEERCRED):

* ``try_test`` and ``report`` from the client's own uid only: handed to srb as one JSON
  line on stdout, answered with srb's reply line from stdin (one at a time). A program the
  client started runs as the runner uid, so the code under test cannot hand in or try a
  candidate in the client's name.
* ``exec`` (from the client's uid): a shell command the client runs (Claude Code's shell
  prefix, Codex's shell) is run here as the runner uid, in a session of its own, with
  the desk's environment (no gateway token: the client alone holds it), HOME its own and
  a working folder among ALLOWED_DIR; its output streams back as JSON lines
  (``{"o"|"e": base64}``, then ``{"x": exit code}``). The runner cannot enter the client's
  HOME (0700), read its transcript or config, or read its processes' memory or
  environment. The caller going away kills the command's process group.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

MAX_REQUEST = 4 * 1024 * 1024
LOCK = threading.Lock()
SETTINGS: dict[str, Any] = {}


def _reply(conn: socket.socket, text: str) -> None:
    conn.sendall((json.dumps({"text": text}) + "\n").encode())


def serve(conn: socket.socket, number: int) -> None:
    with conn:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
            if len(data) > MAX_REQUEST:
                _reply(conn, "refused: the request is over 4 MiB")
                return
        try:
            request = json.loads(data)
        except ValueError:
            _reply(conn, "refused: the request is not JSON")
            return
        if not isinstance(request, dict):
            _reply(conn, "refused: the request is not an object")
            return
        if uid != SETTINGS["client"]:
            _reply(conn, "refused: try_test and report count only when the client runs them "
                         "itself, as a command of their own (not from a script or a program "
                         "it started)")
            return
        if request.get("tool") == "exec":
            _exec(conn, request)
            return
        with LOCK:
            sys.stdout.write(json.dumps({**request, "id": number, "uid": uid}) + "\n")
            sys.stdout.flush()
            answer = sys.stdin.readline()
        if not answer:
            _reply(conn, "refused: srb closed the desk")
            return
        conn.sendall(answer.encode() if answer.endswith("\n") else (answer + "\n").encode())


def _working_folder(asked: object) -> str:
    """``asked`` when it lies in an allowed folder, else the first allowed folder (the
    chdir happens as root: a folder inside the client's HOME must never be entered)."""
    real = os.path.realpath(str(asked or ""))
    for allowed in SETTINGS["dirs"]:
        if real == allowed or real.startswith(allowed.rstrip("/") + "/"):
            return real
    return str(SETTINGS["dirs"][0])


def _exec(conn: socket.socket, request: dict[str, Any]) -> None:
    send = threading.Lock()

    def frame(doc: dict[str, object]) -> None:
        with send, contextlib.suppress(OSError):
            conn.sendall((json.dumps(doc) + "\n").encode())

    env = dict(os.environ)
    env.update(HOME=SETTINGS["home"], PATH=SETTINGS["bin"] + ":" + env.get(
        "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"))
    flags = "-lc" if request.get("login") else "-c"
    try:
        proc = subprocess.Popen(
            ["/bin/bash", flags, str(request.get("script") or "")], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            cwd=_working_folder(request.get("cwd")), user=SETTINGS["runner"],
            group=SETTINGS["runner"], extra_groups=[], umask=0, start_new_session=True)
    except OSError as exc:
        frame({"e": base64.b64encode(f"srb could not run the command: {exc}\n".encode())
               .decode()})
        frame({"x": 126})
        return

    def pump(stream: io.BufferedReader, key: str) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            frame({key: base64.b64encode(chunk).decode()})

    def watch() -> None:  # the caller went away (its client killed it): so does the command
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)

    pumps = [threading.Thread(target=pump, args=(proc.stdout, "o"), daemon=True),
             threading.Thread(target=pump, args=(proc.stderr, "e"), daemon=True)]
    for thread in pumps:
        thread.start()
    threading.Thread(target=watch, daemon=True).start()
    code = proc.wait()
    for thread in pumps:  # a background child may hold the pipes open: do not wait on it
        thread.join(timeout=1.0)
    frame({"x": code})


def main() -> None:
    path = sys.argv[1]
    SETTINGS.update(client=int(sys.argv[2]), runner=int(sys.argv[3]), home=sys.argv[4],
                    dirs=[os.path.realpath(d) for d in sys.argv[5:]],
                    bin=os.path.dirname(os.path.abspath(__file__)) + "/bin")
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)
    server.listen(8)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    number = 0
    while True:
        conn, _ = server.accept()
        number += 1
        threading.Thread(target=serve, args=(conn, number), daemon=True).start()


if __name__ == "__main__":
    main()
