"""Benchmark: Stage II harness overhead per module, the grader's ``suite`` vs bare modules.

One behavioural stage container of the demo task is set up the way Stage II sets it up
(grader, State A, the faithful submission, the suite under /tests). Then, alternating:

* harness: ``python -m srb_grader suite`` runs the whole suite (every module, with its
  checkpoints, result parsing, process-group kill and stage-result file);
* bare: the same module commands run one after another by a plain shell in the same
  container, in the same folders with the same ``SRB_*`` environment but no launcher: the
  modules start bin/csvtab directly, as root. The harness side pays for the submission's
  own uid, session and clean environment on every case (the demo's modules start it with
  ``srb_submission.run``, in-process; the module result's ``started_through`` says so).

Both sides are timed from the host: the harness around ``run_suite_in``, the bare side
around the one ``docker exec`` that runs its modules (running modules from the host needs
one exec as the harness does; what the bare modules recorded is counted by another exec
afterwards, not timed). The bare side is also timed inside the container (``date +%s%N``
around each module), and that figure is printed too: the ratio against it charges the
harness for the exec itself. Reported: medians, the ratio harness/bare (goal <= 1.05)
against both bare figures, and the harness's own per-module durations beside the bare ones.

``--scale``: the same over the generated task at fw03's size (bench/scale_fixture.py: 14
modules, 25,000 recorded checks; ``--submission`` reference, fail-1 or fail-2000). The
harness side then also does what Stage II does with a store: the progress rows and each
module's check rows written as the grader reports them (``StreamedChecks``, while later
modules run), the host's check of the result against suite.toml, then the module rows and
whatever check rows differ from the result (``StreamedChecks.finish``) -- what the stage adds
at that size (result parsing in the grader, the progress relay, the envelope JSON, the
store). After the rounds the store must hold exactly the last result's checks.

The harness's time is printed by phase (medians): the module processes; the grader's work
between them from its own ``phases_sec`` (checkpoints, module setup and end, the suite's
digest, result reading, progress lines); the host's steps from ``run_suite_in``'s timings
(suite copied in; grader exec, interpreter start and the submission's staging; result
result from the grader's lines or the file, parse, check); the store's writes left after the suite.

    .venv/bin/python bench/bench_stage_overhead.py [-n 5] [--scale [--checks 25000]
                                                   [--submission reference]]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_fixture

from srb_tui.config import Settings
from srb_tui.grader.suite.manifest import load_suite
from srb_tui.grader.suite.module_env import CONTRACT_DEFAULTS
from srb_tui.runner import exec_run
from srb_tui.service.app import open_service
from srb_tui.service.grading.stages.behavioural import LAYOUT, run_suite_in
from srb_tui.service.grading.stages.behavioural_rows import StreamedChecks, checks_by_module
from srb_tui.service.grading.stages.common import StageImages
from srb_tui.service.grading.stages.stage_container import StageContainer
from srb_tui.service.grading.stages.stage_layout import ORIGINAL_DIR, SUBMISSION_DIR, TESTS_DIR

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "tasks" / "demo01-csvtab-python-to-node"
SUITE = "behavioural"
WORK = "/tmp/srb/bench-work"
RESULT = "/tmp/srb/bench-result.json"


def _quiet(_event: object) -> None:
    return None


def timed(script: str) -> list[str]:
    """A shell that prints the nanoseconds ``script`` took as its last line."""
    return ["bash", "-c", f"s=$(date +%s%N); {script} >/dev/null 2>&1; e=$(date +%s%N); "
                          "echo $((e - s))"]


def bare_script(task_dir: Path, python: str) -> tuple[str, str, list[str]]:
    """Every module's command in its folder with the SRB_* contract, one after another
    (each module's nanoseconds printed as ``id ns``); then, apart, the script that counts
    what each recorded."""
    suite = load_suite(task_dir / "tests" / SUITE)
    lines = [f"rm -rf {WORK}; mkdir -p {WORK}/suite"]
    ids = []
    for module in suite.modules:
        rel = module.dir.relative_to(task_dir / "tests")
        module_dir = f"{TESTS_DIR}/{rel.as_posix()}"
        work = f"{WORK}/modules/{module.id}"
        env = {**CONTRACT_DEFAULTS, **suite.env, **module.env,
               "SRB_REPO": SUBMISSION_DIR, "SRB_ORIGINAL": ORIGINAL_DIR,
               "SRB_MODULE_DIR": module_dir, "SRB_MODULE_ID": module.id,
               "SRB_SUITE_DIR": f"{TESTS_DIR}/{SUITE}", "SRB_WORK": work,
               "SRB_SUITE_WORK": f"{WORK}/suite", "SRB_RESULT": f"{work}/result.json",
               "SRB_MODULE_TIMEOUT_SEC": f"{module.timeout_sec:g}"}
        command = list(module.command or (python, "run.py"))
        # the deadline as the grader sets it: the module's start plus its timeout
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + \
            f" SRB_MODULE_DEADLINE=$(( $(date +%s) + {int(module.timeout_sec)} ))"
        lines.append(
            f"mkdir -p {work}; s=$(date +%s%N); (cd {shlex.quote(module_dir)} && env {assigns} "
            f"{shlex.join(command)}) >{work}/out.log 2>&1; e=$(date +%s%N); "
            f"echo {module.id} $((e - s))"
        )
        ids.append(module.id)
    count = ("import json, sys; d = json.load(open(sys.argv[1])); "
             "c = d['checks'] if isinstance(d, dict) else d; "
             "print(len(c), sum(x.get('verdict') == 'pass' for x in c))")
    counting = []
    for module in suite.modules:  # not timed: what each bare module recorded
        counting.append(f"echo checks {module.id} $({shlex.quote(python)} -c "
                     f"{shlex.quote(count)} {WORK}/modules/{module.id}/result.json 2>&1 "
                     f"| tail -1); tail -3 {WORK}/modules/{module.id}/out.log "
                     f"| sed 's/^/output {module.id}: /'")
    return "\n".join(lines), "\n".join(counting), ids


GRADER_PHASES = (("checkpoint", "checkpoints (one a module: its outcome, the next started)"),
                 ("module_setup", "module setup (folders, environment, exec boundary)"),
                 ("module_end", "module end (root scan, submission uid killed and wiped)"),
                 ("suite_digest", "suite digest (tamper check)"),
                 ("result_read", "result read (module JSON, checks normalised, unit)"),
                 ("progress", "progress lines"))
HOST_PHASES = (("context", "suite copied into the container"),
               ("start", "grader exec, interpreter start, submission staged"),
               ("fetch", "stage result from the grader's lines (or the file fetched)"),
               ("parse", "stage result parsed (JSON)"),
               ("verify", "result checked against suite.toml"))


def phase_row(doc: dict[str, Any], host: dict[str, float], grader_sec: float,
              modules_sec: float, store_sec: float) -> dict[str, float]:
    """One harness run's time by phase: the grader's own (its ``phases_sec``), the host's
    (``run_suite_in``'s timings) and the store's."""
    inside = doc.get("metadata", {}).get("phases_sec") or {}
    row = {f"grader.{name}": float(inside.get(name, 0.0)) for name, _ in GRADER_PHASES}
    between = grader_sec - modules_sec
    row["grader.other"] = between - sum(row.values())
    row["modules"] = modules_sec
    row["grader"] = between
    row["host.context"] = host.get("context", 0.0)
    row["host.start"] = host.get("grader", 0.0) - grader_sec
    row["host.staging"] = float(inside.get("stage_submission", 0.0))
    for name in ("fetch", "parse", "verify"):
        row[f"host.{name}"] = host.get(name, 0.0)
    row["host"] = sum(row[f"host.{name}"] for name, _ in HOST_PHASES)
    row["store"] = store_sec
    return row


def print_phases(runs: list[dict[str, float]], modules: int) -> None:
    """Medians of each phase, per suite and per module."""
    def med(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    def line(label: str, key: str, indent: int = 4) -> None:
        sec = med(key)
        print(f"{' ' * indent}{label:58} {sec:7.3f} s  {sec / modules * 1000:6.1f} ms/module")

    print("  the harness's time by phase (medians over the harness rounds):")
    line("module processes (the modules' own runs)", "modules")
    line("grader, between the modules", "grader")
    for name, label in GRADER_PHASES:
        line(label, f"grader.{name}", 6)
    line("the rest (envelope, summaries, loop)", "grader.other", 6)
    line("host, around the grader", "host")
    for name, label in HOST_PHASES:
        line(label, f"host.{name}", 6)
        if name == "start":
            line("of which the submission's staging (in the grader)", "host.staging", 8)
    line("store writes (module rows, every check row)", "store")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="rounds of each side")
    parser.add_argument("--scale", action="store_true",
                        help="the generated fw03-size task (bench/scale_fixture.py)")
    parser.add_argument("--checks", type=int, default=25_000, help="with --scale")
    parser.add_argument("--submission", default="reference",
                        help="with --scale: reference, fail-1 or fail-2000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srb-bench-stage-") as tmp:
        roots: tuple[Path, ...] = (REPO / "tasks",)
        task_dir, submission = TASK, TASK / "submissions" / "reference"
        if args.scale:
            task_dir = scale_fixture.build(Path(tmp) / "tasks", args.checks, 14)
            roots = (Path(tmp) / "tasks",)
            submission = task_dir / "submissions" / args.submission
        settings = Settings(task_roots=roots, state_dir=Path(tmp) / "state")
        await measure(args, settings, task_dir, submission)


async def measure(args: argparse.Namespace, settings: Settings, task_dir: Path,
                  submission: Path) -> None:
    async with open_service(settings) as core:
        await core.connect()
        task = core.catalog.find(task_dir.name)
        assert task is not None and task.task is not None, task_dir
        original = (await core.prepare_state_a(task.task)).tree
        store = await core.store()
        stored = await store.runs.create_run(task_id=task_dir.name, task_path=str(task_dir),
                                             agent=f"replay:{submission.name}")
        for status in ("preparing", "agent", "collecting", "audit", "behavioural"):
            await store.runs.transition(stored.id, status)
        run_id = stored.id
        images = StageImages(core.engine, task.task, settings.base_image, _quiet, run_id=run_id)
        image = await images.get("behavioural")
        the_task = task.task
        assert the_task.evaluation is not None
        spec = next(st for st in the_task.evaluation.stages if st.name == "behavioural")
        counted: list[tuple[int, int]] = []
        bare_counts: list[tuple[int, int]] = []
        parts: list[tuple[float, float, float, float]] = []
        phase_runs: list[dict[str, float]] = []
        docs: list[dict[str, Any]] = []
        b_host: list[float] = []
        async with StageContainer(core.engine, run_id, "behavioural", image.tag,
                                  publish=_quiet, layout=LAYOUT, task=task.task,
                                  image_env=image.env, store=store) as box:
            await box.put_trees(original, submission, workspace=True)
            await box.put_context(task.task, [SUITE])
            script, counting, ids = bare_script(task_dir, box.python)

            async def harness() -> tuple[float, dict[str, float]]:
                # Exactly what Stage II runs (root grader, submission through the launcher
                # under its slot uid), timed from the host: one docker exec more than the
                # bare side, a few ms against a suite of a minute. With --scale, also the
                # stage's store writes (module rows, every check row).
                began = time.perf_counter()
                host: dict[str, float] = {}
                rows = StreamedChecks(store, run_id) if args.scale else None
                doc = await run_suite_in(box, the_task, spec, publish=_quiet, run_id=run_id,
                                         with_original=True, timings=host, rows=rows)
                in_suite = time.perf_counter() - began
                if rows is not None:  # what the stage does after the suite (module rows,
                    await rows.finish(doc)  # the check rows not already streamed)
                total = time.perf_counter() - began
                assert doc.get("status") == "ok", doc.get("notes")
                docs[-1:] = [doc]
                modules_sec = sum(float(u.get("duration_sec") or 0) for u in doc["units"])
                grader_sec = float(doc.get("duration_sec") or 0)
                parts.append((modules_sec, grader_sec - modules_sec, in_suite - grader_sec,
                              total - in_suite))
                phase_runs.append(phase_row(doc, host, grader_sec, modules_sec,
                                            total - in_suite))
                how = {u.get("metadata", {}).get("started_through") for u in doc["units"]}
                assert how == {"srb_submission.run"}, how
                # every check the modules recorded, observations (weight 0) included, as
                # the bare side counts them from the modules' result files
                judged = [row["verdict"] for found in checks_by_module(doc).values()
                          for row in found]
                counted.append((len(judged), sum(v != "pass" for v in judged)))
                per = {u["id"]: float(u.get("duration_sec") or 0) for u in doc["units"]}
                return total, per

            async def bare() -> tuple[float, dict[str, float]]:
                began = time.perf_counter()  # one docker exec, as running from the host needs
                res = await exec_run(core.engine, box.h, ["bash", "-c", script],
                                     timeout_sec=900, workdir="/tmp")
                b_host.append(time.perf_counter() - began)
                counted_res = await exec_run(core.engine, box.h, ["bash", "-c", counting],
                                             timeout_sec=900, workdir="/tmp")
                per = {}
                recorded = [0, 0]
                for line in (res.stdout + counted_res.stdout).decode().splitlines():
                    name, _, ns = line.partition(" ")
                    if name in ids:
                        per[name] = int(ns) / 1e9
                    elif name == "checks":
                        got = ns.split()[1:]
                        if len(got) != 2 or not all(x.isdigit() for x in got):
                            raise SystemExit("a bare module recorded no result: "
                                             f"{line}\n{res.stdout.decode()[-3000:]}")
                        recorded = [recorded[0] + int(got[0]),
                                    recorded[1] + int(got[1])]
                assert set(per) == set(ids), res.stdout
                bare_counts.append((recorded[0], recorded[0] - recorded[1]))
                return sum(per.values()), per

            await harness()  # warm the page cache and the interpreter for both sides
            await bare()
            b_host.clear()  # the warm-up's
            h_tot: list[float] = []
            b_tot: list[float] = []
            h_mod: dict[str, list[float]] = {i: [] for i in ids}
            b_mod: dict[str, list[float]] = {i: [] for i in ids}
            for i in range(args.n):
                order = (harness, bare) if i % 2 == 0 else (bare, harness)
                for side in order:
                    total, per = await side()
                    (h_tot if side is harness else b_tot).append(total)
                    for name, sec in per.items():
                        (h_mod if side is harness else b_mod)[name].append(sec)
        rows = 0
        if args.scale:  # the store holds exactly the last stage result's checks
            held = await store.grading.checks(stored.id, "behavioural")
            want = sorted((module, row["id"], row["verdict"])
                          for module, found in checks_by_module(docs[-1]).items()
                          for row in found)
            assert sorted((c.module_id, c.check_id, c.verdict) for c in held) == want
            rows = len(held)
    mh, mb = statistics.median(h_tot), statistics.median(b_tot)
    scored, failed = counted[-1]
    # the bare modules must have judged the same checks the same way, or the ratio means
    # nothing (a bare module that failed early would look fast)
    assert set(bare_counts) == {(scored, failed)}, (bare_counts, counted[-1])
    what = (f"{task_dir.name} / {submission.name}" if args.scale else "demo suite")
    print(f"Stage II overhead, {what} ({len(ids)} modules, {scored} checks, {failed} failing"
          f"{f', {rows} check rows in the store' if args.scale else ''}), {args.n} rounds "
          f"each, sides alternating, image {image.tag}, load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"  grader suite : median {mh:7.3f} s for the suite")
    mbh = statistics.median(b_host)
    print(f"  bare modules : median {mbh:7.3f} s from the host (one docker exec), {mb:7.3f} s "
          f"timed inside the container, for the same commands (each recorded {scored} "
          f"checks, {failed} failing, as the harness's)")
    for name in ids:
        hm, bm = statistics.median(h_mod[name]), statistics.median(b_mod[name])
        print(f"    {name:10} harness {hm:6.3f} s  bare {bm:6.3f} s  ratio {hm / bm:.3f}")
    med = [statistics.median(p[k] for p in parts) for k in range(4)]
    print(f"  the harness's time, medians: module processes {med[0]:.3f} s, the grader's "
          f"own work between them {med[1]:.3f} s, the host around the grader (exec, relay, "
          f"result lines, JSON, check against suite.toml) {med[2]:.3f} s, store writes "
          f"{med[3]:.3f} s")
    print_phases(phase_runs, len(ids))
    print(f"  ratio harness/bare = {mh / mbh:.3f} per suite, "
          f"{(mh - mbh) / len(ids) * 1000:.0f} ms per module  (goal <= 1.05; both from the "
          f"host); against the bare modules timed inside the container {mh / mb:.3f}, "
          f"{(mh - mb) / len(ids) * 1000:.0f} ms per module")


if __name__ == "__main__":
    asyncio.run(main())
