"""Benchmark: ``srb report`` over a store of 10,000 scored runs (goal: under one second).

The store is created by ``Store.open`` (so it has the real schema and indexes) and filled
with plain sqlite3 inserts for speed: every run has a score event (the envelope from
``scoring.score_run``), eight gate outcomes, and six adversary rounds when it reached
Stage III; one run in eight misses exactly one check (stored). The measured figure is
``load_runs`` + ``build_report`` + Markdown rendering, as ``srb report`` does it; the raw
floor printed beside it is sqlite3 alone reading the same rows (runs, score events, gates,
rounds) and decoding the JSON — the ratio says what the report adds to reading the data.

    .venv/bin/python bench/bench_report.py [--runs 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from srb_tui.reports import build_report, load_runs, render
from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.store import Store

GOAL_SEC = 1.0
POLICY = ScoringPolicy(max_score=100.0, behavioural_points=40.0, verification_points=60.0,
                       verification_models=6, points_per_survived_model=10.0)


def seed(path: Path, runs: int) -> None:
    rng = random.Random(7)
    conn = sqlite3.connect(path)
    now = "2026-12-01T00:00:00.000000Z"
    with conn:
        for n in range(runs):
            rid = f"r-20261201-000000-{n:05x}"
            task = f"task{n % 20:02d}"
            audit = "pass" if rng.random() < 0.65 else "fail"
            total = 100 + (n % 20) * 50
            passed = total if rng.random() < 0.3 else int(total * rng.uniform(0.5, 1.0))
            if n % 8 == 0:
                passed = total - 1
            modules = [{"id": "m1", "weight": 1.0, "status": "ok", "rate": passed / total,
                        "passed": passed, "scored": total}]
            complete = passed == total
            outcomes = None
            if audit == "pass" and complete:
                outcomes = {f"a{k:02d}": "broken" if rng.random() < 0.3 else "survived"
                            for k in range(1, 7)}
            env = score_run(audit, complete, modules, outcomes, POLICY)
            conn.execute(
                "INSERT INTO runs (id, task_id, task_path, agent, model, effort, status, valid,"
                " score, max_score, blocked_by, created_at, updated_at) VALUES"
                " (?, ?, ?, ?, ?, ?, 'scored', ?, ?, 100, ?, ?, ?)",
                (rid, task, f"tasks/{task}", f"claude-code:model-{n % 13}", f"model-{n % 13}",
                 ("low", "high")[n % 2], int(env.valid), env.score, env.blocked_by, now, now),
            )
            conn.execute("INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, ?, ?)",
                         (rid, now, "stage_finished", json.dumps({"stage": "audit"})))
            conn.execute("INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, 'score', ?)",
                         (rid, now, json.dumps(env.to_json())))
            for g in range(8):
                fail = audit == "fail" and g == 0
                votes = (0, 3) if fail else ((2, 1) if rng.random() < 0.04 else (3, 0))
                conn.execute(
                    "INSERT INTO gate_outcomes (run_id, gate_id, verdict, votes_pass, votes_fail)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (rid, f"g{g}", "fail" if fail else "pass", *votes),
                )
            for adv, outcome in (outcomes or {}).items():
                conn.execute(
                    "INSERT INTO adversary_rounds (run_id, adversary_id, model, status,"
                    " duration_sec) VALUES (?, ?, ?, ?, ?)",
                    (rid, adv, "opus" if adv < "a03" else "other", outcome,
                     rng.uniform(60, 3600)),
                )
            if passed == total - 1:
                conn.execute(
                    "INSERT INTO checks (run_id, stage, module_id, position, check_id, verdict)"
                    " VALUES (?, 'behavioural', 'm1', 0, ?, 'fail')", (rid, f"c{n % 17}"),
                )
    conn.close()


def raw_floor(path: Path) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    list(conn.execute("SELECT id, task_id, agent, model, effort, status, valid, score FROM runs"))
    for (payload,) in conn.execute("SELECT payload FROM events WHERE kind = 'score'"):
        json.loads(payload)
    list(conn.execute("SELECT run_id, gate_id, verdict, votes_pass, votes_fail"
                      " FROM gate_outcomes"))
    list(conn.execute("SELECT run_id, adversary_id, model, status, duration_sec"
                      " FROM adversary_rounds"))
    conn.close()
    return time.perf_counter() - started


async def measure(path: Path) -> tuple[float, int, int]:
    async with await Store.open(path) as store:
        started = time.perf_counter()
        runs, order, ledger = await load_runs(store)
        report = build_report(runs, config_order=order, has_ledger=ledger)
        text = render(report, "md")
        return time.perf_counter() - started, len(runs), len(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "srb.sqlite3"
        asyncio.run(_create(path))
        seed(path, args.runs)
        asyncio.run(measure(path))  # warm the page cache once
        best = min(asyncio.run(measure(path))[0] for _ in range(3))
        _, count, size = asyncio.run(measure(path))
        floor = min(raw_floor(path) for _ in range(3))
    verdict = "OK" if best < GOAL_SEC else "SLOW"
    print(f"srb report over {count} runs: {best * 1000:.0f} ms (goal < {GOAL_SEC * 1000:.0f} ms)"
          f" [{verdict}]; Markdown {size} bytes")
    print(f"raw sqlite3 read + JSON decode of the same rows: {floor * 1000:.0f} ms; "
          f"ratio {best / floor:.2f}x")


async def _create(path: Path) -> None:
    store = await Store.open(path)
    await store.close()


if __name__ == "__main__":
    main()
