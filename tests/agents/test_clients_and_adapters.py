"""Client pins (task harness, override, srb default) and each adapter's argv/env/config."""

from __future__ import annotations

import tomllib

import pytest

from srb_tui.agents.adapters import Endpoint, make_adapter
from srb_tui.agents.clients import ClientPin, cached_clients, resolve_pin
from srb_tui.agents.errors import AdapterError, ClientError

EP = Endpoint("http://127.0.0.1:8642", "http://127.0.0.1:8642/v1", "srb-gw-TOKEN")


def test_pins() -> None:
    assert resolve_pin("codex", "codex-cli 0.146.0") == ClientPin("codex", "0.146.0", "task")
    assert resolve_pin("claude-code", "codex-cli 0.146.0").version == "2.1.220"
    assert resolve_pin("claude-code", "srb-builtin").source == "srb"
    assert resolve_pin("claude-code", "claude-code 2.1.300", "2.1.222").source == "override"
    assert resolve_pin("mini-swe-agent", None).version == "2.4.6"
    with pytest.raises(ClientError):
        resolve_pin("codex", None, "latest; rm -rf /")
    pin = resolve_pin("claude-code", None)
    assert pin.mount == "/opt/srb/clients/claude-code-2.1.220"
    assert pin.version_matches("2.1.220 (Claude Code)")
    assert not pin.version_matches("2.1.221 (Claude Code)")
    assert resolve_pin("codex", None).version_matches("codex-cli 0.146.0\n")


def test_claude_adapter() -> None:
    a = make_adapter(resolve_pin("claude-code", None), "m1", "high")
    env = a.env(EP)
    assert env["ANTHROPIC_BASE_URL"] == EP.anthropic_base
    assert env["ANTHROPIC_API_KEY"] == EP.token
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CONFIG_DIR"].startswith("/workspace/.srb-agent/")
    assert not any("PROXY" in k.upper() for k in env)
    first = a.round_argv(1, None, "INSTRUCTION")
    assert "INSTRUCTION" not in first  # round 1 reads it on stdin
    assert first[first.index("--effort") + 1] == "high"
    assert first[first.index("--permission-mode") + 1] == "bypassPermissions"
    assert first[first.index("--disallowedTools") + 1] == "WebSearch,WebFetch"
    later = a.round_argv(2, "sess-1", "continue")
    assert later[:3] == [a.binary, "-p", "continue"]
    assert later[later.index("--resume") + 1] == "sess-1"
    with pytest.raises(AdapterError):
        make_adapter(resolve_pin("claude-code", None), "m", "ultra")


def test_codex_adapter() -> None:
    a = make_adapter(resolve_pin("codex", None), "m2", "max")
    conf = tomllib.loads(a.files(EP)["codex/config.toml"].decode())
    prov = conf["model_providers"]["srb"]
    assert prov["base_url"] == EP.openai_base and prov["wire_api"] == "responses"
    assert prov["supports_websockets"] is False and prov["env_key"] == "SRB_GATEWAY_TOKEN"
    assert prov["request_max_retries"] <= 1 and prov["stream_max_retries"] <= 1
    assert conf["features"]["plugins"] is False and conf["analytics"]["enabled"] is False
    assert conf["model_reasoning_effort"] == "xhigh"
    assert EP.token not in a.files(EP)["codex/config.toml"].decode()
    assert a.env(EP)["SRB_GATEWAY_TOKEN"] == EP.token
    first = a.round_argv(1, None, "I")
    assert first[1] == "exec" and first[-1] == "-" and "model_reasoning_effort=xhigh" in first
    later = a.round_argv(2, "thread-9", "continue")
    assert later[1:4] == ["exec", "resume", "thread-9"] and later[-1] == "continue"


def test_cached_clients_lists_only_complete_entries(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".claude-code-2.1.220-tmp").mkdir()
    (tmp_path / "codex-0.146.0").mkdir()
    good = tmp_path / "claude-code-2.1.220"
    good.mkdir()
    (good / ".srb-client.json").write_text(
        '{"name": "claude-code", "version": "2.1.220", "sha256": "ab", "version_output": "x"}')
    found = cached_clients(tmp_path)
    assert [(c.pin.name, c.pin.version) for c in found] == [("claude-code", "2.1.220")]
