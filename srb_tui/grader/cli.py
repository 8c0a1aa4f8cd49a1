"""Command line of the standalone grader: ``python3 -m <pkg> SUBCOMMAND ...``.

Subcommands:
  suite       run a Stage II suite and write its stage result
  tools       serve the reviewer tools over stdin/stdout (JSON lines)
  candidate   adjudicate one Stage III candidate and print its verdict as JSON
  fuzz        run one model-free fuzz adversary (Stage III) and write its result
  fuzz-http   the same for a service: differential HTTP requests against both trees' servers
  launch      start submission code as the submission uid (the srb-submission launcher)
  lockdown    make the grader's folders private and close world-writable paths (once)
  fingerprint print the grader's fingerprint
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .contract import EXIT_OK, EXIT_UNUSABLE

# Each subcommand imports what it runs with when it runs, and its parser's options are
# declared only when it is the one invoked: the grader is a fresh interpreter per exec, and
# importing every subcommand's modules cost each Stage II `suite` ~30 ms in the container.


def _suite_args(suite: argparse.ArgumentParser) -> None:
    suite.add_argument("--suite", required=True, help="suite folder (or its suite.toml)")
    suite.add_argument("--repo", required=True, help="the submission tree to test")
    suite.add_argument("--original", help="State A tree, if modules compare against it")
    suite.add_argument("--result", required=True, help="stage result file to write")
    suite.add_argument("--work", required=True, help="scratch folder for modules and logs")
    suite.add_argument("--task", help="task id to stamp (default: suite.toml's task)")
    suite.add_argument("--grace", type=float, default=5.0, help="TERM→KILL grace, seconds")
    suite.add_argument("--private", help="grader-only folder for logs and module results")
    suite.add_argument(
        "--scan", action="store_true", help="an audit scan.toml (advisory; SRB_SCAN=1 set)"
    )
    suite.add_argument(
        "--repo-source", help="copy this tree to --repo as the submission uid first"
    )
    suite.add_argument(
        "--keep-env", action="append", default=[], metavar="NAME",
        help="an SRB_* name the image declares, passed on to modules (repeatable)",
    )


def _lockdown_args(lock: argparse.ArgumentParser) -> None:
    lock.add_argument("--private", nargs="*", default=[], metavar="DIR")


def _tools_args(tools: argparse.ArgumentParser) -> None:
    tools.add_argument("--original", required=True)
    tools.add_argument("--submission", required=True)
    tools.add_argument(
        "--allow",
        nargs="*",
        default=[],
        metavar="CMD",
        help="program basenames the run tool may start",
    )
    tools.add_argument("--run-timeout", type=float, default=60.0)


def _rounds_args(name: str) -> Callable[[argparse.ArgumentParser], None]:
    def add(parser: argparse.ArgumentParser) -> None:
        from . import cli_rounds

        {"candidate": cli_rounds.candidate_args, "fuzz": cli_rounds.fuzz_args,
         "fuzz-http": cli_rounds.fuzz_http_args}[name](parser)

    return add


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None] | None]] = {
    "suite": ("run a behavioural suite (Stage II)", _suite_args),
    "lockdown": ("make grader folders private (run once, as uid 0)", _lockdown_args),
    "launch": ("run submission code as the submission uid", None),
    "tools": ("serve reviewer tools as JSON lines on stdin/stdout", _tools_args),
    "candidate": ("adjudicate one Stage III candidate", _rounds_args("candidate")),
    "fuzz": ("run one differential fuzz adversary (Stage III)", _rounds_args("fuzz")),
    "fuzz-http": ("run one differential HTTP fuzz adversary", _rounds_args("fuzz-http")),
    "fingerprint": ("print the grader fingerprint", None),
}
"""Each subcommand's help line and the function that declares its options."""


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The grader's parser. Given the subcommand invoked, only its options are declared
    (the others are listed by name and help, as ``--help`` shows them)."""
    parser = argparse.ArgumentParser(prog="grader", description="srb's standalone stage grader")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, declare) in SUBCOMMANDS.items():
        child = sub.add_parser(name, help=help_text, add_help=name != "launch")
        if declare is not None and command in (None, name):
            declare(child)
    return parser


def _run_suite(args: argparse.Namespace) -> int:
    from .suite.lines_out import LinesOut, checks_line, progress_line, result_line
    from .suite.manifest import SuiteError, load_suite
    from .suite.phases import Phases
    from .suite.run import run_suite, stage_submission, write_suite_error

    result = Path(args.result)
    phases = Phases()
    if args.repo_source:
        try:
            with phases.timed("stage_submission"):
                stage_submission(Path(args.repo_source), Path(args.repo))
        except OSError as exc:
            write_suite_error(result, args.task or "", f"cannot stage the submission: {exc}")
            print(f"grader: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
    try:
        suite = load_suite(args.suite, scan=bool(getattr(args, "scan", False)))
    except SuiteError as exc:
        write_suite_error(
            result, args.task or "", f"cannot use {exc.path}: " + "; ".join(exc.problems)
        )
        print(f"grader: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    for label, value in (("--repo", args.repo), ("--original", args.original)):
        if value is not None and not Path(value).is_dir():
            message = f"{label} {value} is not a folder"
            write_suite_error(result, args.task or suite.task, message)
            print(f"grader: {message}", file=sys.stderr)
            return EXIT_UNUSABLE
    sys.stdout.flush()
    lines = LinesOut()
    try:
        run_suite(
            suite,
            repo=Path(args.repo),
            original=Path(args.original) if args.original else None,
            result_path=result,
            work_root=Path(args.work),
            task=args.task,
            grace_sec=args.grace,
            private_root=Path(args.private) if args.private else None,
            keep_env=frozenset(args.keep_env),
            progress=lambda doc: lines.put(progress_line(doc)),
            phases=phases,
            recorded=lambda module, checks: lines.put(checks_line(module, checks)),
            written_out=lambda document, count: lines.put(result_line(document, count)),
        )
    finally:
        lines.close()
    return EXIT_OK


def _trees_missing(args: argparse.Namespace) -> bool:
    """Say (on stderr) which of --original / --submission is not a folder; True if one is."""
    for label, value in (("--original", args.original), ("--submission", args.submission)):
        if not Path(value).is_dir():
            print(f"grader: {label} {value} is not a folder", file=sys.stderr)
            return True
    return False


def _run_tools(args: argparse.Namespace) -> int:
    from .audit.tools import Toolbox, ToolLimits, serve
    from .cli_rounds import trees_missing

    if trees_missing(args):
        return EXIT_UNUSABLE
    toolbox = Toolbox(
        args.original,
        args.submission,
        allow=args.allow,
        limits=ToolLimits(run_timeout_sec=args.run_timeout),
    )
    return serve(toolbox, sys.stdin, sys.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["launch"]:
        from .boundary.launch import main as launch_main

        return launch_main(raw[1:])
    args = _parser(raw[0] if raw and raw[0] in SUBCOMMANDS else None).parse_args(raw)
    if args.command == "lockdown":
        from .boundary.lockdown import lockdown
        from .boundary.sandbox import MAX_SLOTS, load_limits

        base = load_limits().uid_base
        uids = range(base, base + MAX_SLOTS)
        print(json.dumps(lockdown(args.private, uids)))
        return EXIT_OK
    if args.command == "suite":
        return _run_suite(args)
    if args.command == "tools":
        return _run_tools(args)
    if args.command in ("candidate", "fuzz", "fuzz-http"):
        from . import cli_rounds

        run = {"candidate": cli_rounds.run_candidate, "fuzz": cli_rounds.run_fuzz,
               "fuzz-http": cli_rounds.run_fuzz_http}[args.command]
        return run(args)
    from .fingerprint import fingerprint

    print(fingerprint())
    return EXIT_OK
