"""Every ``srb`` command (found by walking the argparse tree, so a new one is covered
without being listed) against a table of hostile global options and paths: each ends
with a message and a code from the exit-code table, never a traceback (issue 26, 4)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from srb_tui import cli
from srb_tui.commands import exit_codes as codes
from tests.conftest import BUILTIN_TASKS, DEMO_TASK

# Commands that would do real work on a machine even when everything else is refused.
NEVER_RUN = {("images", "bootstrap")}
# Positional values by destination; anything else gets a name nothing has.
POSITIONALS = {"task": DEMO_TASK.name, "task_id": DEMO_TASK.name, "run_id": "r-nope",
               "target": "nope", "directory": ".", "file": "nope.csv"}
NOWHERE_DOCKER = "unix:///nonexistent/srb-test.sock"


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
            ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, (*path, name))


def _argv(path: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    argv = list(path)
    for action in parser._actions:
        if action.option_strings:
            if action.required:
                argv += [action.option_strings[0], "untouched"]
        elif action.nargs not in ("*", "?", argparse.REMAINDER):
            argv.append(POSITIONALS.get(action.dest, "nope"))
    return argv


COMMANDS = [_argv(path, parser) for path, parser in _leaves(cli.build_parser())
            if path and path not in NEVER_RUN]


def read_only_dir(tmp_path: Path) -> Path:
    """A folder nobody can write into: mode 0555 for a user, sysfs for root (which
    ignores file modes)."""
    if os.geteuid() == 0:
        return Path("/sys")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


def _hostile(tmp_path: Path, name: str) -> tuple[list[str], dict[str, str]]:
    state_file = tmp_path / "state-file"
    state_file.write_text("not a folder")
    return {
        "state-is-a-file": (["--state", str(state_file)], {}),
        "state-read-only": (["--state", str(read_only_dir(tmp_path))], {}),
        "tasks-nowhere": (["--tasks", "/nonexistent/tasks", "--state", str(tmp_path / "s")],
                          {}),
        "docker-host-garbage": (["--state", str(tmp_path / "s")],
                                {"DOCKER_HOST": "tcp://256.1.1.1:99999"}),
    }[name]


HOSTILE = ["state-is-a-file", "state-read-only", "tasks-nowhere", "docker-host-garbage"]


def _run(argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
         capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    for key in [k for k in os.environ if k.startswith("SRB_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("DOCKER_HOST", env.get("DOCKER_HOST", NOWHERE_DOCKER))
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse: usage errors
        code = exc.code if isinstance(exc.code, int) else codes.USAGE
    captured = capfd.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_command_meets_hostile_options_with_a_message(
    hostile: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert len(COMMANDS) > 20, COMMANDS
    globals_, env = _hostile(tmp_path, hostile)
    allowed = {code for code, _ in codes.TABLE}
    for listed in COMMANDS:
        # a required output folder (srb export -o) goes under tmp_path, not the cwd
        command = [str(tmp_path / "out") if i and listed[i - 1] in ("--output", "-o") else a
                   for i, a in enumerate(listed)]
        argv = [*globals_, "--tasks", str(BUILTIN_TASKS), *command] \
            if hostile != "tasks-nowhere" else [*globals_, *command]
        code, text = _run(argv, env, monkeypatch, capfd)
        assert "Traceback" not in text, (argv, text[-3000:])
        assert code in allowed, (argv, code, text[-2000:])
        if code != codes.OK:
            assert "error" in text or "✗" in text, (argv, code, text[-2000:])
    if hostile == "state-is-a-file":
        assert (tmp_path / "state-file").read_text() == "not a folder"


@pytest.mark.parametrize("output", ["/nonexistent/dir/r.md", "/tmp", "{tmp}"])
def test_report_output_paths_that_cannot_be_written_are_usage_errors(
    output: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    output = output.format(tmp=tmp_path)
    code, text = _run(["--state", str(tmp_path), "report", "-o", output], {}, monkeypatch,
                      capfd)
    assert "Traceback" not in text
    assert code == codes.USAGE, text
    assert f"-o {output}" in text
