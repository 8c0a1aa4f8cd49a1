"""``srb tasks list|show|validate|prepare`` (``record``: grading.py; ``new``: authoring.py;
``audit-probe``: audit_probe.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import usable_task
from srb_tui.commands.output import Output, plain_columns
from srb_tui.config import Settings
from srb_tui.schema import Problem, TaskLoad
from srb_tui.schema.disk import STATE_A_FILES
from srb_tui.schema.loader import run_needs
from srb_tui.schema.published import validate_task
from srb_tui.service.catalog import Catalog, find_task, load_catalog, summarise, task_hint
from srb_tui.service.catalog import task_dirs as catalog_dirs


def add_parser(sub: Any) -> None:
    p = sub.add_parser("tasks", help="list, show, validate and prepare tasks")
    tsub = p.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    ls = tsub.add_parser("list", help="every task under the task roots")
    ls.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ls.set_defaults(handler=cmd_list)

    show = tsub.add_parser("show", help="one task in detail")
    show.add_argument("task_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="one JSON document on stdout")
    show.set_defaults(handler=cmd_show)

    val = tsub.add_parser("validate", help="validate task directories, reporting every problem")
    val.add_argument("paths", nargs="*", metavar="PATH|ID",
                     help="task directories or folders of them, or task ids found under the "
                          "task roots (default: the task roots)")
    val.add_argument("--schema-only", action="store_true",
                     help="check the manifests only, not the files they refer to")
    val.add_argument("--strict", action="store_true",
                     help="also fail when State A's archive or digest (or a file only the "
                          "published harness reads) is absent; files a run needs always fail")
    val.add_argument("--json", action="store_true", help="one JSON document on stdout")
    val.set_defaults(handler=cmd_validate)

    prep = tsub.add_parser("prepare", help="fetch, verify and cache a task's State A")
    prep.add_argument("task_id", metavar="ID")
    prep.add_argument("--offline", action="store_true", help="never use the network")
    prep.add_argument("--verify-tree", metavar="DIR",
                      help="also compare DIR with State A by content (file list and hashes)")
    prep.add_argument("--json", action="store_true", help="one JSON document on stdout")
    prep.set_defaults(handler=cmd_prepare)

    from srb_tui.commands.audit_probe import add_probe_parser
    from srb_tui.commands.authoring import add_new_parser
    from srb_tui.commands.grading import add_record_parser
    from srb_tui.commands.strength import add_mutants_parser
    from srb_tui.commands.strength_mark import add_equivalent_parser
    from srb_tui.commands.strength_run import add_strength_parser

    add_record_parser(tsub)
    add_new_parser(tsub)
    add_probe_parser(tsub)
    add_mutants_parser(tsub)
    add_strength_parser(tsub)
    add_equivalent_parser(tsub)


def problem_json(p: Problem) -> dict[str, Any]:
    return {"file": p.file, "key": p.key, "line": p.line, "kind": p.kind, "message": p.message}


def load_json(load: TaskLoad) -> dict[str, Any]:
    doc: dict[str, Any] = summarise(load).to_json()
    doc["ok"] = load.ok
    doc["problems"] = [problem_json(p) for p in load.problems]
    return doc


def _warn_duplicates(out: Output, catalog: Catalog) -> None:
    for message in catalog.warnings:
        out.warn(message)


def missing_roots(settings: Settings, out: Output) -> bool:
    """Name every task root that does not exist (``--tasks /nonexistent``): NOT_FOUND."""
    missing = [r for r in settings.task_roots if not r.exists()]
    for root in missing:
        out.error(f"task root {root}: no such directory (pass --tasks DIR or set SRB_TASKS)")
    return bool(missing)


def cmd_list(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if missing_roots(settings, out):
        return codes.NOT_FOUND
    catalog = load_catalog(settings.task_roots)
    summaries = catalog.summaries()
    needed = {load.task_id: len(load.missing) for load in catalog.loads}  # a run needs them
    _warn_duplicates(out, catalog)
    if out.json_mode:
        out.emit_json({"roots": [str(r) for r in settings.task_roots],
                       "tasks": [{**s.to_json(), "missing": needed.get(s.task_id, 0)}
                                 for s in summaries],
                       "warnings": catalog.warnings})
        return codes.OK
    if not summaries:
        out.print(f"No tasks under {', '.join(str(r) for r in settings.task_roots)}. "
                  "Use --tasks DIR or SRB_TASKS.")
        return codes.OK
    if out.piped:
        words = {"ok": "ok", "incomplete": "{absent} absent", "invalid": "{errors} error(s)"}
        rows = [("TASK", "CLASS", "STACKS", "BUDGET", "GATES", "MODS", "ADV", "STATUS")]
        for s in summaries:
            status = words[s.status].format(absent=s.absent, errors=s.errors)
            if s.status == "incomplete" and needed.get(s.task_id):
                status = f"{needed[s.task_id]} missing"
            rows.append((s.task_id, s.category, s.stacks,
                         "—" if s.budget_sec is None else f"{s.budget_sec / 3600:g} h",
                         str(s.gates), str(s.modules), str(s.adversaries), status))
        out.lines(plain_columns(rows).splitlines())
        return codes.OK
    table = Table(title="Tasks", title_justify="left")
    table.add_column("Task", overflow="fold", ratio=3)
    table.add_column("Class", overflow="ellipsis", ratio=1)
    table.add_column("Stacks", overflow="fold", ratio=2)
    for col in ("Budget", "Gates", "Mods", "Adv", "Status"):
        table.add_column(col, no_wrap=True)
    for s in summaries:
        budget = "—" if s.budget_sec is None else f"{s.budget_sec / 3600:g} h"
        status = {"ok": "[green]ok[/]", "incomplete": f"[yellow]{s.absent} absent[/]",
                  "invalid": f"[red]{s.errors} error(s)[/]"}[s.status]
        if s.status == "incomplete" and needed.get(s.task_id):
            status = f"[red]{needed[s.task_id]} missing[/]"
        table.add_row(escape(s.task_id), escape(s.category),
                      escape(s.stacks), budget,
                      str(s.gates), str(s.modules), str(s.adversaries), status)
    out.print(table)
    return codes.OK


def cmd_show(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if missing_roots(settings, out):
        return codes.NOT_FOUND
    catalog = load_catalog(settings.task_roots)
    _warn_duplicates(out, catalog)
    load = catalog.find(args.task_id)
    if load is None:
        out.error(f"no task {args.task_id!r} under "
                  f"{', '.join(str(r) for r in settings.task_roots)}"
                  f"{task_hint(settings.task_roots, args.task_id)}")
        return codes.NOT_FOUND
    doc = load_json(load)
    task = load.task
    if task is not None:
        doc["gates"] = task.gate_ids
        doc["modules"] = task.module_ids
        doc["adversaries"] = task.adversary_ids
        doc["instruction"] = task.instruction
    if out.json_mode:
        out.emit_json(doc)
        return codes.OK
    out.print(f"[bold]{escape(load.task_id)}[/]  {escape(str(load.path))}")
    for key in ("title", "category", "state_a", "state_b"):
        if doc.get(key):
            out.print(f"  {key}: {escape(str(doc[key]))}")
    if task is not None:
        out.print(f"  gates ({len(task.gate_ids)}): {escape(', '.join(task.gate_ids))}")
        out.print(f"  modules ({len(task.module_ids)}): {escape(', '.join(task.module_ids))}")
        out.print(f"  adversaries ({len(task.adversary_ids)}): "
                  f"{escape(', '.join(task.adversary_ids))}")
    _print_problems(out, load)
    return codes.OK


def _print_problems(out: Output, load: TaskLoad) -> None:
    if not load.problems:
        out.print("  [green]valid[/]")
        return
    for p in load.problems:
        colour = {"error": "red", "absent": "yellow"}.get(p.kind, "dim")
        out.print(f"  [{colour}]{p.kind}[/] {escape(str(p))}")


def _validate_roots(given: list[str], settings: Settings) -> list[Path]:
    """Each PATH as given; one that is not there but is a task id under the task roots
    (as ``tasks show`` takes one) is that task's directory."""
    roots = []
    for text in given:
        path = Path(text)
        if not path.exists() and "/" not in text:
            found = find_task(settings.task_roots, text)
            path = found.path if found is not None else path
        roots.append(path)
    return roots


