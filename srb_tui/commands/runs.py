"""``srb runs list|show``: the run history from the store."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.markup import escape
from rich.table import Table

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import run_filter
from srb_tui.commands.arg_types import positive_int
from srb_tui.commands.output import Output, plain_columns
from srb_tui.config import Settings
from srb_tui.service.app import open_service
from srb_tui.service.run.run_node import node_label
from srb_tui.service.views.agent_report import agent_summary, cost_text
from srb_tui.service.views.history import load_run_rows
from srb_tui.store import RunNotFound, StoreError
from srb_tui.store.errors import AmbiguousRunId
from srb_tui.store.provenance import Provenance


def add_parser(sub: Any) -> None:
    p = sub.add_parser("runs", help="list and show stored runs")
    rsub = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    ls = rsub.add_parser("list", help="every stored run, newest first")
    ls.add_argument("filter", nargs="*", metavar="FILTER",
                    help="the Runs screen's filter words: task:ID status:S agent:NAME "
                         "model:M node:NAME (local: the local backend), other words as text")
    ls.add_argument("--limit", type=positive_int, default=200, metavar="N",
                    help="at most N runs, newest first (default 200)")
    ls.add_argument("-q", "--quiet", action="store_true", help="only the run ids, one a line")
    ls.add_argument("--no-trunc", action="store_true",
                    help="plain columns, nothing cut (also the default when stdout is no tty)")
    ls.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ls.set_defaults(handler=cmd_list)
    show = rsub.add_parser("show", help="everything recorded about one run")
    show.add_argument("run_id", metavar="ID", help="a run id or a unique prefix of one")
    show.add_argument("--json", action="store_true", help="one JSON document on stdout")
    show.set_defaults(handler=cmd_show)
    from srb_tui.commands.run import add_cancel_parser

    add_cancel_parser(rsub)


_COLUMNS = ("Run", "Task", "Agent", "Node", "Status", "Stop", "Score", "Valid", "Started",
            "Duration")


def _cells(r: Any) -> tuple[str, ...]:
    return (r.run_id, r.task_id, r.agent, r.node, r.status, r.stop_reason or "—", r.score_text,
            r.valid_text, r.started_text, r.duration_text)


def cmd_list(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if not settings.state_dir.is_dir():  # as `runs show` says: the store named is not there
        out.error(f"no store at {settings.db_path}: {settings.state_dir} does not exist "
                  "(nothing has run with this --state)")
        return codes.NOT_FOUND
    flt = run_filter(args.filter, out)
    if flt is None:
        return codes.USAGE
    result = asyncio.run(load_run_rows(settings.db_path, limit=args.limit,
                                       filters=flt.kwargs()))
    if result.problem:
        out.error(result.problem)
        return codes.INFRA
    if args.quiet and not out.json_mode:
        sys.stdout.write("".join(f"{r.run_id}\n" for r in result.rows))
        return codes.OK
    if out.json_mode:
        out.emit_json({"store": str(settings.db_path), "runs": [
            {"id": r.run_id, "task": r.task_id, "agent": r.agent, "node": r.node,
             "status": r.status,
             "stop_reason": r.stop_reason, "score": r.score, "max_score": r.max_score,
             "valid": r.valid, "started_at": r.started, "duration_sec": r.duration_sec}
            for r in result.rows]})
        return codes.OK
    if not result.rows:
        out.print(f"No runs in {settings.db_path} yet.")
        return codes.OK
    if args.no_trunc or not sys.stdout.isatty():
        sys.stdout.write(plain_columns([tuple(c.upper() for c in _COLUMNS),
                                        *(_cells(r) for r in result.rows)]))
        return codes.OK
    table = Table(title=f"Runs ({settings.db_path})", title_justify="left")
    id_width = max(len(r.run_id) for r in result.rows)
    for col in _COLUMNS:
        table.add_column(col, no_wrap=col == "Run", min_width=id_width if col == "Run" else None)
    for r in result.rows:
        table.add_row(escape(r.run_id), escape(r.task_id), escape(r.agent), escape(r.node),
                      escape(r.status),
                      escape(r.stop_reason or "—"), r.score_text, r.valid_text,
                      escape(r.started_text), r.duration_text)
    out.print(table)
    return codes.OK


async def _detail(settings: Settings, run_id: str) -> dict[str, Any] | None:
    async with open_service(settings) as services:
        try:
            store = await services.store()
            run_id = await store.runs.resolve_run_id(run_id)  # a unique prefix will do
            detail = await store.run_detail(run_id)
        except AmbiguousRunId:
            raise
        except RunNotFound:
            return None
        doc = detail.to_json()
        doc["node"] = node_label(detail.run)
        found = Provenance.read(detail.run.extra)
        doc["provenance"] = None if found is None else found.full_json()
        doc["agent"] = await agent_summary(store, run_id)
    return doc


def cmd_show(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    if not settings.db_path.exists():
        out.error(f"no store at {settings.db_path}; no run {args.run_id!r}")
        return codes.NOT_FOUND
    try:
        doc = asyncio.run(_detail(settings, args.run_id))
    except AmbiguousRunId as exc:
        out.error(str(exc))
        return codes.USAGE
    except StoreError as exc:
        out.error(str(exc))
        return codes.INFRA
    if doc is None:
        out.error(f"no run {args.run_id!r} in {settings.db_path}")
        return codes.NOT_FOUND
    if out.json_mode:
        out.emit_json(doc)
        return codes.OK
    run = doc.get("run", doc)
    out.print(f"[bold]{escape(str(run.get('id')))}[/]  task {escape(str(run.get('task_id')))}")
    out.print(f"  node: {escape(str(doc.get('node', 'local')))}")
    for key in ("status", "phase", "agent", "model", "effort", "stop_reason", "score",
                "max_score", "valid", "blocked_by", "harness_error", "created_at",
                "started_at", "finished_at"):
        if run.get(key) not in (None, ""):
            out.print(f"  {key}: {escape(str(run[key]))}")
    agent = doc.get("agent") or {}
    if agent.get("rounds"):
        out.print(f"  agent rounds: {len(agent['rounds'])}")
    # What the gateway ledger priced, by who spent it (agent, Stage I reviewer, Stage III
    # verifiers): shown whenever anything went through it, client rounds or not.
    by_role = {role: led for role, led in (agent.get("ledger_by_role") or {}).items()
               if led.get("requests")}
    if by_role:
        out.print("  spend (gateway ledger): " + "; ".join(
            f"{escape(role)} {escape(cost_text(led))}" for role, led in sorted(by_role.items())))
    for section in ("stage_results", "gate_votes", "module_results", "adversary_rounds",
                    "counterexamples", "images"):
        items = doc.get(section)
        if items:
            out.print(f"  {section}: {len(items)}")
    return codes.OK
