"""``srb import DIR``: runs graded by the published harness, into the store beside srb's own.

Every ``score.json`` under DIR is one trial (see ``srb_tui.reports.importer`` for the files
and keys read). The trials stream from disk into one store transaction, a batch at a time
(memory holds a batch, not the job). Bad or partial files are reported by file and key,
and then nothing is stored; a trial folder imported before is refused.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.output import Output
from srb_tui.config import Settings
from srb_tui.reports.import_job import ReaderDied, default_jobs, iter_job, reader_pool
from srb_tui.store import Store, StoreError
from srb_tui.store.imports import ImportProblems


def add_parser(sub: Any) -> None:
    p = sub.add_parser("import", help="import a published-harness job directory as runs")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--json", action="store_true")
    p.add_argument("--jobs", type=int, default=0, metavar="N",
                   help="reader processes parsing the trials (default: one per core, at"
                        " most 4; 1 reads in this process)")
    p.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    directory = Path(args.directory)
    if not directory.exists():
        out.error(f"{directory}: no such directory (give a job folder of the published "
                  "harness: one with score.json files below it)")
        return codes.NOT_FOUND
    if not directory.is_dir():
        out.error(f"{directory}: not a directory (give the job folder, not a file in it)")
        return codes.USAGE
    if args.jobs < 0:
        out.error(f"--jobs {args.jobs}: expected a number of reader processes (>= 1)")
        return codes.USAGE
    known: dict[str, str] | None = None

    def category_of(task: str) -> str | None:
        # The task roots are read only for a trial that does not name its own debt class.
        nonlocal known
        if known is None:
            from srb_tui.reports.task_facts import task_categories

            known = task_categories(settings.task_roots)
        return known.get(task)

    problems: list[str] = []
    job = directory.resolve().name
    summaries: list[tuple[str, float | None, bool, str]] = []

    def docs(pool: Executor | None) -> Iterator[dict[str, Any]]:
        # Streamed: one trial in memory at a time (its dict is shallow: no copies).
        for trial in iter_job(directory, problems, pool=pool):
            trial.category = trial.category or category_of(trial.task)
            summaries.append((trial.task, trial.score, trial.valid, trial.source_dir))
            yield {**vars(trial), "job": job}

    async def body(pool: Executor | None) -> list[str]:
        async with await Store.open(settings.db_path) as store:
            return await store.imports.import_runs(docs(pool), problems=problems)

    try:
        # The reader processes are forked before asyncio and the store start their threads.
        with reader_pool(args.jobs or default_jobs()) as pool:
            ids = asyncio.run(body(pool))
    except ImportProblems as exc:
        for problem in exc.problems:
            out.error(problem)
        out.error(f"{directory}: nothing imported ({len(exc.problems)} problem(s))")
        return codes.FAILED
    except (StoreError, ReaderDied) as exc:
        out.error(str(exc))
        return codes.INFRA
    if out.json_mode:
        out.emit_json({"directory": str(directory), "runs": [
            {"id": rid, "task": task, "score": score, "valid": valid, "source": source}
            for rid, (task, score, valid, source) in zip(ids, summaries, strict=True)]})
    else:
        out.lines(f"{rid}  {task}  score {score}  valid {valid}  ← {source}"
                  for rid, (task, score, valid, source) in zip(ids, summaries, strict=True))
        out.lines([f"imported {len(ids)} run(s) from {directory}"])
    return codes.OK
