"""Write a generated task at fw03's size: 14 Stage II modules, 25,000 recorded checks.

The task is demo01 (csvtab, Python to Node.js) with its behavioural suite replaced by a
generated one, in the published schema (task.toml, tests/evaluation.toml,
tests/behavioural/suite.toml with 14 ``[[module]]`` entries, data/cases, data/expected):

* each module owns one generated CSV file (1,785 or 1,786 rows, 25,000 in all) and runs
  the submission's ``bin/csvtab -H -f tsv`` over it once; every output row is one check
  (``<module>-<row>``), compared byte for byte with the row recorded from State A;
* the expected rows are recorded here by running State A (``submissions/untouched``,
  the real Python csvtab) over the same files, the way ``srb tasks record`` records;
* three submissions beside the demo's: ``reference`` (every check passes), ``fail-1``
  (exactly one row differs: the paper's 21,768/21,769 case) and ``fail-2000`` (2,000
  rows differ). The failing ones are the reference with a one-line change of its stdout.

Nothing here is committed as data; the task is written into a folder given on the
command line (default: a new temporary folder) and its path printed.

    .venv/bin/python bench/scale_fixture.py [--out DIR] [--checks 25000] [--modules 14]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "tasks" / "demo01-csvtab-python-to-node"
NAME = "scale01-csvtab-25k"
PYTHON = "/opt/srb/python/bin/python3"
FAULT_ONE = "fault-one"
FAULT_MANY = "fault-many"
FAILING = 2000

RUN_PY = '''"""Generated behavioural module {module!r}: one csvtab run, one check per row."""

import os
import sys
from pathlib import Path

_SUITE = Path(os.environ.get("SRB_SUITE_DIR") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(_SUITE / "lib"))

from batchkit import run_module  # noqa: E402

sys.exit(run_module({module!r}))
'''

BATCHKIT = '''"""Generated suite: run bin/csvtab once per module and judge every output row."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from casekit import (clean_env, is_pre_migration, prepare_workdir, run_case, started_through,
                     suite_dir, write_result)

CASE_TIMEOUT_SEC = 120.0


def argv(module: str) -> list[str]:
    return ["-H", "-f", "tsv", f"inputs/{module}.csv"]


def run_module(module: str) -> int:
    repo = Path(os.environ["SRB_REPO"])
    result = Path(os.environ["SRB_RESULT"])
    work = Path(os.environ.get("SRB_WORK") or tempfile.mkdtemp(prefix="scale-suite-"))
    deadline = float(os.environ.get("SRB_MODULE_DEADLINE") or time.time() + 3600)
    path = suite_dir() / "data" / "expected" / f"{module}.json"
    rows: list[str] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    run_dir = prepare_workdir(work)
    meta: dict[str, Any] = {"module": module, "cases": len(rows),
                            "started_through": started_through(),
                            "oracle": is_pre_migration(repo)}
    got = run_case(repo, {"argv": argv(module)}, run_dir, clean_env(work / "home"),
                   min(CASE_TIMEOUT_SEC, max(1.0, deadline - time.time() - 2.0)))
    lines = got["stdout"].decode("utf-8", errors="replace").split("\\n")
    checks: list[dict[str, Any]] = []
    for n, want in enumerate(rows):
        have = lines[n] if n < len(lines) else None
        check: dict[str, Any] = {"id": f"{module}-{n + 1:05d}",
                                 "verdict": "pass" if have == want else "fail"}
        if have != want:
            check["summary"] = "row differs"
            check["detail"] = f"expected: {want!r}\\nactual: {have!r}"
        checks.append(check)
    notes = [] if got["exit"] == 0 else [f"bin/csvtab exited {got['exit']}"]
    write_result(result, checks, meta, notes)
    return 0
'''

WRAPPER = '''#!/usr/bin/env node
"use strict";
// The reference with one change: {what} is written differently on stdout.
const {{ main }} = require("../lib/cli");
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) =>
  write(Buffer.from(String(chunk).split({word!r}).join({changed!r}), "utf8"), ...rest);
