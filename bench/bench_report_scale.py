"""Benchmark: the paper's tables and figures over the 520-run store (issue 38 item 5).

The store is bench/scale_store.py's (520 scored runs, ~3.1 M check rows, one run in eight
missing exactly one check). srb's side, in a fresh child process so its peak RSS is its
own: ``load_runs`` + ``build_report`` + the table formats (md, csv, json, latex), first
with every interval of Table 3i computed (10,000 two-stage resamples each; numpy and scipy
already imported), then again with them kept (the same runs: what a refresh costs); then the
figures: the HTML page (its figures drawn inline) and ``write_figures`` (PDF and PNG).
Goal: every table and figure in < 5 s, with the peak RSS printed. The raw side, same run:
plain sqlite3 reading and aggregating the same
numbers (runs; the score envelopes decoded; per-run module pass/scored sums; per-run gate
tallies; adversary rounds; the failed check ids of the single-miss runs) with nothing
built from them; goal: srb's tables within 2x of it. A GROUP BY over every check row (what
a report that did not keep module results would pay) is printed for scale.

    .venv/bin/python bench/bench_report_scale.py [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_store

from srb_tui.reports import build_report, load_runs, render
from srb_tui.store import Store

GOAL_SEC = 5.0
GOAL_RATIO = 2.0
FORMATS = ("md", "csv", "json", "latex")  # html embeds the figures: timed with them


async def tables(path: Path) -> tuple[float, int, int]:
    async with await Store.open(path) as store:
        began = time.perf_counter()
        runs, order, ledger = await load_runs(store)
        report = build_report(runs, config_order=order, has_ledger=ledger)
        size = sum(len(render(report, fmt)) for fmt in FORMATS)
        return time.perf_counter() - began, len(report.tables), size


def child(path: Path) -> None:
    """One measurement of srb's side; prints JSON with its own peak RSS."""
    from srb_tui.reports.plots import write_figures
    from srb_tui.reports.stats import _libs

    _libs()  # numpy and scipy imported: the figure is the work, not the imports
    raw(path)  # warm the page cache
    first = asyncio.run(tables(path))  # every interval computed (nothing kept yet)
    took = [asyncio.run(tables(path)) for _ in range(3)]  # the intervals kept
    sec = statistics.median(t[0] for t in took)
    async def report_again() -> object:
        async with await Store.open(path) as store:
            runs, order, ledger = await load_runs(store)
            return build_report(runs, config_order=order, has_ledger=ledger)
    report = asyncio.run(report_again())
    began = time.perf_counter()
    render(report, "html")  # type: ignore[arg-type]
    html = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        written = write_figures(report, Path(tmp))  # type: ignore[arg-type]
        figures = time.perf_counter() - began
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"first": first[0], "tables": sec, "count": took[0][1], "bytes": took[0][2],
                      "figures": figures, "html": html, "files": len(written), "rss": rss}))


def raw(path: Path) -> float:
    began = time.perf_counter()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    list(conn.execute("SELECT id, task_id, agent, model, effort, status, valid, score,"
                      " blocked_by FROM runs"))
    for (payload,) in conn.execute("SELECT payload FROM events WHERE kind = 'score'"):
        json.loads(payload)
    list(conn.execute("SELECT run_id, sum(passed), sum(scored) FROM module_results"
                      " WHERE stage = 'behavioural' GROUP BY run_id"))
    list(conn.execute("SELECT run_id, count(*), sum(votes_pass = 0 OR votes_fail = 0)"
                      " FROM gate_outcomes GROUP BY run_id"))
    list(conn.execute("SELECT run_id, adversary_id, model, status, duration_sec"
                      " FROM adversary_rounds"))
    single = [r[0] for r in conn.execute(
        "SELECT run_id FROM module_results WHERE stage = 'behavioural' GROUP BY run_id"
        " HAVING sum(scored) - sum(passed) = 1")]
    for rid in single:
        list(conn.execute("SELECT module_id, check_id FROM checks WHERE run_id = ? AND"
                          " stage = 'behavioural' AND verdict <> 'pass'", (rid,)))
    conn.close()
    return time.perf_counter() - began


def every_check(path: Path) -> float:
    began = time.perf_counter()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    list(conn.execute("SELECT run_id, sum(verdict = 'pass'), count(*) FROM checks"
                      " GROUP BY run_id"))
    conn.close()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=scale_store.DEFAULT)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.store)
        return
    path = scale_store.ensure(args.store)
    facts = scale_store.stats(path)
    proc = subprocess.run([sys.executable, __file__, "--child", "--store", str(path)],
                          capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    raw(path)
    floor = statistics.median(raw(path) for _ in range(3))
    scan = every_check(path)
    ratio = got["first"] / floor
    print(f"srb report over {facts['runs']} runs, {facts['checks']:,} check rows:")
    print(f"  {got['count']} tables in {len(FORMATS)} formats ({got['bytes']:,} bytes), every"
          f" interval computed (the first report in the process):"
          f" {got['first'] * 1000:.0f} ms (goal < {GOAL_SEC:g} s)"
          f" [{'OK' if got['first'] < GOAL_SEC else 'SLOW'}];"
          f" again (the intervals kept): {got['tables'] * 1000:.0f} ms")
    print(f"  HTML page with its figures inline: {got['html']:.2f} s; figures as files"
          f" (write_figures, {got['files']} files): {got['figures']:.2f} s"
          f" [{'OK' if max(got['html'], got['figures']) < GOAL_SEC else 'SLOW'}]")
    print(f"  peak RSS of the report process: {got['rss'] / 2**20:.0f} MiB")
    print(f"  plain SQL aggregation of the same numbers (no intervals): {floor * 1000:.0f} ms;"
          f" ratio {ratio:.2f}x with the intervals computed (goal <= {GOAL_RATIO:g}x)"
          f" [{'OK' if ratio <= GOAL_RATIO else 'SLOW'}], {got['tables'] / floor:.2f}x again")
    print(f"  for scale: GROUP BY over every check row {scan * 1000:.0f} ms")


if __name__ == "__main__":
    main()
