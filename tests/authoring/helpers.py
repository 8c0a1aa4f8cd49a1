"""Running ``srb tasks new`` through its handler, as the CLI does."""

from __future__ import annotations

import argparse
from pathlib import Path

from srb_tui.commands import authoring
from srb_tui.commands.output import Output
from srb_tui.config import Settings

from .roman import CASES, write_inputs, write_state_a

TASK_ID = "roman-python-to-node"


def parse_new(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="srb")
    tasks = parser.add_subparsers(dest="command").add_parser("tasks")
    authoring.add_new_parser(tasks.add_subparsers(dest="tasks_command"))
    return parser.parse_args(["tasks", "new", *argv])


def run_new(settings: Settings, *argv: str, json_mode: bool = False) -> int:
    args = parse_new(*argv, *(["--json"] if json_mode else []))
    code: int = args.handler(args, settings, Output(json_mode=json_mode))
    return code


def roman_argv(base: Path, tasks_root: Path, task_id: str = TASK_ID) -> list[str]:
    """The command line that makes the roman task from fresh folders under ``base``."""
    state_a = write_state_a(base / "roman")
    inputs = write_inputs(base / "roman-inputs")
    argv = [task_id, "--from-dir", str(state_a), "--lang-from", "python", "--lang-to", "node",
            "--inputs", str(inputs), "--tasks-root", str(tasks_root)]
    for case in CASES:
        argv.append(f"--case={case}")
    return argv
