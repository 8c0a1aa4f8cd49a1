"""`make_driver`: keys only from the environment, base URL precedence, clear messages, the
SDKs imported lazily, and no key handed to a scripted program."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from srb_tui.drivers.anthropic_driver import AnthropicDriver
from srb_tui.drivers.base import DriverConfigError, UserText
from srb_tui.drivers.openai_driver import OpenAIDriver
from srb_tui.drivers.registry import make_driver
from srb_tui.drivers.scripted import ScriptedDriver

from .conftest import KEY
from .fake_vendor import openai_completion, serving


def test_anthropic_key_and_base_url_from_the_environment() -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    driver = make_driver("anthropic", "claude-x", {"reasoning_effort": "medium"}, environ=env)
    assert isinstance(driver, AnthropicDriver)
    assert driver.base_url == "http://127.0.0.1:9" and driver.model == "claude-x"
    assert driver.options == {"reasoning_effort": "medium"}
    assert KEY not in repr(driver)
    explicit = make_driver("anthropic", "claude-x", {}, environ=env, base_url="http://h:1")
    assert isinstance(explicit, AnthropicDriver) and explicit.base_url == "http://h:1"


async def test_stage_api_key_env_is_used() -> None:
    reply = openai_completion("ok", [], "stop", 1, 1)
    with serving([reply]) as server:
        driver = make_driver(
            "openai",
            "gpt-x",
            {},
            api_key_env="STAGE_GATEWAY_KEY",
            base_url=f"{server.url}/v1",
            environ={"STAGE_GATEWAY_KEY": "sk-stage-key-42", "OPENAI_API_KEY": "sk-other"},
        )
        assert isinstance(driver, OpenAIDriver)
        await driver.complete("s", [UserText("u")], [])
        await driver.aclose()
    assert server.requests[0].headers["authorization"] == "Bearer sk-stage-key-42"


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(DriverConfigError) as caught:
        make_driver("openai", "gpt-x", {}, environ={})
    assert "needs an API key in $OPENAI_API_KEY, which is not set" in str(caught.value)
    with pytest.raises(DriverConfigError, match=r"\$MY_KEY"):
        make_driver("anthropic", "c", {}, api_key_env="MY_KEY", environ={"MY_KEY": " "})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"driver": "gemini"}, "unknown driver 'gemini'; choose one of anthropic, openai"),
        ({"driver": "scripted"}, "the scripted driver needs a program"),
        ({"driver": "openai", "program": ["x"]}, "takes no program"),
        ({"driver": "openai", "model": " "}, "needs a model name"),
        ({"driver": "openai", "api_key_env": "BAD-NAME"}, "not an environment variable name"),
        ({"driver": "openai", "base_url": "ftp://x"}, "must be http(s)://"),
        ({"driver": "openai", "options": {"effort": "high"}}, "did you mean 'reasoning_effort'"),
    ],
)
def test_bad_settings_get_clear_messages(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"driver": "openai", "model": "m", "options": {}}
    args.update(kwargs)
    with pytest.raises(DriverConfigError) as caught:
        make_driver(
            str(args["driver"]),
            str(args["model"]),
            args["options"],
            api_key_env=args.get("api_key_env"),
            base_url=args.get("base_url"),
            program=args.get("program"),
            environ={"OPENAI_API_KEY": KEY},
        )
    assert message in str(caught.value)


def test_missing_sdk_is_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    with pytest.raises(DriverConfigError) as caught:
        make_driver("anthropic", "c", {}, environ={"ANTHROPIC_API_KEY": KEY})
    assert "pip install 'srb-tui[models]'" in str(caught.value)


def test_importing_drivers_does_not_import_the_sdks() -> None:
    code = (
        "import sys, srb_tui.drivers, srb_tui.drivers.registry, srb_tui.drivers.loop; "
        "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


async def test_scripted_program_gets_no_keys(tmp_path: Path) -> None:
    script = tmp_path / "env_dump.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            sys.stdin.readline()
            print(json.dumps({"tool": "env", "args": {"names": sorted(os.environ)}}), flush=True)
            sys.stdin.readline()
            """
        ),
        encoding="utf-8",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_API_KEY": KEY,
        "GATEWAY_TOKEN_X": KEY,
        "OTHER_API_KEY": KEY,
        "KEEP_ME": "1",
    }
    driver = make_driver(
        "scripted",
        "offline",
        {"timeout_sec": 10},
        program=[sys.executable, str(script)],
        api_key_env="GATEWAY_TOKEN_X",
        environ=env,
    )
    assert isinstance(driver, ScriptedDriver)
    turn = await driver.complete("s", [UserText("u")], [], session="one")
    await driver.aclose()
    names = turn.tool_calls[0].arguments["names"]
    assert "KEEP_ME" in names and "PATH" in names
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GATEWAY_TOKEN_X", "OTHER_API_KEY"} & set(
        names
    )
    assert json.dumps(names).count(KEY) == 0
