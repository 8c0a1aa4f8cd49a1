"""Which fuzz domain a probe asks for and the grader options it becomes; the command-line
domain's mutation words come from the probe (``fuzz_tokens``) before anything else."""

from __future__ import annotations

import json
from pathlib import Path

from srb_tui.grader.fuzzing.argv import argv_vocabulary
from srb_tui.grader.fuzzing.mutate import GENERIC_TOKENS
from srb_tui.schema import load_task
from srb_tui.service.grading.stages import fuzz_domains

from ..conftest import DEMO02_TASK, DEMO_TASK


def inside(rel: str) -> str:
    return f"/srb/tests/verification/{rel}"


def test_demo02_probe_becomes_fuzz_http_options() -> None:
    task = load_task(DEMO02_TASK).task
    assert task is not None
    probe = task.probe
    assert probe is not None
    meta = probe.metadata
    assert fuzz_domains.is_http(meta)
    args = fuzz_domains.http_args(meta, inside)
    assert isinstance(args, list)
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    assert pairs["--seeds"] == inside("data/requests.json")
    assert json.loads(pairs["--server-json"]) == ["bin/shelf", "--host", "127.0.0.1", "--port",
                                                  "{port}"]
    assert json.loads(pairs["--headers-json"]) == ["content-type", "content-length",
                                                   "location", "allow"]
    assert pairs["--url-env"] == "SERVICE_URL" and pairs["--start-timeout"] == "15"


def test_demo01_probe_stays_in_the_command_line_domain() -> None:
    task = load_task(DEMO_TASK).task
    assert task is not None
    probe = task.probe
    assert probe is not None
    assert not fuzz_domains.is_http(probe.metadata)


def test_an_http_probe_without_a_server_is_named() -> None:
    problem = fuzz_domains.http_args({"fuzz_domain": "http", "fuzz_seeds": "s.json"}, inside)
    assert isinstance(problem, str) and "fuzz_server" in problem


def test_probe_tokens_come_first_and_replace_the_argv_file(tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    argv_file.write_text(json.dumps({"argv": [["--width", "3"]], "tokens": ["--from-file"]}))
    assert fuzz_domains.cli_token_args({"fuzz_tokens": ("-x", "--y")}) == [
        "--tokens-json", '["-x", "--y"]']
    assert fuzz_domains.cli_token_args({}) == []
    words = argv_vocabulary(argv_file, [["--width", "3"]], ["-x", "--y"])
    assert words == ["-x", "--y", *GENERIC_TOKENS]
    assert argv_vocabulary(argv_file, [["--width", "3"]])[0] == "--from-file"
    assert argv_vocabulary(None, [["--width", "3"]])[:2] == ["--width", "3"]
