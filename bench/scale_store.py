"""A generated store at the paper's campaign size: 520 scored runs, ~3.1 M check rows.

Shared by the scale benches (bench_store_scale, bench_console_scale, bench_report_scale).
The store is created by ``Store.open`` (real schema, indexes, migrations) and filled with
plain sqlite3 inserts for speed, in the shape Stage II and the scorer leave: per run a
score event (``scoring.score_run``), eight gate outcomes, six adversary rounds when it
reached Stage III, 14 behavioural module results and every one of its check rows (113 to
21,769 checks a run, 6,000 on average; one run in eight fails exactly one check). It is
kept at ``--store`` (default /tmp/srb-scale-store/srb.sqlite3) and made only when absent.

    .venv/bin/python bench/scale_store.py [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.store import Store

RUNS = 520
MEAN_CHECKS = 6_000
MODULES = 14
DEFAULT = Path("/tmp/srb-scale-store/srb.sqlite3")
POLICY = ScoringPolicy(max_score=100.0, behavioural_points=40.0, verification_points=60.0,
                       verification_models=6, points_per_survived_model=10.0)
NOW = "2026-12-01T00:00:00.000000Z"


def run_id(n: int) -> str:
    return f"r-20261201-000000-{n:05x}"


def sizes(runs: int, rng: random.Random) -> list[int]:
    """Checks per run: 113 .. 21,769, scaled so the mean is MEAN_CHECKS."""
    raw = [rng.lognormvariate(0, 0.9) for _ in range(runs)]
    scale = MEAN_CHECKS * runs / sum(raw)
    out = [min(21_769, max(113, int(x * scale))) for x in raw]
    out[0] = 21_769  # the fw03-sized run is always there
    for _ in range(8):  # the cap at 21,769 lowers the mean: grow the others to make it up
        free = [i for i, x in enumerate(out) if 113 < x < 21_769 and i]
        grow = (MEAN_CHECKS * runs - sum(out)) / sum(out[i] for i in free)
        for i in free:
            out[i] = min(21_769, round(out[i] * (1 + grow)))
    return out


def check_rows(rid: str, total: int, failing: int, rng: random.Random) -> list[tuple[Any, ...]]:
    """Rows of the checks table for one run: ``failing`` of them fail, at random places."""
    bad = set(rng.sample(range(total), failing)) if failing else set()
    per = -(-total // MODULES)
    rows: list[tuple[Any, ...]] = []
    for k in range(total):
        module, pos = divmod(k, per)
        mid = f"m{module + 1:02d}"
        if k in bad:
            rows.append((rid, "behavioural", mid, pos, f"{mid}-{pos + 1:05d}", "fail", None,
                         "row differs", json.dumps(f"expected: 'r{k:06d}'\nactual: 'R{k:06d}'"),
                         "null"))
        else:
            rows.append((rid, "behavioural", mid, pos, f"{mid}-{pos + 1:05d}", "pass", None,
                         None, "null", "null"))
    return rows


def module_rows(rid: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    counts: dict[str, list[int]] = {}
    for row in rows:
        tally = counts.setdefault(row[2], [0, 0])
        tally[0 if row[5] == "pass" else 1] += 1
    return [(rid, "behavioural", mid, i, f"generated rows, part {mid[1:]}", 1.0, "ok",
             p / (p + f), p, f, 0, 0, p + f, 1.5, "null")
            for i, (mid, (p, f)) in enumerate(counts.items())]


def seed(path: Path, runs: int = RUNS) -> int:
    rng = random.Random(38)
    conn = sqlite3.connect(path)
    total_checks = 0
    for n, total in enumerate(sizes(runs, rng)):
        rid = run_id(n)
        task = f"task{n % 20:02d}"
        audit = "pass" if rng.random() < 0.65 else "fail"
        failing = 0 if rng.random() < 0.3 else rng.randint(1, max(1, total // 3))
        if n % 8 == 0:
            failing = 1
        rows = check_rows(rid, total, failing, rng)
        total_checks += len(rows)
        mods = module_rows(rid, rows)
        modules = [{"id": m[2], "weight": 1.0, "status": "ok", "rate": m[7], "passed": m[8],
                    "scored": m[12]} for m in mods]
        outcomes = None
        if audit == "pass" and not failing:
            outcomes = {f"a{k:02d}": "broken" if rng.random() < 0.3 else "survived"
                        for k in range(1, 7)}
        env = score_run(audit, not failing, modules, outcomes, POLICY)
        with conn:
            conn.execute(
                "INSERT INTO runs (id, task_id, task_path, agent, model, effort, status, valid,"
                " score, max_score, blocked_by, created_at, updated_at) VALUES"
                " (?, ?, ?, ?, ?, ?, 'scored', ?, ?, 100, ?, ?, ?)",
                (rid, task, f"tasks/{task}", f"claude-code:model-{n % 13}", f"model-{n % 13}",
                 ("low", "high")[n % 2], int(env.valid), env.score, env.blocked_by, NOW, NOW))
            conn.execute("INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, ?, ?)",
                         (rid, NOW, "score", json.dumps(env.to_json())))
            conn.executemany(
                "INSERT INTO gate_outcomes (run_id, gate_id, verdict, votes_pass, votes_fail)"
                " VALUES (?, ?, ?, ?, ?)",
                [(rid, f"g{g}", "fail" if audit == "fail" and g == 0 else "pass",
                  0 if audit == "fail" and g == 0 else 3, 3 if audit == "fail" and g == 0 else 0)
                 for g in range(8)])
            conn.executemany(
                "INSERT INTO adversary_rounds (run_id, adversary_id, model, status,"
                " duration_sec) VALUES (?, ?, ?, ?, ?)",
                [(rid, adv, "opus" if adv < "a03" else "other", outcome, 600.0)
                 for adv, outcome in (outcomes or {}).items()])
            conn.executemany(
                "INSERT INTO module_results (run_id, stage, module_id, position, title, weight,"
                " status, rate, passed, failed, skipped, errors, scored, duration_sec, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", mods)
            conn.executemany(
                "INSERT INTO checks (run_id, stage, module_id, position, check_id, verdict,"
                " weight, summary, detail, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return total_checks


async def _create(path: Path) -> None:
    store = await Store.open(path)
    await store.close()


def ensure(path: Path = DEFAULT, runs: int = RUNS) -> Path:
    """The generated store at ``path``, made now if it is not there yet."""
    done = path.with_suffix(".done")
    if done.exists() and path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    began = time.perf_counter()
    asyncio.run(_create(path))
    checks = seed(path, runs)
    done.write_text(json.dumps({"runs": runs, "checks": checks}), encoding="utf-8")
    print(f"generated {path}: {runs} runs, {checks} check rows in "
          f"{time.perf_counter() - began:.0f} s")
    return path


def stats(path: Path) -> dict[str, int]:
    return dict(json.loads(path.with_suffix(".done").read_text(encoding="utf-8")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=DEFAULT)
    args = parser.parse_args()
    path = ensure(args.store)
    print(path, stats(path))


if __name__ == "__main__":
    main()
