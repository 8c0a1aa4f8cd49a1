"""The ``srb`` entry point: the console with no arguments, headless commands otherwise.

Global options come before or after the subcommand: ``--tasks DIR`` (repeatable; env
``SRB_TASKS``, colon-separated) and ``--state DIR`` (env ``SRB_STATE_DIR``).
Every listing command takes ``--json`` and then prints exactly one JSON document.
Exit codes are one table for every command: :mod:`srb_tui.commands.exit_codes`.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from srb_tui import __version__
from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import resolve_settings

if TYPE_CHECKING:
    from srb_tui.config import Settings

# Subcommand -> (module under srb_tui.commands, its registration function), in help order.
# Only the module of the command being run is imported (``srb run`` does not load the
# campaign scheduler, the reports or their dependencies); help and errors load them all.
_COMMANDS: dict[str, tuple[str, str]] = {
    "tasks": ("tasks", "add_parser"),
    "runs": ("runs", "add_parser"),
    "eval": ("grading", "add_eval_parser"),
    "run": ("run", "add_parsers"),
    "resume": ("run", "add_parsers"),
    "gc": ("run", "add_parsers"),
    "images": ("images", "add_parser"),
    "doctor": ("doctor", "add_parser"),
    "report": ("report", "add_parser"),
    "labels": ("labels", "add_parser"),
    "import": ("importer", "add_parser"),
    "export": ("export", "add_parser"),
    "campaign": ("campaign", "add_parser"),
}
_GLOBAL_WITH_VALUE = ("--tasks", "--state")
JSON_HELP = "print exactly one JSON document on stdout (messages stay on stderr)"
# A path the user gave that cannot be used is a usage error; other OS failures are srb's.
_USAGE_ERRNOS = {errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.EACCES,
                 errno.EPERM, errno.EROFS, errno.ENAMETOOLONG}


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (after the global options), if any."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _GLOBAL_WITH_VALUE:
            skip = True
        elif arg.startswith("-"):
            continue
        else:
            return arg
    return None


def _modules_needed(named: str | None, helping: bool) -> str | None:
    """Which command modules the parser needs: the named command's (its own name), none
    (``""``: ``srb --version``, the console), or every one (None: help, an unknown word)."""
    if helping or (named is not None and named not in _COMMANDS and named != "console"):
        return None
    return named if named in _COMMANDS else ""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) one with just that subcommand's module loaded (none
    for ``""``)."""
    parser = argparse.ArgumentParser(
        prog="srb",
        description="Run and judge whole-repository stack migrations by coding agents.",
        epilog=codes.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
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
    done: set[tuple[str, str]] = set()
    for name, entry in _COMMANDS.items():
        if (only is not None and name != only) or entry in done:
            continue
        done.add(entry)
        module = importlib.import_module(f"srb_tui.commands.{entry[0]}")
        getattr(module, entry[1])(sub)
    _accept_globals_anywhere(parser)
    return parser


def _accept_globals_anywhere(parser: argparse.ArgumentParser) -> None:
    """``--tasks``/``--state`` also after the subcommand (``srb runs list --state X``):
    every subcommand parser takes them too, setting the value only when given."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for child in dict.fromkeys(action.choices.values()):
            for option in child._actions:
                if "--json" in option.option_strings and not option.help:
                    option.help = JSON_HELP
            taken = {o for a in child._actions for o in a.option_strings}
            if "--tasks" not in taken:
                child.add_argument("--tasks", action="append", metavar="DIR",
                                   default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            if "--state" not in taken:
                child.add_argument("--state", metavar="DIR", default=argparse.SUPPRESS,
                                   help=argparse.SUPPRESS)
            _accept_globals_anywhere(child)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    named = _command_of(argv)
    helping = any(a in ("-h", "--help") for a in argv)
    if named == "run" and not helping:
        _read_early()
    parser = build_parser(_modules_needed(named, helping))
    args = parser.parse_args(argv)
    settings = resolve_settings(args.tasks, args.state)
    out = Output(json_mode=getattr(args, "json", False))
    return out.finish(_dispatch(args, settings, out))


def _read_early() -> None:
    """Start what a launch waits for that needs no module of srb's core: srb's source
    commit (two git processes) for the run's launch record, read on a thread while the
    command's modules load (bench/bench_launch.py)."""
    from srb_tui.service.source_commit import read_early

    read_early()


def _dispatch(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    state = settings.state_dir
    if state.exists() and not state.is_dir():
        out.error(f"--state {state}: not a directory (the state directory holds srb.sqlite3, "
                  "runs/ and cache/; give a folder)")
        return codes.USAGE
    if args.command in (None, "console"):
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            out.error("the console needs a terminal (stdin and stdout are not one); "
                      "run a headless command instead, see `srb --help`")
            return codes.USAGE
        return _console(settings)
    handler = args.handler
    try:
        code: int = handler(args, settings, out)
    except KeyboardInterrupt:
        out.error("interrupted")
        return codes.INTERRUPTED
    except OSError as exc:  # a path the user gave that cannot be used: a message, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        out.error(f"{where}{exc.strerror or exc}")
        return codes.USAGE if exc.errno in _USAGE_ERRNOS else codes.INFRA
    except Exception as exc:
        unavailable = _unavailable(exc)
        if unavailable is None:
            raise
        out.error(unavailable)
        return codes.INFRA
    return code


def _unavailable(exc: Exception) -> str | None:
    """The message of a failure of what srb stands on (the engine, the store) that a
    command let through; None for anything else (a bug: its traceback is wanted)."""
    from srb_tui.service.app import EngineUnreachable, RunnerError
    from srb_tui.store.errors import StoreError

    if isinstance(exc, EngineUnreachable | RunnerError | StoreError):
        return str(exc)
    return None


def _console(settings: object) -> int:
    from srb_tui.config import Settings
    from srb_tui.ui.app import create_app

    assert isinstance(settings, Settings)
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    create_app(settings).run()
    return codes.OK


if __name__ == "__main__":
    sys.exit(main())
