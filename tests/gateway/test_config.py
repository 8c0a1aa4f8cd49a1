"""state/config.toml's [gateway.*] tables and the URL override variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.gateway import GatewayConfigError, Price, load_gateway_config


def write(state: Path, text: str) -> Path:
    state.mkdir(exist_ok=True)
    path = state / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_gives_the_vendor_defaults(tmp_path: Path) -> None:
    config = load_gateway_config(tmp_path, {})
    assert config.anthropic.base_url == "https://api.anthropic.com"
    assert config.anthropic.key_env == "ANTHROPIC_API_KEY"
    assert config.openai.base_url == "https://api.openai.com/v1"
    assert config.openai.root == "https://api.openai.com"
    assert config.openai.key_env == "OPENAI_API_KEY" and dict(config.prices) == {}
    assert config.key_for("openai") is None
    anthropic, openai, prices = load_gateway_config(tmp_path, {"OPENAI_API_KEY": "sk-x"}).summary()
    assert (anthropic["key_set"], openai["key_set"], prices) == (False, True,
                                                                {"priced_models": []})
    assert "sk-x" not in repr(anthropic) + repr(openai)


def test_tables_models_prices_and_env_overrides(tmp_path: Path) -> None:
    write(tmp_path, """
[images]  # another part of srb's table: fine here
"python:3.12" = "local/python:3.12"
[gateway.anthropic]
base_url = "https://proxy.example/anthropic/"
key_env = "MY_KEY"
models = { "a" = "b" }
[gateway.prices."b"]
input = 2
output = 8
""")
    config = load_gateway_config(
        tmp_path, {"MY_KEY": " k ", "SRB_GATEWAY_OPENAI_URL": "http://127.0.0.1:9/v1"}
    )
    assert config.anthropic.root == "https://proxy.example/anthropic"
    assert dict(config.anthropic.models) == {"a": "b"}
    assert config.key_for("anthropic") == "k"
    assert config.openai.base_url == "http://127.0.0.1:9/v1"
    assert config.prices["b"] == Price(2.0, 8.0, 2.0, 2.0)  # cache prices default to input
    assert config.prices["b"].cost({"input_tokens": 500_000, "output_tokens": 1000}) == (
        pytest.approx(1.008)
    )


def test_every_problem_is_named_with_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, """
[gateway.anthropic]
base_url = "ftp://nope"
key_evn = "X"
[gateway.openai]
key_env = "not a name"
models = { "m" = "" }
[gateway.prices."gpt"]
input = -1
[gateway.extra]
""")
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config(tmp_path, {})
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for part in (
        "gateway.anthropic.base_url: 'ftp://nope' is not an http(s):// URL",
        "gateway.anthropic.key_evn: unknown key (did you mean 'key_env'?)",
        "gateway.openai.key_env: must name an environment variable",
        "gateway.openai.models.m: must be a non-empty string",
        'gateway.prices."gpt".input: must be a number >= 0',
        'gateway.prices."gpt".output: missing',
        "gateway.extra: unknown key",
    ):
        assert part in message, part


def test_broken_toml_and_bad_override_are_clear(tmp_path: Path) -> None:
    path = write(tmp_path, "[gateway\n")
    with pytest.raises(GatewayConfigError, match=f"{path}: not valid TOML"):
        load_gateway_config(tmp_path, {})
    write(tmp_path, "")
    with pytest.raises(GatewayConfigError, match=r"\$SRB_GATEWAY_ANTHROPIC_URL: 'x' is not"):
        load_gateway_config(tmp_path, {"SRB_GATEWAY_ANTHROPIC_URL": "x"})


def test_one_file_holds_every_readers_tables(tmp_path: Path) -> None:
    """The gateway, the image map and the backend each read their part of one file; the
    gateway's unknown-table check must let the others' tables through (it refused
    [backend] and [engines] once) and still name a typo."""
    from srb_tui.config_file import TABLES
    from srb_tui.runner.backend_config import load_backend
    from srb_tui.service.grading.image_plan import load_image_map

    write(tmp_path, '[gateway.openai]\nbase_url = "http://127.0.0.1:9/v1"\n'
                    '[images]\n"python:3.12" = "local/python:3.12"\n'
                    '[backend]\nkind = "engines"\n'
                    '[engines.n1]\nurl = "tcp://10.0.0.2:2375"\n')
    assert set(TABLES) == {"gateway", "images", "backend", "engines"}
    assert load_gateway_config(tmp_path, {}).openai.base_url == "http://127.0.0.1:9/v1"
    assert load_image_map(tmp_path) == {"python:3.12": "local/python:3.12"}
    assert load_backend(tmp_path).kind == "engines"
    write(tmp_path, '[backnd]\nkind = "engines"\n')
    with pytest.raises(GatewayConfigError, match=r"\[backnd\]: unknown table \(did you mean "
                                                 r"\[backend\]\?\)"):
        load_gateway_config(tmp_path, {})
