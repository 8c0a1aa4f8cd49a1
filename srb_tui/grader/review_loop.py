"""Drive a reviewer *program* through the tool loop, in-process (offline reviews and tests).

A reviewer program talks JSON lines on stdin/stdout, like a model driving tools:

* host → reviewer, first line: ``{"type": "start", "prompt", "gates": [{id, title, question,
  required}], "tools": [names]}``
* reviewer → host: ``{"tool": NAME, "args": {...}}``; host → reviewer: ``{"type":
  "tool_result", "ok": bool, "result" | "error"}``
* reviewer → host: ``{"submit_review": {...}}``; host → reviewer: ``{"type":
  "review_accepted"}`` (then stdin closes) or ``{"type": "review_rejected", "message"}`` once,
  after which one resubmit is allowed.

`run_reviewer` returns the accepted review or why there is none; `review_samples` runs it
`samples` times and grades each with the evidence re-check.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from .audit_tools import REVIEWER_TOOLS, Toolbox
from .procs import reap_group
from .review import Gate, ReviewIntake, SampleGrade, grade_sample, unusable_sample

ToolCaller = Callable[[str, Any], Mapping[str, Any]]


@dataclass
class LoopOutcome:
    """How one reviewer session ended."""

    status: str
    """accepted | unusable"""
    review: Any = None
    reason: str = ""
    steps: int = 0
    rejections: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)


def _reader(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_reviewer(
    argv: Sequence[str],
    *,
    tools: ToolCaller,
    gates: Sequence[Gate],
    prompt: str = "",
    tool_names: Sequence[str] = REVIEWER_TOOLS,
    timeout_sec: float = 300.0,
    max_steps: int = 500,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> LoopOutcome:
    """Run one reviewer program to its review (or to the reason it has none)."""
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except OSError as exc:
        return LoopOutcome("unusable", reason=f"reviewer could not start: {exc}")
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    intake = ReviewIntake(gates)
    outcome = LoopOutcome("unusable")
    deadline = time.monotonic() + timeout_sec

    def send(message: Mapping[str, Any]) -> bool:
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    start = {
        "type": "start",
        "prompt": prompt,
        "gates": [
            {"id": g.id, "title": g.title, "question": g.question, "required": g.required}
            for g in gates
        ],
        "tools": list(tool_names),
    }
    try:
        send(start)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome.reason = f"reviewer ran out of time ({timeout_sec:g} s)"
                break
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                outcome.reason = f"reviewer ran out of time ({timeout_sec:g} s)"
                break
            if line is None:
                outcome.reason = "reviewer exited without an accepted review"
                break
            if not line.strip():
                continue
            outcome.steps += 1
            if outcome.steps > max_steps:
                outcome.reason = f"reviewer exceeded {max_steps} steps"
                break
            try:
                message = json.loads(line)
            except ValueError as exc:
                send({"type": "error", "error": f"not valid JSON: {exc}"})
                continue
            if not isinstance(message, dict):
                send({"type": "error", "error": "each line must be a JSON object"})
                continue
            if "submit_review" in message:
                review = message["submit_review"]
                verdict, text = intake.offer(review)
                outcome.transcript.append({"submit_review": review, "intake": verdict})
                if verdict == "accepted":
                    outcome.status, outcome.review = "accepted", review
                    send({"type": "review_accepted"})
                    break
                if verdict == "rejected":
                    outcome.rejections += 1
                    send({"type": "review_rejected", "message": text})
                    continue
                outcome.reason = text
                send({"type": "review_unusable", "message": text})
                break
            tool = message.get("tool")
            if tool not in tool_names:
                reply: Mapping[str, Any] = {"ok": False, "error": f"tool {tool!r} is not offered"}
            else:
                reply = tools(str(tool), message.get("args", {}))
            outcome.transcript.append({"tool": tool, "args": message.get("args"), **reply})
            send({"type": "tool_result", **reply})
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):  # a finished reviewer may exit
            proc.wait(timeout=2.0 if outcome.status == "accepted" else 0.2)
        reap_group(proc.pid, grace_sec=1.0)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    outcome.rejections = intake.rejections
    return outcome


def review_samples(
    argv: Sequence[str],
    toolbox: Toolbox,
    gates: Sequence[Gate],
    *,
    samples: int = 3,
    prompt: str = "",
    timeout_sec: float = 300.0,
    env: Mapping[str, str] | None = None,
) -> list[SampleGrade]:
    """Run the reviewer `samples` times against `toolbox` and grade each review."""
    names = [name for name in REVIEWER_TOOLS if name != "run" or toolbox.allow]
    grades: list[SampleGrade] = []
    for index in range(samples):
        sample_env = dict(os.environ if env is None else env)
        sample_env["SRB_REVIEW_SAMPLE"] = str(index)
        session = run_reviewer(
            argv,
            tools=toolbox.call,
            gates=gates,
            prompt=prompt,
            tool_names=names,
            timeout_sec=timeout_sec,
            env=sample_env,
        )
        if session.status != "accepted":
            grades.append(unusable_sample(index, session.reason))
            continue
        grades.append(grade_sample(session.review, gates, toolbox.check_evidence, index))
    return grades
