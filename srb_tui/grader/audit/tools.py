"""Reviewer tools over two read-only roots, and the JSON-lines loop that serves them.

Roots are named ``original`` (State A) and ``submission`` (alias ``workspace``); every path
argument is a ``"root:rel"`` string. Each path is resolved (symlinks followed) and must stay
inside its root: ``..`` and links pointing out are refused. Tools: ``list_dir``,
``fetch_source`` (line range, size cap), ``search`` (regex + glob, result cap), ``diff`` (the
same relative path in both roots, unified), ``run`` (argv whose basename is allowlisted, no
shell, timeout; as the submission uid, see :mod:`..boundary.sandbox`) and the host-only
``check_evidence`` used to re-check citations.

Every call is bounded, whatever the submission holds: ``search`` applies its pattern to
windows of at most ``search_window_chars`` of a line (a 2 MB one-line file costs as much as
2,000 short lines, never a regex over the whole line) and stops at ``call_timeout_sec``
with ``truncated`` and ``timed_out`` set; files over the size caps are listed as skipped,
not read; and the loop runs each call in a forked child it kills at the wall-clock limit
(plus a small margin), so not even one pathological window can hold the reviewer up.

The loop (`serve`) reads one request per line, ``{"id", "tool", "args"}``, and writes one
reply per line, ``{"id", "ok": true, "result"}`` or ``{"id", "ok": false, "error"}``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from ..boundary import sandbox
from ..boundary.bounded import call_in_child
from ..boundary.procs import run_group
from .files import ROOT_NAMES, ReviewRoots, ToolError, ToolLimits, collapse

REVIEWER_TOOLS = ("list_dir", "fetch_source", "search", "diff", "run")
HOST_TOOLS = ("check_evidence", "describe")
BOUNDED_TOOLS = ("list_dir", "fetch_source", "search", "diff", "check_evidence")


class Toolbox(ReviewRoots):
    """The reviewer's tools over two roots: the read-only ones of :class:`.ReviewRoots`,
    ``run`` (allowlisted programs, as the submission uid) and the dispatch that bounds each
    call. Construct once per review; every call is independent."""

    def run(
        self,
        argv: Sequence[str],
        root: str = "submission",
        cwd: str = "",
        timeout_sec: float | None = None,
    ) -> dict[str, Any]:
        """Run an allowlisted program (no shell) with cwd inside a root."""
        if not self.allow:
            raise ToolError("no commands are allowed in this review")
        if (
            not isinstance(argv, list | tuple)
            or not argv
            or not all(isinstance(part, str) for part in argv)
        ):
            raise ToolError("argv must be a non-empty list of strings")
        program = argv[0]
        if "/" in program or Path(program).name not in self.allow:
            raise ToolError(
                f"{program!r} is not allowed; allowed: {', '.join(self.allow)} (bare names only)"
            )
        executable = shutil.which(program)
        if executable is None:
            raise ToolError(f"{program!r} is not installed")
        root_name, workdir, _ = self.resolve(f"{root}:{cwd}")
        if sandbox.enabled() and root_name != "submission":
            raise ToolError("run works in the submission's tree only")
        if not workdir.is_dir():
            raise ToolError(f"cwd {root}:{cwd} is not a folder")
        limit = self.limits.run_timeout_sec
        timeout = limit if timeout_sec is None else max(0.1, min(float(timeout_sec), limit))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tempfile.gettempdir(),
            "LC_ALL": "C.UTF-8",
            "TZ": "UTC",
        }
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            if sandbox.enabled():
                dirs = sandbox.make_slot_dirs(0, ("home", "tmp"))
                env = sandbox.submission_env(env, home=str(dirs["home"]), tmpdir=str(dirs["tmp"]))
                code, timed_out, _, start_error, _ = sandbox.run_in_slot(
                    [executable, *argv[1:]], slot=0, cwd=str(workdir), env=env,
                    timeout_sec=timeout, stdout=out, stderr=err, grace_sec=1.0,
                )
            else:
                done = run_group(
                    [executable, *argv[1:]], cwd=str(workdir), env=env, timeout_sec=timeout,
                    stdout=out, stderr=err, grace_sec=1.0,
                )
                code, timed_out, start_error = done.returncode, done.timed_out, done.start_error
            captured = []
            for handle in (out, err):
                handle.seek(0)
                data = handle.read(self.limits.run_output_bytes + 1)
                captured.append(data)
        if start_error is not None:
            raise ToolError(f"could not start {program!r}: {start_error}")
        cap = self.limits.run_output_bytes
        return {
            "argv": list(argv),
            "exit_code": code,
            "timed_out": timed_out,
            "stdout": captured[0][:cap].decode("utf-8", "replace"),
            "stderr": captured[1][:cap].decode("utf-8", "replace"),
            "truncated": any(len(data) > cap for data in captured),
        }

    def check_evidence(self, path: object, line: object, quote: object) -> dict[str, Any]:
        """Re-check one citation: the path resolves and is a file, the line is in range, and
        the quote (whitespace-collapsed, lower-cased) occurs within ±3 lines of it."""
        try:
            root_name, file, rel = self.resolve(path)
        except ToolError as exc:
            return {"grounded": False, "reason": str(exc)}
        label = self.ref(root_name, rel)
        if not file.is_file():
            return {"grounded": False, "reason": f"{label} does not exist or is not a file"}
        number = _as_line(line)
        if number is None:
            return {"grounded": False, "reason": f"line {line!r} is not a line number"}
        if not isinstance(quote, str) or not collapse(quote):
            return {"grounded": False, "reason": "the citation has no quote"}
        try:
            lines = self._read_text(file, label).splitlines()
        except ToolError as exc:
            return {"grounded": False, "reason": str(exc)}
        if not 1 <= number <= len(lines):
            return {
                "grounded": False,
                "reason": f"line {number} is out of range ({label} has {len(lines)} lines)",
            }
        window = "\n".join(lines[max(0, number - 4) : number + 3])
        if collapse(quote) in collapse(window):
            return {"grounded": True, "reason": ""}
        return {"grounded": False, "reason": f"quote not found within 3 lines of {label}:{number}"}

    def describe(self) -> dict[str, Any]:
        """What this toolbox offers (tool names and the allowed commands)."""
        tools = [name for name in REVIEWER_TOOLS if name != "run" or self.allow]
        return {
            "tools": tools,
            "allowed_commands": list(self.allow),
            "roots": {name: str(path) for name, path in self.roots.items()},
        }

    # ------------------------------------------------------------------ dispatch

    def call(self, tool: object, args: object) -> dict[str, Any]:
        """Dispatch one call: ``{"ok": true, "result"}`` or ``{"ok": false, "error"}``."""
        handlers: dict[str, Callable[..., dict[str, Any]]] = {
            "list_dir": self.list_dir,
            "fetch_source": self.fetch_source,
            "search": self.search,
            "diff": self.diff,
            "run": self.run,
            "check_evidence": self.check_evidence,
            "describe": self.describe,
        }
        handler = handlers.get(tool) if isinstance(tool, str) else None
        if handler is None:
            return {"ok": False, "error": f"unknown tool {tool!r}; known: {', '.join(handlers)}"}
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return {"ok": False, "error": "args must be an object"}
        if tool in BOUNDED_TOOLS and self.fork_calls:
            return self._bounded(handler, args)
        return self._direct(str(tool), handler, args)

    fork_calls = True

    def _direct(
        self, tool: str, handler: Callable[..., dict[str, Any]], args: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            return {"ok": True, "result": handler(**args)}
        except ToolError as exc:
            return {"ok": False, "error": str(exc)}
        except TypeError as exc:
            return {"ok": False, "error": f"bad arguments for {tool}: {exc}"}
        except (ValueError, OSError) as exc:
            return {"ok": False, "error": f"{tool} failed: {exc}"}

    def _bounded(
        self, handler: Callable[..., dict[str, Any]], args: dict[str, Any]
    ) -> dict[str, Any]:
        """Answer the call in a forked child, killed when it runs past the wall clock."""
        tool = getattr(handler, "__name__", "tool")
        return call_in_child(
            lambda: self._direct(tool, handler, args), tool, self.limits.call_timeout_sec + 5.0
        )


def _as_line(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def handle_request(toolbox: Toolbox, line: str) -> dict[str, Any]:
    """Answer one request line of the loop protocol."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"id": None, "ok": False, "error": f"request is not valid JSON: {exc}"}
    if not isinstance(request, dict):
        return {"id": None, "ok": False, "error": "request must be a JSON object"}
    reply = toolbox.call(request.get("tool"), request.get("args"))
    return {"id": request.get("id"), **reply}


def serve(toolbox: Toolbox, stdin: IO[str], stdout: IO[str]) -> int:
    """The request/response loop: one JSON request per line in, one reply per line out."""
    for line in stdin:
        if not line.strip():
            continue
        reply = handle_request(toolbox, line)
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


__all__ = [
    "HOST_TOOLS",
    "REVIEWER_TOOLS",
    "ROOT_NAMES",
    "ToolError",
    "ToolLimits",
    "Toolbox",
    "collapse",
    "handle_request",
    "serve",
]
