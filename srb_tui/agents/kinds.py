"""The agent room's one list: every kind of agent srb can run, by name.

Built-in kinds (``untouched``, ``replay:``, ``command:``) run in the agent container's main
process; real clients (Claude Code, Codex CLI, mini-swe-agent) are pinned programs srb
installs and drives round by round behind its model gateway. Everything else that needs a
client's name or a fact about it (the spec parser, the installer, the adapters, the stream
parsers, the Stage III lane, the launch dialog, ``srb doctor``) reads it from here, so a
new client is one entry in :data:`CLIENTS` plus its adapter. Standard library only: the
launch of a built-in agent imports this module and nothing of the clients' code.
"""

from __future__ import annotations

from dataclasses import dataclass

BUILTIN_KINDS = ("untouched", "replay", "command")


@dataclass(frozen=True)
class ClientKind:
    """One real agent client srb can install and drive: its package, registry, default
    version and binary, and what the rest of srb needs to know about it."""

    name: str
    package: str
    registry: str  # "npm" | "pypi"
    default_version: str
    harness_names: tuple[str, ...]
    binary: str  # path of the executable inside the install directory
    version_pattern: str  # what `--version` prints, {v} is the version
    vendor: str = ""
    """the model vendor whose API it speaks (the gateway's upstream)"""
    efforts: tuple[str, ...] = ()
    """the effort levels it takes (none listed: any is passed on as given)"""
    effort_aliases: tuple[tuple[str, str], ...] = ()
    """another client's level it reads as its own nearest (``minimal`` -> ``low``)"""
    line: str = ""
    """what the launch dialog says about it"""
    needs_python: bool = False
    """it runs on the image's python3 (checked, >= 3.10, before round 1)"""
    lane_shell: str | None = None
    """how a Stage III lane routes its shell commands through the lane's shell: "prefix"
    (a prefix before each command) or "shim" (the shell it runs, first on PATH); None: the
    client cannot be a Stage III adversary"""


CLIENTS: dict[str, ClientKind] = {kind.name: kind for kind in (
    ClientKind(
        "claude-code", "@anthropic-ai/claude-code", "npm", "2.1.220",
        ("claude-code", "claude"),
        "node_modules/@anthropic-ai/claude-code/bin/claude.exe", r"^{v} \(Claude Code\)",
        vendor="anthropic", efforts=("low", "medium", "high", "xhigh", "max"),
        effort_aliases=(("minimal", "low"),),
        line="Claude Code, effort low…max", lane_shell="prefix"),
    ClientKind(
        "codex", "@openai/codex", "npm", "0.146.0", ("codex-cli", "codex"),
        "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        r"^codex-cli {v}\b",
        vendor="openai", efforts=("minimal", "low", "medium", "high", "xhigh"),
        effort_aliases=(("max", "xhigh"),),
        line="Codex CLI, effort minimal…xhigh", lane_shell="shim"),
    ClientKind(
        "mini-swe-agent", "mini-swe-agent", "pypi", "2.4.6", ("mini-swe-agent", "mini"),
        "bin/mini", r"{v}",
        vendor="openai",  # its model is named openai/MODEL (LiteLLM), through the gateway
        line="mini-swe-agent (needs Python ≥ 3.10 in the image)", needs_python=True),
)}

CLIENT_KINDS = tuple(CLIENTS)
"""The real clients' names, in the order front ends list them."""

LANE_CLIENTS = tuple(k.name for k in CLIENTS.values() if k.lane_shell is not None)
"""The clients that can be a Stage III adversary in a lane of their own."""

CLIENT_LINES = {k.name: k.line for k in CLIENTS.values()}


def is_client(kind: str) -> bool:
    """Whether ``kind`` (a spec's kind, or a stored spec text's prefix) is a real client."""
    return kind in CLIENTS


def spec_kind(agent_text: str) -> str:
    """The kind a stored agent spec text names (``codex:gpt-5`` -> ``codex``)."""
    return agent_text.split(":", 1)[0]
