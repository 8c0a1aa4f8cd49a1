"""Typos in ``state/config.toml`` are named (issue 26, 9): an unknown table with a
did-you-mean, ``[images]`` values checked; ``srb doctor`` shows them and exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from tests.cli.test_cli import srb

CASES = [
    ('[gatway.anthropic]\nbase_url = "https://example.invalid"\n',
     "[gatway]: unknown table (did you mean [gateway]?)"),
    ('[imagez]\n"python:3.12" = "local/python:3.12"\n',
     "[imagez]: unknown table (did you mean [images]?)"),
    ('[colours]\nx = 1\n', "[colours]: unknown table; known: [gateway], [images]"),
    ('[images]\n"python:3.12" = 5\n', 'images."python:3.12" must be a local image reference'),
]


@pytest.mark.parametrize(("text", "message"), CASES, ids=[m[:20] for _, m in CASES])
def test_doctor_names_a_typo_in_config_toml(text: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(text)
    out = srb("doctor", state=tmp_path, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode == codes.FAILED
    assert message in out.stdout, out.stdout
    assert any(line.startswith("✗") and message in line for line in out.stdout.splitlines())