process.exitCode = main(process.argv.slice(2));
'''


def split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def make_rows(count: int, rng: random.Random, start: int) -> list[list[str]]:
    words = ("alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta")
    return [[f"r{start + i:06d}", rng.choice(words), str(rng.randint(-99999, 99999)),
             f"{rng.random() * 1000:.3f}", rng.choice(words) + "-" + rng.choice(words)]
            for i in range(count)]


def write_suite(task: Path, checks: int, modules: int, seed: int) -> list[str]:
    beh = task / "tests" / "behavioural"
    for sub in ("modules", "data", "lib"):
        shutil.rmtree(beh / sub, ignore_errors=True)
    (beh / "lib").mkdir(parents=True)
    shutil.copy(DEMO / "tests" / "behavioural" / "lib" / "casekit.py", beh / "lib")
    (beh / "lib" / "batchkit.py").write_text(BATCHKIT, encoding="utf-8")
    inputs = beh / "data" / "cases" / "inputs"
    inputs.mkdir(parents=True)
    (beh / "data" / "expected").mkdir(parents=True)
    rng = random.Random(seed)
    sizes = split(checks, modules)
    ids = [f"m{k + 1:02d}" for k in range(modules)]
    all_rows = []
    start = 0
    for size in sizes:
        rows = make_rows(size, rng, start)
        start += size
        all_rows.append(rows)
    flat = [row for rows in all_rows for row in rows]
    picked = rng.sample(range(len(flat)), FAILING + 1)
    flat[picked[0]][1] = FAULT_ONE
    for k in picked[1:]:
        flat[k][1] = FAULT_MANY
    lines = ["# Generated by bench/scale_fixture.py: the demo's csvtab at fw03's size.",
             'schema = "swerefactor.behavioural-suite/1"', f'task = "{NAME}"',
             'lib_dir = "lib"', "default_timeout_sec = 300", "",
             "[env]", 'SRB_LEDGER = "/tmp/srb-interpreter-ledger"', ""]
    for mid, rows in zip(ids, all_rows, strict=True):
        text = "".join(",".join(row) + "\n" for row in rows)
        (inputs / f"{mid}.csv").write_text(text, encoding="utf-8")
        mdir = beh / "modules" / mid
        mdir.mkdir(parents=True)
        (mdir / "run.py").write_text(RUN_PY.format(module=mid), encoding="utf-8")
        lines += ["[[module]]", f'id = "{mid}"', f'title = "generated rows, part {mid[1:]}"',
                  "weight = 1.0", f'command = ["{PYTHON}", "run.py"]',
                  f'about = "{len(rows)} generated rows through csvtab -f tsv."', ""]
    (beh / "suite.toml").write_text("\n".join(lines), encoding="utf-8")
    return ids


def record(task: Path, ids: list[str]) -> int:
    """Run State A over every module's input and keep its rows as the expected answers."""
    beh = task / "tests" / "behavioural"
    entry = task / "submissions" / "untouched" / "bin" / "csvtab"
    total = 0
    for mid in ids:
        proc = subprocess.run([sys.executable, str(entry), "-H", "-f", "tsv",
                               f"inputs/{mid}.csv"], cwd=beh / "data" / "cases",
                              capture_output=True, check=True)
        rows = proc.stdout.decode("utf-8").split("\n")[:-1]
        total += len(rows)
        (beh / "data" / "expected" / f"{mid}.json").write_text(
            json.dumps({"module": mid, "rows": rows}, ensure_ascii=False), encoding="utf-8")
    return total


def write_submissions(task: Path) -> None:
    subs = task / "submissions"
    for name, word, what in (("fail-1", FAULT_ONE, "one row"),
                             ("fail-2000", FAULT_MANY, f"{FAILING} rows")):
        dest = subs / name
        shutil.copytree(subs / "reference", dest)
        (dest / "bin" / "csvtab").write_text(
            WRAPPER.format(what=what, word=word, changed=word.upper()), encoding="utf-8")
        (dest / "README.md").write_text(
            f"The reference, but the word {word!r} is upper-cased on stdout: {what} of the"
            " generated suite fail.\n", encoding="utf-8")


def build(out: Path, checks: int, modules: int, seed: int = 38) -> Path:
    task = out / NAME
    if task.exists():
        shutil.rmtree(task)
    shutil.copytree(DEMO, task, ignore=shutil.ignore_patterns("__pycache__"))
    for rel in ("task.toml", "tests/evaluation.toml", "tests/verification/probe.toml"):
        path = task / rel
        path.write_text(path.read_text(encoding="utf-8").replace(DEMO.name, NAME),
                        encoding="utf-8")
    ids = write_suite(task, checks, modules, seed)
    recorded = record(task, ids)
    if recorded != checks:
        raise SystemExit(f"State A wrote {recorded} rows, expected {checks}")
    write_submissions(task)
    return task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder to write the task in")
    parser.add_argument("--checks", type=int, default=25_000)
    parser.add_argument("--modules", type=int, default=14)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="srb-scale-"))
    task = build(out, args.checks, args.modules)
    print(f"task {NAME}: {args.modules} modules, {args.checks} recorded checks; submissions"
          f" reference, fail-1 (1 failing), fail-2000 ({FAILING} failing)")
    print(task)


if __name__ == "__main__":
    main()
