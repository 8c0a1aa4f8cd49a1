"""``srb tasks equivalent ID MUTANT --why TEXT``: the task author's word that a mutant
changes no behaviour a user could see (issue 36). Stored with who and why per task and
mutant key, so it holds in the task's later strength campaigns; the scores leave marked
mutants out and say how many. ``--undo`` takes a mark back.

MUTANT is a mutant's key (stable across seeds) or its id (``m004``) in the task's newest
strength campaign (``--campaign`` names another).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
from typing import Any

from rich.markup import escape

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.grading import CommandError
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.store import Store


def add_equivalent_parser(tsub: Any) -> None:
    p = tsub.add_parser("equivalent", help="mark a strength mutant equivalent (no visible "
                        "change), with who and why; --undo takes it back")
    p.add_argument("task_id", metavar="ID")
    p.add_argument("mutant", metavar="MUTANT", help="a mutant key, or its id (m004) in the "
                   "task's newest strength campaign")
    p.add_argument("--why", default=None, metavar="TEXT",
                   help="why no user could see the change (required unless --undo)")
    p.add_argument("--by", default=None, metavar="WHO", help="who marks it (default: you)")
    p.add_argument("--campaign", default=None, metavar="ID",
                   help="resolve a mutant id in this strength campaign")
    p.add_argument("--undo", action="store_true", help="remove the mark")
    p.set_defaults(handler=cmd_equivalent)


async def _mark(args: argparse.Namespace, settings: Settings) -> str:
    if not settings.db_path.exists():
        raise CommandError(f"no store at {settings.db_path} (nothing has run yet)",
                           codes.NOT_FOUND)
    async with await Store.open(settings.db_path) as store:
        campaigns = [c for c in await store.strength.campaigns()
                     if c.task_id == args.task_id or c.task_id.startswith(args.task_id)]
        tasks = sorted({c.task_id for c in campaigns})
        if not tasks:
            raise CommandError(f"no strength campaign of task {args.task_id!r} in "
                               f"{settings.db_path}", codes.NOT_FOUND)
        if len(tasks) > 1:
            raise CommandError(f"task {args.task_id!r} is ambiguous: {', '.join(tasks)}",
                               codes.USAGE)
        if args.campaign is not None:
            campaigns = [c for c in campaigns if c.id == args.campaign]
            if not campaigns:
                raise CommandError(f"no strength campaign {args.campaign!r} of {tasks[0]}",
                                   codes.NOT_FOUND)
        rows = [r for c in campaigns for r in await store.strength.mutants(c.id)]
        hit = next((r for r in rows if r.key == args.mutant), None) or next(
            (r for r in rows if r.mutant_id == args.mutant), None)
        if hit is None:
            raise CommandError(f"no mutant {args.mutant!r} in the strength campaigns of "
                               f"{tasks[0]} (give its key or its id, e.g. m004)",
                               codes.NOT_FOUND)
        what = f"{hit.mutant_id} ({hit.key}, {hit.path}:{hit.line} {hit.operator})"
        if args.undo:
            gone = await store.strength.unmark_equivalent(tasks[0], hit.key)
            return f"{what}: mark removed" if gone else f"{what} was not marked"
        if not (args.why or "").strip():
            raise CommandError("--why TEXT is required: say why no user could see the "
                               "change", codes.USAGE)
        try:
            by = args.by or getpass.getuser()
        except (OSError, KeyError):
            by = "unknown"
        await store.strength.mark_equivalent(tasks[0], hit.key, by=by, reason=args.why)
        return f"{what}: marked equivalent by {by}"


def cmd_equivalent(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    try:
        said = asyncio.run(_mark(args, settings))
    except CommandError as exc:
        out.error(str(exc))
        return exc.code
    out.print(escape(said))
    return codes.OK
