"""``srb import DIR``: runs graded by the published harness, into the store beside srb's own.

Every ``score.json`` under DIR is one trial (see ``srb_tui.reports.importer`` for the files
and keys read). Bad or partial files are reported by file and key, and then nothing is
stored; a trial folder imported before is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from rich.markup import escape

from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.reports.build import task_categories
from srb_tui.reports.importer import read_job
from srb_tui.store import Store, StoreError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("import", help="import a published-harness job directory as runs")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    directory = Path(args.directory)
    trials, problems = read_job(directory)
    if problems:
        for problem in problems:
            out.error(problem)
        out.error(f"{directory}: nothing imported ({len(problems)} problem(s))")
        return 2
    categories = task_categories(settings.task_roots)
    for trial in trials:
        trial.category = trial.category or categories.get(trial.task)
    docs = [{**dataclasses.asdict(t), "job": directory.resolve().name} for t in trials]

    async def body() -> list[str]:
        async with await Store.open(settings.db_path) as store:
            return await store.import_runs(docs)

    try:
        ids = asyncio.run(body())
    except StoreError as exc:
        out.error(str(exc))
        return 1
    if out.json_mode:
        out.emit_json({"directory": str(directory), "runs": [
            {"id": rid, "task": t.task, "score": t.score, "valid": t.valid,
             "source": t.source_dir} for rid, t in zip(ids, trials, strict=True)]})
    else:
        for rid, t in zip(ids, trials, strict=True):
            out.print(f"{escape(rid)}  {escape(t.task)}  score {t.score}  valid {t.valid}  "
                      f"← {escape(t.source_dir)}")
        out.print(f"imported {len(ids)} run(s) from {escape(str(directory))}")
    return 0
