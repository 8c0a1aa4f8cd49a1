"""The clients' output streams, parsed into srb's own typed transcript events.

Claude Code's ``stream-json`` and Codex's ``--json`` are JSON lines; each parser is fed
one line at a time (``feed``) and returns the events that line produced, keeping just
enough state to de-duplicate (Claude Code repeats an assistant message id once per
content block) and to sum a round's usage. mini-swe-agent writes a trajectory file
instead; :func:`parse_trajectory` reads it whole.

Event kinds: ``session`` (id, model), ``message`` (assistant text), ``tool_call``
(id, name, input), ``tool_result`` (id, output, is_error), ``usage`` (tokens),
``cost`` (the client's own estimate, informational), ``error`` (text, fatal or a retry),
``result`` (the round's final message and outcome as the client reported it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

MAX_OUTPUT = 8_000
MARKER = "@@srb "


@dataclass(frozen=True)
class AgentEvent:
    """One event parsed from a client's JSON stream (its kind and raw payload)."""

    kind: str
    data: dict[str, Any]


@dataclass
class RoundSummary:
    """What a round's stream said, summed up for the loop and the rounds table."""

    session_id: str | None = None
    final_message: str = ""
    is_error: bool = False
    error: str | None = None
    terminal_reason: str | None = None
    tool_calls: int = 0
    work_events: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    client_cost_usd: float | None = None
    errors: list[str] = field(default_factory=list)

    def add_usage(self, usage: dict[str, Any]) -> None:
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        self.cache_read_tokens += int(usage.get("cache_read_tokens") or 0)
        self.cache_write_tokens += int(usage.get("cache_write_tokens") or 0)
        self.reasoning_tokens += int(usage.get("reasoning_tokens") or 0)


class StreamParser(Protocol):
    summary: RoundSummary

    def feed(self, line: str) -> list[AgentEvent]: ...


def _clip(text: str, limit: int = MAX_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters in the raw stream]"


