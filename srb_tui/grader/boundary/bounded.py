"""Answer one tool call in a forked child that is killed at a wall-clock limit.

The reviewer's and adversaries' reading tools run over submission content, which can be
built to make a regular expression (or a diff) run for minutes. The tools loop answers each
call in a child of its own: the child writes its JSON reply to a pipe; when no complete reply
arrives in time, the child is killed and the call answers ``truncated`` / ``timed_out``
instead of holding the review up.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Callable
from typing import Any


def call_in_child(answer: Callable[[], dict[str, Any]], tool: str, limit: float) -> dict[str, Any]:
    """``answer()`` computed in a forked child within ``limit`` seconds."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: answer, write the reply, leave without cleanup
        os.close(read_end)
        code = 0
        try:
            data = json.dumps(answer()).encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit
    finished = False
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if not finished:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if not finished:
        return {
            "ok": True,
            "result": {
                "truncated": True,
                "timed_out": True,
                "matches": [],
                "note": f"{tool} stopped after {limit:g} s",
            },
        }
    try:
        reply = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return {"ok": False, "error": f"{tool} failed: its answer was cut off"}
    return reply if isinstance(reply, dict) else {"ok": False, "error": f"{tool} failed"}
