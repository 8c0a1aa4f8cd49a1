"""How srb drives each real client headless: argv, environment and config files.

Every client runs as the non-root agent user with a writable HOME and config directory
under ``/workspace/.srb-agent`` (outside ``/workspace/repo``, so nothing it keeps lands in
the submission), permissions bypassed, web search and web fetch off, telemetry and
update checks off, and its endpoint at the model gateway through the relay on
``127.0.0.1``. No proxy variables: the relay is the container's only way out. The
gateway token reaches the client only in the environment of each round's ``exec``.

One ``exec`` per round: round 1 reads the instruction on stdin; later rounds resume the
session the first one opened (Claude Code ``--resume <session id>``, Codex
``exec resume <thread id>``) with the continuation prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from srb_tui.agents.clients import ClientPin
from srb_tui.agents.errors import AdapterError
from srb_tui.agents.kinds import CLIENTS
from srb_tui.agents.streams import (
    ClaudeStreamParser,
    CodexStreamParser,
    StreamParser,
    TrajectoryRound,
)

AGENT_DIR = "/workspace/.srb-agent"
HOME_DIR = f"{AGENT_DIR}/home"
ROUNDS_DIR = f"{AGENT_DIR}/rounds"
REPO = "/workspace/repo"



@dataclass(frozen=True)
class Endpoint:
    """Where the client finds the model: the gateway, as the agent container sees it."""

    anthropic_base: str
    openai_base: str
    token: str


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class ClientAdapter:
    """Common parts; one subclass per client."""

    client = ""  # its entry in srb_tui/agents/kinds.py CLIENTS
    parser: ClassVar[type[StreamParser]]
    """how the client's round output becomes events (a fresh parser per round)"""
    resumable = True

    def stream_parser(self) -> StreamParser:
        """A fresh parser for one round's output (or, for mini-swe-agent, its trajectory)."""
        return self.parser()

    def __init__(self, pin: ClientPin, model: str, effort: str | None) -> None:
        self.pin = pin
        self.model = model
        self.effort = self.map_effort(effort)

    @property
    def vendor(self) -> str:
        """The model vendor whose API the client speaks (the gateway's upstream)."""
        return self.pin.kind.vendor

    def map_effort(self, effort: str | None) -> str | None:
        """``effort`` as the client's own level; AdapterError when it takes no such level."""
        kind = self.pin.kind
        if effort is None or not kind.efforts:
            return effort
        value = dict(kind.effort_aliases).get(effort, effort)
        if value not in kind.efforts:
            raise AdapterError(f"{kind.name}: effort {effort!r} is not one of "
                               f"{', '.join(kind.efforts)}")
        return value

    @property
    def binary(self) -> str:
        return self.pin.binary_in_container

    def version_argv(self) -> list[str]:
        return [self.binary, "--version"]

    def files(self, endpoint: Endpoint) -> dict[str, bytes]:
        """Config files written before round 1 (paths relative to AGENT_DIR)."""
        return {}

    def base_env(self) -> dict[str, str]:
        return {"HOME": HOME_DIR, "NO_COLOR": "1", "TERM": "dumb"}

    def env(self, endpoint: Endpoint) -> dict[str, str]:
        raise NotImplementedError

    def round_argv(self, round_no: int, session_id: str | None, prompt: str) -> list[str]:
        """The client's argv; the prompt of round 1 comes on stdin, later ones as text."""
        raise NotImplementedError


class ClaudeCodeAdapter(ClientAdapter):
    client = "claude-code"
    parser = ClaudeStreamParser


    def env(self, endpoint: Endpoint) -> dict[str, str]:
        env = self.base_env()
        env.update({
            "CLAUDE_CONFIG_DIR": f"{AGENT_DIR}/claude",
            "ANTHROPIC_BASE_URL": endpoint.anthropic_base,
            "ANTHROPIC_API_KEY": endpoint.token,
            "ANTHROPIC_MODEL": self.model,
            "ANTHROPIC_DEFAULT_OPUS_MODEL": self.model,
            "ANTHROPIC_DEFAULT_SONNET_MODEL": self.model,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": self.model,
            "CLAUDE_CODE_SUBAGENT_MODEL": self.model,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            # Few client-side retries: the round loop decides about outages.
            "CLAUDE_CODE_MAX_RETRIES": "2",
        })
        return env

    def round_argv(self, round_no: int, session_id: str | None, prompt: str) -> list[str]:
        argv = [self.binary, "-p"]
        if round_no > 1:
            argv.append(prompt)
        argv += ["--output-format", "stream-json", "--verbose", "--model", self.model,
                 "--permission-mode", "bypassPermissions"]
        if self.effort:
            argv += ["--effort", self.effort]
        if session_id and round_no > 1:
            argv += ["--resume", session_id]
        argv += ["--disallowedTools", "WebSearch,WebFetch"]
        return argv


