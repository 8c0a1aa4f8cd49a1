"""The exit-code table (``srb_tui/commands/exit_codes.py``, copied in the README) and the
commands held to it (issue 26, 12): a table of command lines, the code each must end with
and the words its message must hold; never a traceback."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from srb_tui import cli
from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.commands.run import run_exit_code
from srb_tui.store import Store
from srb_tui.store.lifecycle import MAIN_LINE
from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK, REPO

TASKS = ("--tasks", str(DEMO_TASK.parent))
# (command line, exit code, words the message holds)
TABLE: list[tuple[tuple[str, ...], int, str]] = [
    (("runs", "list", "--limit", "0"), codes.USAGE, "0 is not at least 1"),
    (("runs", "list", "--limit", "x"), codes.USAGE, "not a whole number"),
    (("runs", "show", "r-nope"), codes.NOT_FOUND, "r-nope"),
    # issue 35 item 10: as `runs show` and `report` say, the store named is not there
    (("runs", "list"), codes.NOT_FOUND, "no store at"),
    (("import", "/nonexistent/srb-job"), codes.NOT_FOUND,
     "/nonexistent/srb-job: no such directory"),
    (("import", str(REPO / "README.md")), codes.USAGE, "README.md: not a directory"),
    (("runs", "cancel", "r-nope"), codes.NOT_FOUND, "no store at"),
    (("--tasks", "/nonexistent/srb-tasks", "tasks", "list"), codes.NOT_FOUND,
     "task root /nonexistent/srb-tasks: no such directory"),
    (("--tasks", "/nonexistent/srb-tasks", "tasks", "show", "x"), codes.NOT_FOUND,
     "task root /nonexistent/srb-tasks"),
    ((*TASKS, "tasks", "show", "nope"), codes.NOT_FOUND, "no task 'nope'"),
    ((*TASKS, "tasks", "show", "demo01"), codes.NOT_FOUND,  # issue 35 item 13
     "no task 'demo01' under"),
    ((*TASKS, "tasks", "show", "demo01-csvtab-pyhton-to-node"), codes.NOT_FOUND,
     "(did you mean 'demo01-csvtab-python-to-node'?)"),
    ((*TASKS, "tasks", "validate", "/nonexistent/x"), codes.NOT_FOUND, "/nonexistent/x"),
    (("report", "--json", "--format", "csv"), codes.USAGE,
     "--json and --format csv conflict"),
    (("report", "--json", "--format", "json"), codes.NOT_FOUND, "no store at"),
    (("report", "-o", "/tmp"), codes.USAGE, "-o /tmp: is a directory"),
    (("report",), codes.NOT_FOUND, "no store at"),
    (("eval", "r-nope"), codes.NOT_FOUND, "no run 'r-nope'"),
    (("eval", "r-nope", "--budget", "5"), codes.NOT_FOUND,
     "`srb eval --budget` is deprecated"),
    (("campaign", "status", "nope"), codes.NOT_FOUND, "no store at"),
    (("runs", "frobnicate"), codes.USAGE, "invalid choice"),
    ((), codes.USAGE, "the console needs a terminal"),
    (("console",), codes.USAGE, "the console needs a terminal"),
]


@pytest.mark.parametrize(("command", "code", "message"), TABLE,
                         ids=[" ".join(c) or "bare srb" for c, _, _ in TABLE])
def test_each_command_ends_with_its_code_and_message(
    command: tuple[str, ...], code: int, message: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    out = srb(*command, state=state, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    text = out.stdout + out.stderr
    assert "Traceback" not in text
    assert out.returncode == code, (command, out.returncode, text)
    assert message in text, (command, text)
    assert "\x1b[" not in out.stdout  # nothing of a terminal UI went into the pipe
    assert not (state / "srb.sqlite3").exists()  # no command here makes a store to say no


def test_json_mode_keeps_its_one_document_when_a_command_fails(tmp_path: Path) -> None:
    """``--json`` promises one JSON document on stdout: a command that ends non-zero
    without one prints the error as that document (issue 35 item 10: ``srb run --json`` on
    a config error printed nothing)."""
    state = tmp_path / "state"
    out = srb("runs", "list", "--json", state=state)
    doc = json.loads(out.stdout)
    assert out.returncode == codes.NOT_FOUND
    assert doc["error"]["exit_code"] == codes.NOT_FOUND
    assert any("no store at" in m for m in doc["error"]["messages"]), doc
    assert "no store at" in out.stderr  # people still read it where errors go
    out = srb(*TASKS, "run", DEMO_TASK.name, "--agent", "untouched", "--json", state=state,
              env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    doc = json.loads(out.stdout)
    assert out.returncode == codes.INFRA and doc["error"]["exit_code"] == codes.INFRA
    assert any("not reachable" in m for m in doc["error"]["messages"]), doc


def test_the_readme_and_srb_help_carry_the_table(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    helped = srb("--help", state=tmp_path).stdout
    for code, text in codes.TABLE:
        assert f"| {code} |" in readme, code
        assert f"  {code:<4} {text}" in helped, code


def _every_parser(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _every_parser(child)
    return found


def test_every_json_option_says_what_it_does() -> None:
    bare = [p.prog for p in _every_parser(cli.build_parser())
            for a in p._actions if "--json" in a.option_strings and not a.help]
    assert bare == []


def test_run_budget_names_say_whose_budget_they_are() -> None:
    parser = cli.build_parser()
    run = parser.parse_args(["run", "demo", "--agent", "untouched", "--agent-budget", "9"])
    old = parser.parse_args(["run", "demo", "--agent", "untouched", "--budget", "9"])
    assert run.budget == old.budget == 9.0
    ev = parser.parse_args(["eval", "r-1", "--adversary-budget", "5"])
    assert ev.budget == 5.0 and ev.old_budget is None


def test_a_run_that_ended_infra_error_or_invalid_is_infra_not_ok(tmp_path: Path) -> None:
    async def runs() -> list[int]:
        async with await Store.open(tmp_path / "srb.sqlite3") as store:
            found = []
            for end, valid in (("infra_error", None), ("scored", False), ("scored", True)):
                run = await store.runs.create_run(task_id="demo", task_path="tasks/demo",
                                                  agent="untouched")
                for step in ("infra_error",) if end == "infra_error" else MAIN_LINE[1:]:
                    await store.runs.transition(run.id, step)
                record = await store.runs.update_run(run.id, valid=valid, score=0.0)
                found.append(run_exit_code(record, Output()))
            return found

    assert asyncio.run(runs()) == [codes.INFRA, codes.INFRA, codes.OK]


def test_prepare_verify_tree_that_differs_exits_failed_for_people_too(tmp_path: Path) -> None:
    out = srb(*TASKS, "tasks", "prepare", DEMO_TASK.name, "--offline", "--verify-tree",
              str(DEMO_TASK / "submissions" / "reference"), state=tmp_path)
    assert out.returncode == codes.FAILED, out.stderr
    assert "content differs" in out.stdout


def test_bare_srb_in_a_pipe_ends_at_once(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "srb_tui", "--state", str(tmp_path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == codes.USAGE
    assert done.stdout == ""


@pytest.mark.docker
def test_srb_run_that_ends_infra_error_exits_infra_and_names_bootstrap(tmp_path: Path) -> None:
    """A real launch on the engine with a base image it does not have: the run ends
    infra_error, ``srb run`` exits INFRA (not 0), the message names `srb images bootstrap`
    and prints ``:x:`` in an image tag as itself (no emoji)."""
    import json

    absent = "srb-test/no-such-base:x"
    out = srb("--tasks", str(DEMO_TASK.parent), "run", DEMO_TASK.name, "--agent", "untouched",
              "--no-grade", "--json", state=tmp_path, env={"SRB_BASE_IMAGE": absent})
    assert "Traceback" not in out.stderr
    assert out.returncode == codes.INFRA, out.stderr[-2000:]
    assert json.loads(out.stdout)["run"]["status"] == "infra_error"
    assert f"no base image {absent}: run `srb images bootstrap`" in out.stderr
