"""What a new user meets on the command line (issue 26): a table of commands, the exit
code each must give and the message it must print, and never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import srb
from tests.conftest import DEMO_TASK

STATE_FILE_COMMANDS = [
    ("runs", "cancel", "x"),
    ("runs", "list"),
    ("campaign", "cancel", "x"),
    ("gc",),
    ("tasks", "prepare", DEMO_TASK.name),
    ("report",),
    ("import", "."),
]


@pytest.mark.parametrize("command", STATE_FILE_COMMANDS, ids=" ".join)
def test_a_state_path_that_is_a_file_is_a_message_not_a_traceback(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    state = tmp_path / "state-file"
    state.write_text("not a folder")
    out = srb("--tasks", str(DEMO_TASK.parent), *command, state=state,
              env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert "Traceback" not in out.stderr + out.stdout
    assert out.returncode == 2, out.stderr
    assert f"--state {state}: not a directory" in out.stderr
    assert state.read_text() == "not a folder"


def test_doctor_does_not_tick_a_vendor_key_that_is_not_set(tmp_path: Path) -> None:
    out = srb("doctor", state=tmp_path, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stdout.splitlines() if "not set" in line]
    assert lines, out.stdout
    assert all(line.startswith("! upstream") for line in lines), lines


def _copy_task(root: Path) -> Path:
    copy = root / DEMO_TASK.name
    shutil.copytree(DEMO_TASK, copy, symlinks=True)
    return copy


def test_two_roots_holding_one_task_id_warn_once_naming_both_and_the_first_wins(
    tmp_path: Path,
) -> None:
    first = _copy_task(tmp_path / "one")
    second = _copy_task(tmp_path / "two")
    roots = ("--tasks", str(first.parent), "--tasks", str(second.parent))
    listed = srb(*roots, "tasks", "list", "--json", state=tmp_path / "state")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [t["path"] for t in doc["tasks"]] == [str(first)]
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, listed.stderr
    assert str(first) in listed.stderr and str(second) in listed.stderr
    shown = srb(*reversed_roots(roots), "tasks", "show", DEMO_TASK.name, "--json",
                state=tmp_path / "state")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["path"] == str(second)


def reversed_roots(roots: tuple[str, ...]) -> tuple[str, ...]:
    return (roots[2], roots[3], roots[0], roots[1])


def test_a_link_out_of_the_task_fails_validation_and_launch(tmp_path: Path) -> None:
    task = _copy_task(tmp_path / "tasks")
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:host-secret-26\n")
    (task / "instruction.md").unlink()
    (task / "instruction.md").symlink_to(secret)
    out = srb("tasks", "validate", "--strict", str(task), state=tmp_path / "state")
    assert out.returncode == 1
    assert f"instruction.md: link leaves the task directory (-> {secret})" in out.stdout
    assert "host-secret-26" not in out.stdout + out.stderr
    shown = srb("--tasks", str(task.parent), "tasks", "show", DEMO_TASK.name, "--json",
                state=tmp_path / "state")
    assert "host-secret-26" not in shown.stdout + shown.stderr
    launched = srb("--tasks", str(task.parent), "run", DEMO_TASK.name, "--agent", "untouched",
                   "--no-grade", state=tmp_path / "state",
                   env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert launched.returncode != 0
    assert "Traceback" not in launched.stderr
    assert "host-secret-26" not in launched.stdout + launched.stderr


def test_runs_show_takes_a_unique_prefix_and_names_candidates_of_an_ambiguous_one(
    tmp_path: Path,
) -> None:
    import asyncio

    from srb_tui.store import Store

    state = tmp_path / "state"

    async def two_runs() -> list[str]:
        async with await Store.open(state / "srb.sqlite3") as store:
            return [
                (await store.runs.create_run(task_id="demo", task_path="tasks/demo",
                                             agent="untouched")).id
                for _ in range(2)
            ]

    first, second = asyncio.run(two_runs())
    common = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    shown = srb("runs", "show", first[: common + 1], "--json", state=state)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["run"]["id"] == first
    ambiguous = srb("runs", "show", first[:common], state=state)
    assert ambiguous.returncode != 0
    assert first in ambiguous.stderr and second in ambiguous.stderr
    assert "Traceback" not in ambiguous.stderr


def test_hostile_paths_and_engine_urls_give_messages_not_tracebacks(tmp_path: Path) -> None:
    import asyncio

    from srb_tui.store import Store

    state = tmp_path / "state"

    async def one_run() -> None:
        async with await Store.open(state / "srb.sqlite3") as store:
            await store.runs.create_run(task_id="demo", task_path="tasks/demo", agent="untouched")

    asyncio.run(one_run())
    table = [
        (("report", "-o", str(tmp_path / "no" / "dir" / "r.md")), {}, 2, "does not exist"),
        (("report", "-o", str(tmp_path)), {}, 2, "is a directory"),
        (("doctor",), {"DOCKER_HOST": "tcp://256.1.1.1:99999"}, 1, "Port out of range"),
    ]
    for command, env, code, message in table:
        out = srb(*command, state=state, env=env)
        assert "Traceback" not in out.stdout + out.stderr, command
        assert out.returncode == code, (command, out.stderr)
        assert message in out.stdout + out.stderr, (command, out.stdout, out.stderr)


def test_global_options_are_accepted_after_the_subcommand(tmp_path: Path) -> None:
    state = tmp_path / "elsewhere"
    full = [sys_executable(), "-m", "srb_tui", "runs", "list", "--state", str(state)]
    import subprocess

    out = subprocess.run(full, capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr  # taken: that store is not there
    assert f"no store at {state / 'srb.sqlite3'}" in out.stderr


def sys_executable() -> str:
    import sys

    return sys.executable
