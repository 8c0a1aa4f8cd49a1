"""The ``srb`` entry point: the console with no arguments, headless commands otherwise.

Global options come before the subcommand: ``--tasks DIR`` (repeatable; env
``SRB_TASKS``, colon-separated) and ``--state DIR`` (env ``SRB_STATE_DIR``).
Every listing command takes ``--json`` and then prints exactly one JSON document.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from srb_tui import __version__
from srb_tui.commands import (
    campaign,
    doctor,
    grading,
    images,
    importer,
    labels,
    report,
    run,
    runs,
    tasks,
)
from srb_tui.commands.output import Output
from srb_tui.config import resolve_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="srb",
        description="Run and judge whole-repository stack migrations by coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"srb {__version__}")
    parser.add_argument(
        "--tasks", action="append", metavar="DIR",
        help="a task directory or a folder of them (repeatable; default ./tasks, env SRB_TASKS)",
    )
    parser.add_argument(
        "--state", metavar="DIR", help="state directory (default ./state, env SRB_STATE_DIR)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("console", help="open the console (the default)")
    tasks.add_parser(sub)
    runs.add_parser(sub)
    grading.add_eval_parser(sub)
    run.add_parsers(sub)
    images.add_parser(sub)
    doctor.add_parser(sub)
    report.add_parser(sub)  # reports branch
    labels.add_parser(sub)  # reports branch
    importer.add_parser(sub)  # reports branch
    campaign.add_parser(sub)  # reports branch
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = resolve_settings(args.tasks, args.state)
    if args.command in (None, "console"):
        return _console(settings)
    out = Output(json_mode=getattr(args, "json", False))
    handler = args.handler
    try:
        code: int = handler(args, settings, out)
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    return code


def _console(settings: object) -> int:
    from srb_tui.config import Settings
    from srb_tui.ui.app import create_app

    assert isinstance(settings, Settings)
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    create_app(settings).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
