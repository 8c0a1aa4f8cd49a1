"""``srb report [FILTER…] [--campaign NAME]``: the paper's tables from the store.

Filter words are the Runs screen's (``task:ID status:scored agent:SPEC model:M`` and free
text). ``--format md|csv|json|latex|html`` (``--json`` is ``--format json``; ``html`` is one
self-contained page with the figures); ``--table ID`` (repeatable) picks tables;
``--output FILE`` writes a file instead of stdout; ``--figures DIR`` also writes the paper's
figures as PDF and PNG. Table 3i gives every configuration's score, acceptance and
behavioural pass rate with 95% intervals; ``--compare A B [--metric M]`` gives instead the
paired difference of two configurations (or models) over the tasks both ran. Runs graded by
different grader builds, or of a task whose directory differed, are refused unless
``--mixed`` (then the report says how many of each it pooled). ``--strength`` reports the
strength campaigns of ``srb tasks strength`` instead (:mod:`report_strength`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import run_filter
from srb_tui.commands.output import Output
from srb_tui.commands.report_strength import strength_body, write_report
from srb_tui.config import Settings
from srb_tui.reports import FORMATS, TABLE_IDS, build_report, load_runs, render
from srb_tui.reports.plots import FiguresUnavailable
from srb_tui.reports.pooling import pool_of
from srb_tui.reports.records import ReportRun
from srb_tui.reports.stats import StatsUnavailable
from srb_tui.reports.strength import STRENGTH_TABLE_IDS
from srb_tui.reports.task_facts import task_facts
from srb_tui.reports.uncertainty import compare_report, select
from srb_tui.store import Store, StoreError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("report", help="the paper's tables and figures over a campaign or runs")
    p.add_argument("filter", nargs="*", metavar="FILTER",
                   help="task:ID status:S agent:SPEC model:M, other words as free text")
    p.add_argument("--campaign", metavar="NAME", help="only this campaign's cells")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="md (default), csv, json, latex or html")
    p.add_argument("--table", action="append", choices=(*TABLE_IDS, *STRENGTH_TABLE_IDS),
                   metavar="ID", help=f"only these tables ({', '.join(TABLE_IDS)}; with "
                   f"--strength: {', '.join(STRENGTH_TABLE_IDS)})")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--json", action="store_true",
                   help="same as --format json (one JSON document; conflicts with another "
                        "--format)")
    p.add_argument("--figures", metavar="DIR",
                   help="also write Figures 5a, 5b, 6 and Table 2's funnel to DIR as PDF and "
                        "PNG (each with ID.json: the numbers drawn)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="the paired difference of two configurations (or models) over the "
                        "tasks both ran: mean, 95%% interval, p-value, who won each task")
    p.add_argument("--metric", choices=("score", "accepted", "behavioural"), default="score",
                   help="what --compare compares (default score)")
    p.add_argument("--mixed", action="store_true",
                   help="pool runs graded by different grader builds or of different task "
                        "digests (refused otherwise); the report says how many of each")
    p.add_argument("--strength", action="store_true",
                   help="the instrument strength of tasks from `srb tasks strength` "
                        "campaigns (task: filter words and --campaign ID select)")
    p.set_defaults(handler=cmd_report)


def output_problem(output: str) -> str | None:
    """Why ``-o FILE`` cannot be written, found before any work is done."""
    path = Path(output)
    if path.is_dir():
        return f"-o {output}: is a directory; give a file name (for example {path / 'r.md'})"
    if not path.parent.is_dir():
        return f"-o {output}: the folder {path.parent} does not exist"
    return None


async def load_selection(
    store: Store, settings: Settings, campaign: str | None, filters: dict[str, Any], out: Output
) -> tuple[list[ReportRun], list[str], bool] | None:
    """The runs of a campaign or of the Runs-screen filters, with the task roots' categories
    and verifier efforts (``load_runs``); None, said on ``out``, for an unknown campaign."""
    if campaign and await store.campaigns.campaign(campaign) is None:
        out.error(f"no campaign {campaign!r} in {settings.db_path}")
        return None
    categories, efforts = await asyncio.to_thread(task_facts, settings.task_roots)
    return await load_runs(store, campaign=campaign, filters=filters, categories=categories,
                           efforts=efforts)


def cmd_report(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    flt = run_filter(args.filter, out)
    if flt is None:
        return codes.USAGE
    if args.json and args.format not in (None, "json"):
        out.error(f"--json and --format {args.format} conflict: --json is --format json; "
                  "give one of them")
        return codes.USAGE
    fmt_name = "json" if args.json else (args.format or "md")
    if args.figures and args.compare:
        out.error("--figures draws the whole report's figures; --compare has none (drop one "
                  "of them)")
        return codes.USAGE
    if args.output and (bad := output_problem(args.output)):
        out.error(bad)
        return codes.USAGE
    if not settings.db_path.exists():
        out.error(f"no store at {settings.db_path} (nothing has run yet)")
        return codes.NOT_FOUND

    async def body() -> int:
        if args.strength:
            return await strength_body(args, settings, out, flt, fmt_name)
        async with await Store.open(settings.db_path) as store:
            loaded = await load_selection(store, settings, args.campaign, flt.kwargs(), out)
            if loaded is None:
                return codes.NOT_FOUND
            runs, order, ledger = loaded
        selection = " ".join(
            [f"campaign {args.campaign}"] if args.campaign else []
        ) or "all runs"
        words = " ".join(args.filter)
        if words:
            selection += f" matching `{words}`"
        pool = pool_of(runs)
        if pool.mixed and not args.mixed:
            for problem in pool.problems():
                out.error(f"refusing to pool: {problem}")
            out.error("pass --mixed to pool them anyway (the report then says how many of "
                      "each), or select one build with a filter or --campaign")
            return codes.FAILED
        if args.compare:
            a, b = args.compare
            missing = [n for n in (a, b) if not select(runs, n)]
            if missing:
                known = sorted({r.config for r in runs})
                out.error(f"--compare: no runs of {', '.join(map(repr, missing))} in the "
                          f"selection (configurations: {', '.join(known) or 'none'})")
                return codes.NOT_FOUND
            report = compare_report(runs, a, b, metric=args.metric, selection=selection)
        else:
            report = build_report(runs, title=f"srb report — {selection}",
                                  selection=selection, config_order=order,
                                  has_ledger=ledger)
        if args.mixed and pool.mixed:
            report.notes.append(pool.summary())
            out.err.print(pool.summary())
        if (trace := pool.trace()) is not None:
            report.notes.append(trace)
        try:
            text = render(report, fmt_name, None if args.compare else args.table)
        except ImportError as exc:  # one message: the figures or stats extra is missing
            out.error(str(exc) if isinstance(exc, FiguresUnavailable | StatsUnavailable) else
                      f"figures need matplotlib: pip install -e '.[figures]' ({exc})")
            return codes.USAGE
        return await write_report(report, text, args, out, f"{len(runs)} runs, {fmt_name}")

    try:
        return asyncio.run(body())
    except StoreError as exc:
        out.error(str(exc))
        return codes.INFRA