def _loads(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line or line.startswith(MARKER) or not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _tool_output(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if p)
    return "" if content is None else json.dumps(content)


class ClaudeStreamParser:
    """Claude Code ``--output-format stream-json --verbose``."""

    def __init__(self) -> None:
        self.summary = RoundSummary()
        self._seen_blocks: set[tuple[str, int, str]] = set()

    def feed(self, line: str) -> list[AgentEvent]:
        obj = _loads(line)
        if obj is None:
            return []
        kind = obj.get("type")
        if kind == "system" and obj.get("subtype") == "init":
            self.summary.session_id = obj.get("session_id") or self.summary.session_id
            return [AgentEvent("session", {"session_id": obj.get("session_id"),
                                           "model": obj.get("model"),
                                           "version": obj.get("claude_code_version")})]
        if kind == "assistant":
            return self._assistant(obj)
        if kind == "user":
            return self._user(obj)
        if kind == "result":
            return self._result(obj)
        return []

    def _assistant(self, obj: dict[str, Any]) -> list[AgentEvent]:
        msg = obj.get("message") or {}
        mid = str(msg.get("id", ""))
        synthetic = msg.get("model") == "<synthetic>"
        out: list[AgentEvent] = []
        for n, block in enumerate(msg.get("content") or []):
            if not isinstance(block, dict):
                continue
            key = (mid, n, str(block.get("id") or block.get("text", ""))[:64])
            if mid and key in self._seen_blocks:
                continue
            self._seen_blocks.add(key)
            btype = block.get("type")
            if btype == "text" and block.get("text"):
                if synthetic:
                    self.summary.errors.append(str(block["text"]))
                    out.append(AgentEvent("error", {"text": str(block["text"]),
                                                    "fatal": False}))
                else:
                    self.summary.work_events += 1
                    out.append(AgentEvent("message", {"text": str(block["text"])}))
            elif btype == "tool_use":
                self.summary.tool_calls += 1
                self.summary.work_events += 1
                out.append(AgentEvent("tool_call", {"id": block.get("id"),
                                                    "name": block.get("name"),
                                                    "input": block.get("input")}))
        return out

    def _user(self, obj: dict[str, Any]) -> list[AgentEvent]:
        content = (obj.get("message") or {}).get("content")
        out: list[AgentEvent] = []
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(AgentEvent("tool_result", {
                        "id": block.get("tool_use_id"),
                        "output": _clip(_tool_output(block.get("content"))),
                        "is_error": bool(block.get("is_error")),
                    }))
        return out

    def _result(self, obj: dict[str, Any]) -> list[AgentEvent]:
        s = self.summary
        s.session_id = obj.get("session_id") or s.session_id
        s.final_message = str(obj.get("result") or "")
        s.is_error = bool(obj.get("is_error"))
        s.terminal_reason = obj.get("terminal_reason") or obj.get("subtype")
        usage = obj.get("usage") or {}
        tokens = {
            "input_tokens": int(usage.get("input_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cache_read_tokens": int(usage.get("cache_read_input_tokens") or 0),
            "cache_write_tokens": int(usage.get("cache_creation_input_tokens") or 0),
            "reasoning_tokens": 0,
        }
        s.add_usage(tokens)
        out = [AgentEvent("usage", tokens)]
        if obj.get("total_cost_usd") is not None:
            s.client_cost_usd = float(obj["total_cost_usd"])
            out.append(AgentEvent("cost", {"usd": s.client_cost_usd, "source": "client"}))
        if s.is_error:
            status = obj.get("api_error_status")
            s.error = f"{s.terminal_reason}: {s.final_message}".strip()
            if status:
                s.error += f" (HTTP {status})"
            out.append(AgentEvent("error", {"text": s.error, "fatal": True}))
        out.append(AgentEvent("result", {"text": s.final_message, "is_error": s.is_error,
                                         "terminal_reason": s.terminal_reason,
                                         "turns": obj.get("num_turns")}))
        return out


class CodexStreamParser:
    """Codex CLI ``exec --json``."""

    def __init__(self) -> None:
        self.summary = RoundSummary()

    def feed(self, line: str) -> list[AgentEvent]:
        obj = _loads(line)
        if obj is None:
            return []
        kind = obj.get("type")
        s = self.summary
        if kind == "thread.started":
            s.session_id = obj.get("thread_id")
            return [AgentEvent("session", {"session_id": s.session_id})]
        if kind in ("item.started", "item.completed"):
            return self._item(kind, obj.get("item") or {})
        if kind == "turn.completed":
            usage = obj.get("usage") or {}
            tokens = {
                "input_tokens": int(usage.get("input_tokens") or 0),
                "output_tokens": int(usage.get("output_tokens") or 0),
                "cache_read_tokens": int(usage.get("cached_input_tokens") or 0),
                "cache_write_tokens": int(usage.get("cache_write_input_tokens") or 0),
                "reasoning_tokens": int(usage.get("reasoning_output_tokens") or 0),
            }
            s.add_usage(tokens)
            s.terminal_reason = "completed"
            return [AgentEvent("usage", tokens),
                    AgentEvent("result", {"text": s.final_message, "is_error": False,
                                          "terminal_reason": "completed"})]
        if kind == "turn.failed":
            err = (obj.get("error") or {}).get("message") or "turn failed"
            s.is_error = True
            s.error = str(err)
            s.terminal_reason = "failed"
            return [AgentEvent("error", {"text": s.error, "fatal": True}),
                    AgentEvent("result", {"text": s.final_message, "is_error": True,
                                          "terminal_reason": "failed"})]
        if kind == "error":
            # Top-level error lines are the client's retries, not the end of the turn.
            text = str(obj.get("message") or "")
            s.errors.append(text)
            return [AgentEvent("error", {"text": text, "fatal": False})]
        return []

    def _item(self, kind: str, item: dict[str, Any]) -> list[AgentEvent]:
        s = self.summary
        itype = item.get("type")
        iid = item.get("id")
        done = kind == "item.completed"
        if itype == "agent_message" and done:
            s.final_message = str(item.get("text") or "")
            s.work_events += 1
            return [AgentEvent("message", {"text": s.final_message})]
        if itype == "reasoning" and done and item.get("text"):
            return [AgentEvent("message", {"text": str(item["text"]), "reasoning": True})]
        if itype == "command_execution":
            if not done:
                s.tool_calls += 1
                s.work_events += 1
                return [AgentEvent("tool_call", {"id": iid, "name": "command",
                                                 "input": {"command": item.get("command")}})]
            return [AgentEvent("tool_result", {
                "id": iid, "output": _clip(str(item.get("aggregated_output") or "")),
                "exit_code": item.get("exit_code"),
                "is_error": item.get("status") not in ("completed", None)
                or (item.get("exit_code") not in (0, None))})]
        if itype == "file_change" and done:
            s.tool_calls += 1
            s.work_events += 1
            changes = item.get("changes") or []
            return [AgentEvent("tool_call", {"id": iid, "name": "file_change",
                                             "input": {"changes": changes}}),
                    AgentEvent("tool_result", {"id": iid, "output": json.dumps(changes),
                                               "is_error": item.get("status") == "failed"})]
        if itype in ("mcp_tool_call", "web_search") and done:
            s.tool_calls += 1
            s.work_events += 1
            return [AgentEvent("tool_call", {"id": iid, "name": itype, "input": item})]
        if itype == "todo_list" and done:
            return [AgentEvent("message", {"text": json.dumps(item.get("items")),
                                           "plan": True})]
        if itype == "error" and done:
            text = str(item.get("message") or "")
            s.errors.append(text)
            return [AgentEvent("error", {"text": text, "fatal": False})]
        return []


class TrajectoryRound:
    """mini-swe-agent prints no machine-readable stream: its round's events come from the
    trajectory file at the end of the round (:func:`parse_trajectory`)."""

    def __init__(self) -> None:
        self.summary = RoundSummary()

    def feed(self, line: str) -> list[AgentEvent]:
        return []


def parse_trajectory(data: dict[str, Any]) -> tuple[list[AgentEvent], RoundSummary]:
    """mini-swe-agent's trajectory file (``-o traj.json``) as events and a summary."""
    summary = RoundSummary()
    events: list[AgentEvent] = []
    info = data.get("info") or {}
    for msg in data.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        content = _tool_output(msg.get("content"))
        if role == "assistant":
            summary.work_events += 1
            summary.final_message = content
            events.append(AgentEvent("message", {"text": _clip(content)}))
            for call in msg.get("tool_calls") or []:
                fn = (call or {}).get("function") or {}
                summary.tool_calls += 1
                events.append(AgentEvent("tool_call", {"id": call.get("id"),
                                                       "name": fn.get("name"),
                                                       "input": fn.get("arguments")}))
        elif role in ("tool", "user") and events:
            events.append(AgentEvent("tool_result", {"id": msg.get("tool_call_id"),
                                                     "output": _clip(content),
                                                     "is_error": False}))
    stats = info.get("model_stats") or {}
    if stats.get("instance_cost") is not None:
        summary.client_cost_usd = float(stats["instance_cost"])
        events.append(AgentEvent("cost", {"usd": summary.client_cost_usd, "source": "client"}))
    status = info.get("exit_status")
    summary.terminal_reason = str(status) if status else None
    summary.is_error = bool(status) and status not in ("Submitted",)
    if summary.is_error:
        summary.error = str(status)
    events.append(AgentEvent("result", {"text": str(info.get("submission") or ""),
                                        "is_error": summary.is_error,
                                        "terminal_reason": summary.terminal_reason}))
    return events, summary
