"""``srb tasks new ID --from-dir STATE_A --lang-from X --lang-to Y``: write a task.

The task is complete in the published schema (see the README's "Writing a task"): State A
packed from the folder, an offline reviewer configured by the task, a behavioural suite of
the author's command lines with State A's answers recorded on this machine, and six fuzz
adversaries over the entry point. The author then writes the reference port, and
``srb tasks validate`` / ``srb tasks record`` / ``srb run ID --agent replay:reference``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from rich.markup import escape

from srb_tui.authoring.languages import names as language_names
from srb_tui.authoring.plan import AuthoringError, Plan, make_plan
from srb_tui.authoring.scaffold import Recorded, record_expected, task_files, write_task
from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import DEFAULT_TASKS, Settings
from srb_tui.schema.published import validate_task

KIND_CODES = {"exists": codes.USAGE, "not_found": codes.NOT_FOUND, "usage": codes.USAGE}

EPILOG = """\
Each --case is one command line of the program, split like a shell would (no shell
runs): `-n 3 inputs/a.txt`; `< inputs/a.txt` feeds that file on standard input; write
--case=-x for a line that starts with '-'. Files
of --inputs DIR are reachable as inputs/NAME and also seed the fuzzers. State A's answers
are recorded by running the folder's entry point here (it needs State A's runtime on
this machine); --no-record skips that (run tests/behavioural/lib/record.py later).
The task is written under --tasks-root (default: the first task root, --tasks/SRB_TASKS).
exit codes: 0 written, validated and recorded; 1 written but validation or recording
failed; 2 bad usage (ID exists, empty folder, unknown language); 3 folder or file missing.
"""


def add_new_parser(tasks_sub: Any) -> None:
    p = tasks_sub.add_parser(
        "new", help="write a new task from a State A folder (see README: Writing a task)",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("task_id", metavar="ID", help="the new task's id and folder name")
    p.add_argument("--from-dir", required=True, type=Path, metavar="STATE_A",
                   help="the folder holding the program to port (State A)")
    p.add_argument("--lang-from", required=True, metavar="LANG",
                   help=f"State A's language ({', '.join(language_names())})")
    p.add_argument("--lang-to", required=True, metavar="LANG",
                   help="the language of the port (same choices)")
    p.add_argument("--entry", metavar="PATH",
                   help="the program, relative to STATE_A (default: the one file in bin/); "
                        "its #! line must name State A's interpreter")
    p.add_argument("--case", dest="cases", action="append", default=[], metavar='"ARGS"',
                   help="one command line the behavioural suite runs (repeatable)")
    p.add_argument("--cases-file", type=Path, metavar="FILE",
                   help="more command lines, one per line (# starts a comment)")
    p.add_argument("--inputs", type=Path, metavar="DIR",
                   help="input files the cases read (inputs/NAME); they also seed the fuzzers")
    p.add_argument("--title", help="one line describing the task")
    p.add_argument("--tasks-root", type=Path, metavar="DIR",
                   help="where to write the task (default: the first task root)")
    p.add_argument("--no-record", action="store_true",
                   help="do not run State A here to record the expected answers")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=cmd_new)


def _tasks_root(args: argparse.Namespace, settings: Settings) -> Path:
    root: Path = (args.tasks_root or settings.task_roots[0]).expanduser().resolve()
    if (root / "task.toml").is_file():
        raise AuthoringError(f"{root} is a task, not a folder of tasks: pass --tasks-root DIR")
    if root.exists() and not root.is_dir():
        raise AuthoringError(f"--tasks-root {root}: not a folder")
    return root


def _plan(args: argparse.Namespace, settings: Settings) -> Plan:
    return make_plan(
        args.task_id, args.from_dir.expanduser().resolve(), _tasks_root(args, settings),
        args.lang_from, args.lang_to, entry=args.entry, case_lines=args.cases,
        cases_file=args.cases_file, inputs_dir=args.inputs.resolve() if args.inputs else None,
        title=args.title,
    )


def cmd_new(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    try:
        plan = _plan(args, settings)
    except AuthoringError as exc:
        out.error(str(exc))
        return KIND_CODES[exc.kind]
    try:
        write_task(plan)
    except (RuntimeError, OSError) as exc:
        shutil.rmtree(plan.task_dir, ignore_errors=True)
        out.error(f"{plan.task_id}: could not write the task: {exc}")
        return codes.FAILED
    recorded = (Recorded(False, "skipped (--no-record)") if args.no_record
                else record_expected(plan.task_dir))
    written = task_files(plan.task_dir)
    load = validate_task(plan.task_dir)
    problems = [str(p) for p in load.errors]
    ok = load.ok and not problems and (recorded.ok or args.no_record)
    if out.json_mode:
        out.emit_json({"ok": ok, "task": plan.task_id, "path": str(plan.task_dir),
                       "entry": plan.entry, "cases": len(plan.cases), "files": written,
                       "recorded": recorded.ok, "record_output": recorded.output,
                       "problems": problems})
        return codes.OK if ok else codes.FAILED
    _report(out, plan, written, recorded, problems, args.no_record)
    return codes.OK if ok else codes.FAILED


def _report(out: Output, plan: Plan, written: list[str], recorded: Recorded,
            problems: list[str], args_no_record: bool) -> None:
    out.print(f"[green]wrote[/] [bold]{escape(plan.task_id)}[/] at {escape(str(plan.task_dir))}"
              f" ({len(written)} files; State A {len(plan.files)} files, entry "
              f"{escape(plan.entry)}, {len(plan.cases)} cases)")
    if recorded.ok:
        out.print(f"  recorded State A's answers: {escape(recorded.output)}")
    elif args_no_record:
        out.print("  State A's answers not recorded (--no-record): run "
                  f"python3 {escape(str(plan.task_dir))}/tests/behavioural/lib/record.py")
    else:
        out.error(f"State A's answers were not recorded: {recorded.output}. Fix it, then run "
                  f"python3 {plan.task_dir}/tests/behavioural/lib/record.py")
    for problem in problems:
        out.error(problem)
    default = DEFAULT_TASKS.resolve()
    where = "" if plan.task_dir.parent == default else f" --tasks {plan.task_dir.parent}"
    out.print("next:")
    out.print(f"  1. put your {escape(plan.lang_to.title)} port in "
              f"{escape(str(plan.task_dir / 'submissions' / 'reference'))}")
    for step in (f"srb{where} tasks validate {plan.task_id}",
                 f"srb{where} tasks record {plan.task_id}",
                 f"srb{where} run {plan.task_id} --agent replay:reference   (expect 100)"):
        out.print(f"  - {escape(step)}")
