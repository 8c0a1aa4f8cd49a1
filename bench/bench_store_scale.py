"""Benchmark: the store at the paper's scale (issue 38 item 3).

1. Writing one run's 25,000 check rows (14 modules, as Stage II records them:
   ``record_checks`` once per module) against raw ``sqlite3`` ``executemany`` of the same
   rows into a file with the same table, in one transaction; goal: srb's throughput at
   least 0.7x the raw one (ratio = raw time / srb time).
2. Over the generated 520-run store (bench/scale_store.py, ~3.1 M check rows): opening it
   (``Store.open``), listing the runs (``load_run_rows``, what ``srb runs`` and the Runs
   screen read) and answering ``runs show`` for a run (``resolve_run_id`` + ``run_detail``
   + ``to_json``, what ``srb runs show`` does) -- the largest run (21,769 checks) and a
   median one; goal < 200 ms each. The file size per million check rows is printed.

    .venv/bin/python bench/bench_store_scale.py [--store PATH] [-n 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_store

from srb_tui.service.views.history import load_run_rows
from srb_tui.store import Store
from srb_tui.store.convert import check_params

CHECKS = 25_000
MODULES = 14
GOAL_RATIO = 0.7
GOAL_MS = 200.0


def checks_of(module: int, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(count):
        item: dict[str, Any] = {"id": f"m{module:02d}-{k + 1:05d}", "verdict": "pass"}
        if k % 997 == 0:
            item.update(verdict="fail", summary="row differs",
                        detail=f"expected: 'r{k:06d}'\nactual: 'R{k:06d}'")
        out.append(item)
    return out


def suite() -> dict[str, list[dict[str, Any]]]:
    per, extra = divmod(CHECKS, MODULES)
    return {f"m{m:02d}": checks_of(m, per + (1 if m <= extra else 0))
            for m in range(1, MODULES + 1)}


async def srb_write(folder: Path, by_module: dict[str, list[dict[str, Any]]]) -> float:
    async with await Store.open(folder / "srb.sqlite3") as store:
        run = await store.runs.create_run(task_id="scale01", task_path="tasks/scale01",
                                          agent="replay:reference")
        began = time.perf_counter()
        for module, checks in by_module.items():
            await store.grading.record_checks(run.id, "behavioural", checks, module_id=module)
        return time.perf_counter() - began


def raw_write(folder: Path, by_module: dict[str, list[dict[str, Any]]], schema: str) -> float:
    conn = sqlite3.connect(folder / "raw.sqlite3")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(schema)
    rows = [row for module, checks in by_module.items()
            for row in check_params("r1", "behavioural", module, checks)]
    began = time.perf_counter()
    with conn:
        conn.executemany(
            "INSERT INTO checks (run_id, stage, module_id, position, check_id, verdict,"
            " weight, summary, detail, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    took = time.perf_counter() - began
    conn.close()
    return took


def checks_schema(path: Path) -> str:
    conn = sqlite3.connect(path)
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'checks'").fetchone()
    conn.close()
    return str(sql).replace("REFERENCES runs (id) ON DELETE CASCADE", "")


def write_side(rounds: int) -> tuple[float, float]:
    by_module = suite()
    srb_t: list[float] = []
    raw_t: list[float] = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            srb_t.append(asyncio.run(srb_write(folder, by_module)))
            raw_t.append(raw_write(folder, by_module, checks_schema(folder / "srb.sqlite3")))
    return statistics.median(srb_t), statistics.median(raw_t)


async def read_side(path: Path, ids: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    began = time.perf_counter()
    store = await Store.open(path)
    out["open"] = time.perf_counter() - began
    try:
        began = time.perf_counter()
        result = await load_run_rows(path, limit=1000)
        out["list"] = time.perf_counter() - began
        assert len(result.rows) == scale_store.RUNS, result.problem
        for name, rid in zip(("show largest", "show median"), ids, strict=True):
            began = time.perf_counter()
            detail = await store.run_detail(await store.runs.resolve_run_id(rid))
            doc = detail.to_json()
            out[name] = time.perf_counter() - began
            assert doc["checks"], rid
    finally:
        await store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=scale_store.DEFAULT)
    parser.add_argument("-n", type=int, default=5, help="rounds of each measurement")
    args = parser.parse_args()
    srb_w, raw_w = write_side(args.n)
    ratio = raw_w / srb_w
    print(f"write one run's {CHECKS} check rows ({MODULES} modules), median of {args.n}:")
    print(f"  srb record_checks  {srb_w * 1000:7.1f} ms  ({CHECKS / srb_w:,.0f} rows/s)")
    print(f"  raw executemany    {raw_w * 1000:7.1f} ms  ({CHECKS / raw_w:,.0f} rows/s)")
    print(f"  throughput ratio srb/raw = {ratio:.2f} (goal >= {GOAL_RATIO})"
          f" [{'OK' if ratio >= GOAL_RATIO else 'SLOW'}]")

    path = scale_store.ensure(args.store)
    facts = scale_store.stats(path)
    conn = sqlite3.connect(path)
    counts = sorted(conn.execute("SELECT run_id, COUNT(*) FROM checks GROUP BY run_id"),
                    key=lambda r: r[1])
    conn.close()
    ids = [counts[-1][0], counts[len(counts) // 2][0]]
    sizes = {"show largest": counts[-1][1], "show median": counts[len(counts) // 2][1]}
    asyncio.run(read_side(path, ids))  # warm the page cache once
    rounds = [asyncio.run(read_side(path, ids)) for _ in range(args.n)]
    size = path.stat().st_size
    print(f"store of {facts['runs']} runs, {facts['checks']:,} check rows "
          f"({facts['checks'] / facts['runs']:,.0f} a run), {size / 1e6:.0f} MB: "
          f"{size / 1e6 / (facts['checks'] / 1e6):.0f} MB per million checks")
    for name in rounds[0]:
        ms = statistics.median(r[name] for r in rounds) * 1000
        extra = f" ({sizes[name]} checks)" if name in sizes else ""
        print(f"  {name:13} {ms:7.1f} ms{extra}  (goal < {GOAL_MS:.0f} ms)"
              f" [{'OK' if ms < GOAL_MS else 'SLOW'}]")


if __name__ == "__main__":
    main()
