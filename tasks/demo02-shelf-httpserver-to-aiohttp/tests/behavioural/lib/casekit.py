"""Shared code of the shelf behavioural modules.

Every module is one list of HTTP requests (data/cases/<module>.json), sent in order to one
freshly started server of the tree under test (``$SRB_REPO/bin/shelf --host 127.0.0.1
--port P``) and compared with the answers recorded from State A (data/expected/<module>.json):
the status, the body byte for byte, and the headers that matter (Content-Type,
Content-Length, Location, Allow). Requests run in order because some change the catalogue
(POST, DELETE) and later ones see that.

The server is started through srb's launcher ($SRB_SUBMISSION_RUN, the module contract's
srb-submission): as the submission's own uid, with a clean environment, unable to read this
suite or its recorded answers. The module stops it by signalling the launcher, which ends the
server's whole session. Without $SRB_SUBMISSION_RUN (a developer's host, record.py) the
server is started directly, in a session of its own that is killed the same way.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COMPARED_HEADERS = ("content-type", "content-length", "location", "allow")
REQUEST_TIMEOUT_SEC = 10.0
START_TIMEOUT_SEC = 20.0
SHOWN_BYTES = 1500


def suite_dir() -> Path:
    """The suite directory: $SRB_SUITE_DIR, else this file's grandparent."""
    env = os.environ.get("SRB_SUITE_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent


def load_cases(module: str) -> list[dict[str, Any]]:
    path = suite_dir() / "data" / "cases" / f"{module}.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["cases"])


def load_expected(module: str) -> dict[str, dict[str, Any]]:
    path = suite_dir() / "data" / "expected" / f"{module}.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["cases"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One running shelf server of a tree, stopped whole by :meth:`stop`."""

    def __init__(self, repo: Path, work: Path, lifetime: float) -> None:
        self.port = free_port()
        argv = [str(repo / "bin" / "shelf"), "--host", "127.0.0.1", "--port", str(self.port)]
        run = os.environ.get("SRB_SUBMISSION_RUN")
        work.mkdir(parents=True, exist_ok=True)
        self.log_path = work / "server.log"
        log = self.log_path.open("wb")
        if run:
            argv = [run, "--timeout", f"{lifetime:g}", "--", *argv]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True, env=dict(os.environ))
        log.close()

    def wait_ready(self, timeout: float) -> str | None:
        """None once the port accepts connections; else why the server is not serving."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"the server exited with status {self.proc.returncode}: {self.log_tail()}"
            with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", self.port), timeout=0.5
            ):
                return None
            time.sleep(0.02)
        return f"the server did not listen on port {self.port} within {timeout:g} s"

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_bytes()[-600:].decode("utf-8", "replace").strip()
        return ""

    def stop(self) -> None:
        """SIGTERM the launcher (it ends the server's session) or the session itself."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.environ.get("SRB_SUBMISSION_RUN"):
                    os.kill(self.proc.pid, signal.SIGTERM)
                else:
                    os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if not os.environ.get("SRB_SUBMISSION_RUN"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


def send(port: int, case: dict[str, Any]) -> dict[str, Any]:
    """One request on a fresh connection; status, compared headers and body (or an error)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_SEC)
    body = case.get("body")
    data = None if body is None else body.encode("utf-8", "surrogateescape")
    if case.get("body_repeat"):
        data = (data or b"") * int(case["body_repeat"])
    try:
        conn.putrequest(case["method"], case["target"], skip_accept_encoding=True)
        for name, value in case.get("headers", {}).items():
            conn.putheader(name, value)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        reply = conn.getresponse()
        got = reply.read()
        headers = {
            k.lower(): v for k, v in reply.getheaders() if k.lower() in COMPARED_HEADERS
        }
        return {"status": reply.status, "headers": dict(sorted(headers.items())),
                "body": got.decode("utf-8", "surrogateescape")}
    except (OSError, http.client.HTTPException) as exc:
        return {"status": None, "headers": {}, "body": "", "error": type(exc).__name__}
    finally:
        conn.close()


def describe(case: dict[str, Any]) -> str:
    line = f"{case['method']} {case['target']}"
    if case.get("headers"):
        line += " " + json.dumps(case["headers"], ensure_ascii=False)
    if case.get("body") is not None:
        line += f" body {case['body'][:200]!r}" + (
            f" x{case['body_repeat']}" if case.get("body_repeat") else "")
    return line


def _show(text: str) -> str:
    return text[:SHOWN_BYTES] + ("…[truncated]" if len(text) > SHOWN_BYTES else "")


def judge(case: dict[str, Any], want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    problems = []
    if got.get("error"):
        problems.append(f"no response ({got['error']})")
    elif got["status"] != want["status"]:
        problems.append(f"status {got['status']}, expected {want['status']}")
    if not got.get("error"):
        for name in COMPARED_HEADERS:
            if got["headers"].get(name) != want["headers"].get(name):
                problems.append(f"{name} {got['headers'].get(name)!r}, "
                                f"expected {want['headers'].get(name)!r}")
        if got["body"] != want["body"]:
            problems.append("body differs")
    check: dict[str, Any] = {
        "id": case["id"],
        "verdict": "fail" if problems else "pass",
        "summary": "; ".join(problems) or "status, headers and body match",
    }
    if problems:
        check["detail"] = (f"request: {describe(case)}\nexpected {want['status']} "
                           f"{json.dumps(want['headers'])}\n{_show(want['body'])}\n"
                           f"actual {got.get('status')} {json.dumps(got.get('headers'))}\n"
                           f"{_show(got.get('body', ''))}")
    return check


def write_result(path: Path, checks: list[dict[str, Any]], meta: dict[str, Any],
                 notes: list[str]) -> None:
    payload = {"checks": checks, "metadata": meta, "notes": notes}
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".result-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=1)
    os.replace(tmp, path)


def run_cases(repo: Path, module: str, work: Path, deadline: float) -> tuple[
        list[tuple[dict[str, Any], dict[str, Any] | None]], str | None]:
    """Start a server, send every case, stop it: [(case, response or None)], start error."""
    cases = load_cases(module)
    server = Server(repo, work, max(5.0, deadline - time.time()))
    try:
        error = server.wait_ready(min(START_TIMEOUT_SEC, max(1.0, deadline - time.time())))
        if error is not None:
            return [(case, None) for case in cases], error
        out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for case in cases:
            if time.time() > deadline - 2.0:
                out.append((case, None))
                continue
            out.append((case, send(server.port, case)))
        return out, None
    finally:
        server.stop()


def run_module(module: str) -> int:
    """Entry point of every module's run.py."""
    repo = Path(os.environ["SRB_REPO"])
    result = Path(os.environ["SRB_RESULT"])
    work = Path(os.environ.get("SRB_WORK") or tempfile.mkdtemp(prefix="shelf-suite-"))
    deadline = float(os.environ.get("SRB_MODULE_DEADLINE") or time.time() + 3600)
    expected = load_expected(module)
    answers, start_error = run_cases(repo, module, work / module, deadline)
    meta: dict[str, Any] = {"module": module, "cases": len(answers)}
    notes = [f"server did not start: {start_error}"] if start_error else []
    checks: list[dict[str, Any]] = []
    for case, got in answers:
        if case["id"] not in expected:
            checks.append({"id": case["id"], "verdict": "error",
                           "summary": "no recorded expectation for this case"})
        elif got is None:
            checks.append({"id": case["id"], "verdict": "fail",
                           "summary": start_error or "not run: module deadline reached"})
        else:
            checks.append(judge(case, expected[case["id"]], got))
    write_result(result, checks, meta, notes)
    return 0


if __name__ == "__main__":
    sys.exit(run_module(sys.argv[1]))
