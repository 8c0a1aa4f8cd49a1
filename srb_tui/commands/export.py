"""``srb export [FILTER…] [--campaign NAME] -o DIR [--parquet] [--atif] [--results]``.

Writes the selected runs for other tools (all three parts unless some are named):

* ``DIR/parquet/`` — runs, stage results, module results, checks, gate votes, adversary
  rounds and counterexamples as Parquet tables with a README of the columns
  (:mod:`srb_tui.reports.parquet`);
* ``DIR/atif/RUN.json`` — each run's agent transcript as an ATIF trajectory, validated
  against the format's schema (:mod:`srb_tui.reports.atif`); an invalid one is an error;
* ``DIR/results/RUN/`` — each graded run as the published harness's trial folder
  (``score.json``, ``reward.json``, ``summary.txt`` …; :mod:`srb_tui.reports.result_export`),
  which ``srb import DIR/results`` reads back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from srb_tui.commands import exit_codes as codes
from srb_tui.commands.arg_read import run_filter
from srb_tui.commands.output import Output
from srb_tui.commands.report import load_selection
from srb_tui.config import Settings
from srb_tui.store import Store, StoreError

PARTS = ("parquet", "atif", "results")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="runs as Parquet tables, ATIF trajectories and the "
                                      "published harness's result files")
    p.add_argument("filter", nargs="*", metavar="FILTER",
                   help="task:ID status:S agent:SPEC model:M, other words as free text")
    p.add_argument("--campaign", metavar="NAME", help="only this campaign's cells")
    p.add_argument("--output", "-o", metavar="DIR", required=True,
                   help="the folder to write (created; files in it are replaced)")
    for part, what in (("parquet", "Parquet tables with a README of the columns"),
                       ("atif", "each run's agent transcript as ATIF JSON (validated)"),
                       ("results", "each graded run's score.json, reward.json, summary.txt "
                                   "as a published-harness trial folder")):
        p.add_argument(f"--{part}", action="store_true", help=f"write {what}")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace, settings: Settings, out: Output) -> int:
    flt = run_filter(args.filter, out)
    if flt is None:
        return codes.USAGE
    target = Path(args.output)
    if target.exists() and not target.is_dir():
        out.error(f"-o {args.output}: is a file; give a folder")
        return codes.USAGE
    if not settings.db_path.exists():
        out.error(f"no store at {settings.db_path} (nothing has run yet)")
        return codes.NOT_FOUND
    parts = [p for p in PARTS if getattr(args, p)] or list(PARTS)

    async def body() -> int:
        async with await Store.open(settings.db_path) as store:
            loaded = await load_selection(store, settings, args.campaign, flt.kwargs(), out)
            if loaded is None:
                return codes.NOT_FOUND
            runs = loaded[0]
            done: dict[str, Any] = {"runs": len(runs), "output": str(target)}
            target.mkdir(parents=True, exist_ok=True)
            failed = False
            if "parquet" in parts:
                from srb_tui.reports.parquet import write_parquet

                done["parquet"] = await write_parquet(store, runs, target / "parquet")
            if "atif" in parts:
                done["atif"], bad = await _atif(store, [r.run_id for r in runs],
                                                target / "atif", out)
                failed = failed or bad
            if "results" in parts:
                done["results"], done["skipped"] = await _results(
                    store, settings, runs, target / "results")
                for why in done["skipped"]:
                    out.warn(why)
        if args.json:
            out.emit_json(done)
        else:
            out.err.print(_summary(done))
        return codes.FAILED if failed else codes.OK

    try:
        return asyncio.run(body())
    except StoreError as exc:
        out.error(str(exc))
        return codes.INFRA
    except ImportError as exc:
        out.error(str(exc))
        return codes.USAGE


async def _atif(store: Store, run_ids: list[str], folder: Path, out: Output
                ) -> tuple[int, bool]:
    from srb_tui.reports.atif import problems, trajectory

    folder.mkdir(parents=True, exist_ok=True)
    written, bad = 0, False
    for rid in run_ids:
        doc = await trajectory(store, rid)
        found = problems(doc)
        if found:
            bad = True
            out.error(f"run {rid}: its ATIF trajectory does not validate: "
                      + "; ".join(found[:5]))
            continue
        (folder / f"{rid}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")
        written += 1
    return written, bad


async def _results(store: Store, settings: Settings, runs: list[Any], folder: Path
                   ) -> tuple[int, list[str]]:
    from srb_tui.reports.atif import problems, trajectory
    from srb_tui.reports.result_export import export_trial

    written, skipped = 0, []
    for rec in runs:
        run = await store.runs.require_run(rec.run_id)
        doc = await trajectory(store, run.id)
        got = await asyncio.to_thread(export_trial, run, settings.run_dir(run.id), folder,
                                      cost_usd=rec.cost,
                                      trajectory=None if problems(doc) else doc)
        if isinstance(got, str):
            skipped.append(got)
        else:
            written += 1
    return written, skipped


def _summary(done: dict[str, Any]) -> str:
    parts = [f"{done['runs']} runs → {done['output']}"]
    if "parquet" in done:
        parts.append("parquet: " + ", ".join(f"{k} {v}" for k, v in done["parquet"].items()))
    if "atif" in done:
        parts.append(f"atif: {done['atif']} trajectories")
    if "results" in done:
        parts.append(f"results: {done['results']} trial folders"
                     + (f" ({len(done['skipped'])} not graded)" if done["skipped"] else ""))
    return "; ".join(parts)
