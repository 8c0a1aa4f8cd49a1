"""``srb report --strength [task:ID …] [--campaign ID]``: the instrument-strength tables of
stored strength campaigns (issue 36) in every report format, with ``--figures DIR`` drawing
the catch rate per adversary and the retire-k curve through the report's figure path."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.reports import render
from srb_tui.reports.model import Report
from srb_tui.reports.plots import FiguresUnavailable
from srb_tui.reports.strength import strength_report
from srb_tui.store import Store


async def strength_body(args: argparse.Namespace, settings: Settings, out: Output,
                        flt: Any, fmt_name: str) -> int:
    """The report of the selected strength campaigns, written as ``cmd_report`` writes."""
    from srb_tui.service.views.strength import read_campaigns

    if args.compare:
        out.error("--strength and --compare conflict: a strength report compares the "
                  "adversaries of a task, not configurations")
        return codes.USAGE
    tasks = [flt.task] if isinstance(flt.task, str) else list(flt.task or ())
    async with await Store.open(settings.db_path) as store:
        try:
            items = await read_campaigns(store, campaign=args.campaign, tasks=tasks)
        except KeyError:
            known = [c.id for c in await store.strength.campaigns()]
            out.error(f"no strength campaign {args.campaign!r} in {settings.db_path} "
                      f"(campaigns: {', '.join(known) or 'none'})")
            return codes.NOT_FOUND
    if not items:
        out.error("no strength campaign " + (f"of {', '.join(tasks)} " if tasks else "")
                  + f"in {settings.db_path}: run `srb tasks strength ID` first")
        return codes.NOT_FOUND
    selection = (f"strength campaign {args.campaign}" if args.campaign else
                 "strength campaigns" + (f" of {', '.join(tasks)}" if tasks else ""))
    report = strength_report(items, selection=selection)
    try:
        text = render(report, fmt_name, args.table)
    except KeyError as exc:
        out.error(f"--table: {exc.args[0]}")
        return codes.USAGE
    return await write_report(report, text, args, out,
                              f"{len(items)} strength campaigns, {fmt_name}")


async def write_report(report: Report, text: str, args: argparse.Namespace, out: Output,
                       what: str) -> int:
    """The figures (``--figures DIR``) and the text (``-o FILE`` or stdout) of a report
    rendered from the store — the paper's tables or a strength report."""
    if args.figures:
        from srb_tui.reports.plots import write_figures

        try:
            written = await asyncio.to_thread(write_figures, report, Path(args.figures))
        except FiguresUnavailable as exc:
            out.error(str(exc))
            return codes.USAGE
        out.err.print(f"wrote {len(written)} figure files to {args.figures}")
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        out.err.print(f"wrote {args.output} ({what})")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return codes.OK
