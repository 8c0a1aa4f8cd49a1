"""Benchmark: a strength campaign's Stage II per mutant against one Stage II run of State A
(issue 36 item 6, goal <= 1.1x).

Same run, same engine, the same stage image (built or found once, before the clock):

* raw: N runs of the behavioural suite on State A against itself in the identity run's
  image (``record_identity``: a fresh stage container per run, as every grading has);
* srb: a strength campaign of N sampled mutants of State A graded by Stage II
  (``StrengthGrader.stage_ii``: per mutant a copy of State A, the mutant applied, the suite
  in a fresh container from the shared image, the outcome classified and stored in a real
  SQLite store). The campaign's baseline (State A's own run and the two dead trees: three
  suite runs, once per campaign) is graded before the clock and reported apart.

The two sides alternate in rounds so a loaded machine weighs on both. The ratio is per suite
run: each mutant's wall time (from the end of the one before, so copy, apply, container,
suite, classification and the store write all count) against State A's runs. A mutant that
hangs the program is stopped at the campaign's time limit and counted killed; that time is
the mutant's, not srb's, so it is printed apart. A mutant that stops the program early
makes its suite faster than State A's; the outcome counts are printed so a reader can see
the mix the ratio was taken over.

    .venv/bin/python bench/bench_strength.py [-n 8] [--rounds 2] [--seed 0] [--task demo01…]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path

from srb_tui.config import DEFAULT_BASE_IMAGE
from srb_tui.runner import DockerEngine, RunnerPool
from srb_tui.schema import load_task
from srb_tui.service import strength
from srb_tui.service.grading.ladder_identity import identity_stage, record_identity
from srb_tui.service.strength_grade import StrengthGrader
from srb_tui.sources import prepare_state_a
from srb_tui.store import Store

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TASK = "demo01-csvtab-python-to-node"
GOAL = 1.1


def _quiet(_event: object) -> None:
    return None


async def main(args: argparse.Namespace) -> int:
    task_dir = REPO / "tasks" / args.task
    load = load_task(task_dir)
    assert load.task is not None, load.problems
    task = load.task
    root = Path(tempfile.mkdtemp(prefix="srb-bench-strength-"))
    state_a = prepare_state_a(task_dir, task.state_a, root / "cache").tree
    engine = DockerEngine(RunnerPool(4))
    store = await Store.open(root / "srb.sqlite3")
    raw: list[float] = []
    srb: list[float] = []
    timeouts: list[float] = []
    outcomes: Counter[str] = Counter()
    try:
        for round_no in range(args.rounds):
            seed = args.seed + round_no
            campaign, _ = await strength.plan(store, task, state_a, asked=args.n, seed=seed)
            grader = StrengthGrader(store, engine, task, state_a, campaign.id, root / "runs",
                                    base_image=DEFAULT_BASE_IMAGE, publish=_quiet)
            images = grader.images()
            await images.get(identity_stage(task))
            began = time.perf_counter()
            baseline = await grader.baseline()
            baseline_sec = time.perf_counter() - began
            began = time.perf_counter()
            for _ in range(args.n):
                result = await record_identity(engine, task, state_a, publish=_quiet,
                                               images=images)
                assert result.status == "ok", result.to_json()
            raw.append(time.perf_counter() - began)
            marks: list[tuple[str, float]] = []
            began = time.perf_counter()
            graded = await grader.stage_ii(
                lambda row, outcome, marks=marks: marks.append(
                    (row.mutant_id, time.perf_counter())))
            await grader.close()
            assert graded == args.n, graded
            # each mutant's wall time, from the end of the one before (jobs = 1)
            walls = dict(zip([m for m, _ in marks], [t - s for (_, s), (_, t) in zip(
                [("", began), *marks[:-1]], marks, strict=True)], strict=True))
            rows = {r.mutant_id: r for r in await store.strength.mutants(campaign.id)}
            for mid, wall in walls.items():
                reason = str((rows[mid].stage_ii_doc or {}).get("reason", ""))
                if "timed out" in reason:
                    timeouts.append(wall)
                    outcomes.update(["killed (timed out)"])
                else:
                    srb.append(wall)
                    outcomes.update([rows[mid].stage_ii or "?"])
            print(f"round {round_no + 1}: raw {raw[-1]:.1f} s for {args.n} runs, srb "
                  f"{sum(walls.values()):.1f} s for {args.n} mutants (seed {seed}); baseline "
                  f"{baseline_sec:.1f} s (State A's suite {baseline.state_a_sec:.1f} s, "
                  f"mutant limit {baseline.limit_sec:.0f} s)")
    finally:
        await store.close()
        engine.close()
    n = args.n * args.rounds
    per_raw = sum(raw) / n
    per_srb = sum(srb) / len(srb) if srb else float("nan")
    ratio = per_srb / per_raw
    print(f"task {task.id}: {n} Stage II runs of State A, {per_raw:.2f} s each, vs {n} "
          f"mutants' Stage II in the same image; outcomes {dict(outcomes)}")
    print(f"per mutant that ran its suite: {per_srb:.2f} s over {len(srb)} mutants; "
          f"{len(timeouts)} made the program hang and were stopped at the limit "
          f"({sum(timeouts):.0f} s; a time-out is the mutant's cost, not srb's)")
    print(f"ratio srb/raw per suite run = {ratio:.3f} (goal <= {GOAL}) "
          f"{'OK' if ratio <= GOAL else 'OVER'}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=8, help="mutants per round (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task", default=DEFAULT_TASK)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