class CodexAdapter(ClientAdapter):
    client = "codex"
    parser = CodexStreamParser


    @property
    def codex_home(self) -> str:
        return f"{AGENT_DIR}/codex"

    def files(self, endpoint: Endpoint) -> dict[str, bytes]:
        lines = [
            'model_provider = "srb"',
            f"model = {_toml_str(self.model)}",
            "check_for_update_on_startup = false",
            'web_search = "disabled"',
        ]
        if self.effort:
            lines.append(f"model_reasoning_effort = {_toml_str(self.effort)}")
        lines += [
            "",
            "[model_providers.srb]",
            'name = "srb model gateway"',
            f"base_url = {_toml_str(endpoint.openai_base)}",
            'env_key = "SRB_GATEWAY_TOKEN"',
            'wire_api = "responses"',
            "supports_websockets = false",
            "request_max_retries = 1",
            "stream_max_retries = 1",
            "",
            "[features]",
            "plugins = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
        ]
        return {"codex/config.toml": "\n".join(lines).encode()}

    def env(self, endpoint: Endpoint) -> dict[str, str]:
        env = self.base_env()
        vendor = self.binary.rsplit("/bin/", 1)[0]
        env.update({
            "CODEX_HOME": self.codex_home,
            "SRB_GATEWAY_TOKEN": endpoint.token,
            "PATH": f"{vendor}/codex-path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                    "/sbin:/bin",
        })
        return env

    def round_argv(self, round_no: int, session_id: str | None, prompt: str) -> list[str]:
        common = ["--json", "--dangerously-bypass-approvals-and-sandbox",
                  "--skip-git-repo-check", "-m", self.model,
                  "-c", "web_search=disabled", "-c", "check_for_update_on_startup=false"]
        if self.effort:
            common += ["-c", f"model_reasoning_effort={self.effort}"]
        if round_no > 1 and session_id:
            return [self.binary, "exec", "resume", session_id, *common, prompt]
        return [self.binary, "exec", *common, "-"]


MINI_SWE_PYTHON = (3, 10)


def python_problem(exit_code: int | None, output: str) -> str | None:
    """Why the agent image cannot run mini-swe-agent, from ``python3 -c`` printing its
    ``major.minor`` (exit code and stdout), or None when it can."""
    found = output.strip()
    need = ".".join(map(str, MINI_SWE_PYTHON))
    if exit_code != 0 or not found:
        return (f"mini-swe-agent needs Python >= {need} in the agent image; the image has "
                f"no python3 (exit {exit_code}); choose claude-code or codex for this task")
    parts = found.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return (f"mini-swe-agent needs Python >= {need} in the agent image; python3 there "
                f"reported {found[:80]!r}, not a version")
    if (int(parts[0]), int(parts[1])) < MINI_SWE_PYTHON:
        return (f"mini-swe-agent needs Python >= {need} in the agent image; the image has "
                f"Python {found}; choose claude-code or codex for this task")
    return None


class MiniSweAgentAdapter(ClientAdapter):
    """mini-swe-agent: one run, no resume; the trajectory file is its stream."""

    client = "mini-swe-agent"
    parser = TrajectoryRound
    resumable = False

    def version_argv(self) -> list[str]:
        return ["sh", "-c", f'PYTHONPATH={self.pin.mount}/lib python3 -c '
                '"import minisweagent; print(minisweagent.__version__)"']

    def env(self, endpoint: Endpoint) -> dict[str, str]:
        env = self.base_env()
        env.update({
            "MSWEA_CONFIGURED": "1", "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_GLOBAL_CONFIG_DIR": f"{AGENT_DIR}/mini",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": endpoint.token,
            "SRB_OPENAI_BASE": endpoint.openai_base,
            "PYTHONPATH": f"{self.pin.mount}/lib",
        })
        return env

    def trajectory(self, round_no: int) -> str:
        return f"{ROUNDS_DIR}/trajectory-{round_no:03d}.json"

    def round_argv(self, round_no: int, session_id: str | None, prompt: str) -> list[str]:
        return ["sh", "-c",
                'exec python3 -m minisweagent.run.mini -y --exit-immediately -m "$1" '
                '-t "$(cat)" -o "$2" -c mini.yaml '
                '-c model.model_kwargs.api_base="$SRB_OPENAI_BASE" -c agent.cost_limit=0',
                "mini", f"openai/{self.model}", self.trajectory(round_no)]


ADAPTERS: dict[str, type[ClientAdapter]] = {
    cls.client: cls for cls in (ClaudeCodeAdapter, CodexAdapter, MiniSweAgentAdapter)}
"""Each entry of :data:`~srb_tui.agents.kinds.CLIENTS` and the adapter that drives it."""
if set(ADAPTERS) != set(CLIENTS):
    raise ImportError(f"client adapters {sorted(ADAPTERS)} do not match the clients "
                      f"{sorted(CLIENTS)} in srb_tui/agents/kinds.py")


def make_adapter(pin: ClientPin, model: str, effort: str | None) -> ClientAdapter:
    return ADAPTERS[pin.name](pin, model, effort)