def cmd_validate(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    roots = (_validate_roots(args.paths, settings) if args.paths
             else list(settings.task_roots))
    missing = [r for r in roots if not r.exists()]
    task_dirs, duplicates = catalog_dirs(roots)
    for duplicate in duplicates:
        out.warn(duplicate.message)
    loads = [validate_task(p, schema_only=args.schema_only) for p in task_dirs]
    errors = sum(len(load.errors) for load in loads)
    absent = sum(len(load.absent) for load in loads)
    needed = sum(len(load.missing) for load in loads)  # absent files a run needs: errors
    state_a = sum(len(load.state_a_absent) for load in loads)
    failed = (errors > 0 or needed > 0 or bool(missing) or not loads
              or (args.strict and absent > 0))
    code = (codes.NOT_FOUND if missing or not loads else codes.FAILED) if failed else codes.OK
    if out.json_mode:
        out.emit_json({
            "ok": not failed,
            "schema_only": args.schema_only,
            "missing_paths": [str(m) for m in missing],
            "tasks": [load_json(load) for load in loads],
            "errors": errors,
            "missing": needed,
            "state_a_absent": state_a,
            "absent": absent,
        })
        return code
    for m in missing:
        out.error(f"{m}: no such file, directory or task id (task roots: "
                  f"{', '.join(str(r) for r in settings.task_roots)})")
    if not loads and not missing:
        out.error(f"no task.toml found under {', '.join(str(r) for r in roots)}")
    for load in loads:
        mark = "[green]✓[/]" if load.ok and not load.missing else "[red]✗[/]"
        out.print(f"{mark} [bold]{escape(load.task_id)}[/]  {escape(str(load.path))}")
        for p in load.problems:
            kind, colour = problem_label(p)
            out.print(f"    [{colour}]{kind}[/] {escape(str(p))}")
    out.print(f"{len(loads)} task(s): {errors} error(s), {needed} missing file(s) a run "
              f"needs, {state_a} State A file(s) absent, {absent - needed - state_a} other "
              "absent" + (" (schema only)" if args.schema_only else ""))
    return code


def problem_label(p: Problem) -> tuple[str, str]:
    """The word and colour a problem is printed with: an absent file a run needs is
    ``missing`` (an error), State A's archive ``state-a`` (its own category)."""
    if run_needs(p):
        return "missing", "red"
    if p.kind == "absent" and p.file in STATE_A_FILES:
        return "state-a", "yellow"
    return {"error": ("error", "red"), "absent": ("absent", "yellow")}.get(
        p.kind, (p.kind, "dim"))


def cmd_prepare(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    import asyncio

    from srb_tui.service.app import Services, StateAError

    services = Services(settings)
    load = usable_task(services.catalog, settings, args.task_id, out)
    if isinstance(load, int):
        return load

    def progress(msg: str) -> None:
        if not out.json_mode:
            out.err.print(f"[dim]{escape(msg)}[/]")

    try:
        prepared = asyncio.run(
            services.prepare_state_a(load.task, offline=args.offline, progress=progress)
        )
    except StateAError as exc:
        out.error(f"{load.task_id}: {exc}")
        return codes.INFRA
    doc: dict[str, Any] = {
        "task": load.task_id,
        "source": prepared.source,
        "sha256": prepared.sha256,
        "archive": None if prepared.archive is None else str(prepared.archive),
        "tree": str(prepared.tree),
        "file_count": prepared.file_count,
        "total_bytes": prepared.total_bytes,
        "content_digest": prepared.content_digest,
        "from_cache": prepared.from_cache,
    }
    code = codes.OK
    if args.verify_tree:
        target = Path(args.verify_tree)
        if not target.is_dir():
            out.error(f"--verify-tree {target}: not a directory")
            return codes.USAGE if target.exists() else codes.NOT_FOUND
        diff = services.compare_trees(prepared.tree, target)
        doc["verify_tree"] = {
            "path": str(target), "identical": diff.identical, "added": list(diff.added),
            "removed": list(diff.removed), "changed": list(diff.changed),
        }
        code = codes.OK if diff.identical else codes.FAILED
    if out.json_mode:
        out.emit_json(doc)
        return code
    out.print(f"[green]State A ready[/] for [bold]{escape(load.task_id)}[/]"
              f"{' (from cache)' if prepared.from_cache else ''}")
    out.print(f"  source: {escape(prepared.source)}")
    out.print(f"  sha256: {prepared.sha256}")
    out.print(f"  tree:   {escape(str(prepared.tree))} "
              f"({prepared.file_count} files, {prepared.total_bytes} bytes)")
    if args.verify_tree:
        vt = doc["verify_tree"]
        verdict = "[green]same content[/]" if code == codes.OK else "[red]content differs[/]"
        out.print(f"  {escape(args.verify_tree)}: {verdict} "
                  f"(+{len(vt['added'])} −{len(vt['removed'])} ~{len(vt['changed'])})")
    return code
