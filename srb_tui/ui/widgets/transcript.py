"""The Transcript tab: a real client's session as rounds, messages and tool calls, live.

A tree: one node per round (prompt, verdict, tokens, the client's cost estimate), under
it the assistant's messages, its tool calls (input on the label, output folded beneath)
and errors. Loaded from the store (``agent_rounds`` / ``agent_events``), then extended
from the bus's ``AgentRoundStarted`` / ``AgentTranscript`` / ``AgentRoundFinished``.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from srb_tui.service.views.agent_report import tool_input_text
from srb_tui.store import Store
from srb_tui.store.agent_log_records import AgentRound

LABEL_MAX = 160
RESULT_LINES = 200  # lines of a tool result shown under it


def no_transcript(agent: str) -> str:
    """What the tab says when ``agent`` recorded no rounds."""
    return (f"No transcript for {agent}. Model clients (claude-code:MODEL, codex:MODEL) "
            "record each round here as it happens — prompt, messages, tool calls and "
            "their output, tokens and cost; replayed and command agents have none (their "
            "output is in the Log tab).")


def _one_line(text: str, limit: int = LABEL_MAX) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tool_input(data: dict[str, Any]) -> str:
    return tool_input_text(data.get("input"))


def round_label(number: int, r: AgentRound | None = None, *, prompt: str = "",
                verdict: str | None = None, tokens: int | None = None,
                cost: float | None = None) -> Text:
    if r is not None:
        prompt, verdict, tokens, cost = (r.prompt_kind, r.verdict, r.tokens,
                                         r.client_cost_usd)
    text = Text.assemble((f"Round {number}", "bold"), f" · {prompt or '…'}")
    text.append(f" · {verdict}" if verdict else " · running")
    if tokens:
        text.append(f" · {tokens:,} tokens")
    if cost is not None:
        text.append(f" · client est. ${cost:.4f}", style="dim")
    return text


class TranscriptView(Tree[dict[str, Any]]):
    """Rounds → messages / tool calls (output folded) / errors."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Transcript", **kwargs)
        self.show_root = False
        self._rounds: dict[int, TreeNode[dict[str, Any]]] = {}
        self._calls: dict[tuple[int, str], TreeNode[dict[str, Any]]] = {}
        self._seen: dict[int, int] = {}

    @property
    def rounds(self) -> int:
        return len(self._rounds)

    def _round(self, number: int) -> TreeNode[dict[str, Any]]:
        node = self._rounds.get(number)
        if node is None:
            node = self.root.add(round_label(number), data={"round": number}, expand=True)
            self._rounds[number] = node
        return node

    async def load(self, store: Store, run_id: str) -> None:
        """Everything stored so far (safe to call again: seen events are skipped)."""
        for r in await store.agent.agent_rounds(run_id):
            self._round(r.round).set_label(round_label(r.round, r))
        for ev in await store.agent.agent_events(run_id):
            self.add_event(ev.round, ev.seq, ev.kind, ev.data)
        if self.root.children:
            self.root.expand()

    def round_started(self, number: int, prompt: str) -> None:
        self._round(number).set_label(round_label(number, prompt=prompt))

    def round_finished(self, number: int, verdict: str, tokens: int,
                       cost: float | None, prompt: str = "") -> None:
        node = self._round(number)
        node.set_label(round_label(number, prompt=prompt, verdict=verdict, tokens=tokens,
                                   cost=cost))

    def add_event(self, number: int, seq: int, kind: str, data: dict[str, Any]) -> None:
        if seq <= self._seen.get(number, 0):
            return
        self._seen[number] = seq
        node = self._round(number)
        if kind == "message":
            style = "italic dim" if data.get("reasoning") else ""
            node.add_leaf(Text(f"💬 {_one_line(str(data.get('text', '')))}", style=style),
                          data=data)
        elif kind == "tool_call":
            label = Text.assemble(("⚙ ", "bold"), (str(data.get("name", "tool")), "bold"),
                                  f" {_one_line(_tool_input(data))}")
            call = node.add(label, data=data, expand=False)
            self._calls[(number, str(data.get("id")))] = call
        elif kind == "tool_result":
            parent = self._calls.get((number, str(data.get("id"))), node)
            output = str(data.get("output", ""))
            mark = "✗" if data.get("is_error") else "↳"
            lines = output.splitlines() or [""]
            out = parent.add(Text(f"{mark} {len(lines)} line(s) of output",
                                  style="red" if data.get("is_error") else "dim"),
                             data=data, expand=False)
            for line in lines[:RESULT_LINES]:
                out.add_leaf(Text(line[:400]))
            if len(lines) > RESULT_LINES:
                out.add_leaf(Text(f"… {len(lines) - RESULT_LINES} more line(s): the round's "
                                  f"raw stream has the whole output", style="dim"))
        elif kind == "error":
            node.add_leaf(Text(f"! {_one_line(str(data.get('text', '')))}",
                               style="red" if data.get("fatal") else "yellow"), data=data)
        elif kind == "session":
            node.add_leaf(Text(f"session {data.get('session_id')}", style="dim"), data=data)
        elif kind == "result":
            node.add_leaf(Text(f"■ result: {_one_line(str(data.get('text', '')))}",
                               style="bold"), data=data)
