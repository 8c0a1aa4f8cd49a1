"""Record the expected answers of every behavioural case from State A.

    python3 tests/behavioural/lib/record.py [--repo PATH]

Runs State A's bin/csvtab (by default the task's submissions/untouched tree,
copied to a scratch directory first) over the case list of every module in
suite.toml and writes data/expected/<module>.json.  Commit the output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from casekit import (
    CASE_TIMEOUT_SEC,
    clean_env,
    is_pre_migration,
    load_cases,
    prepare_workdir,
    run_case,
    suite_dir,
)

TASK_DIR = Path(__file__).resolve().parents[3]


def module_ids() -> list[str]:
    with open(suite_dir() / "suite.toml", "rb") as handle:
        return [str(module["id"]) for module in tomllib.load(handle)["module"]]


def record(repo: Path, out_dir: Path) -> dict[str, int]:
    """Write one expected file per module; returns the case count per module."""
    counts = {}
    with tempfile.TemporaryDirectory(prefix="csvtab-record-") as scratch:
        work = Path(scratch)
        tree = work / "repo"
        shutil.copytree(repo, tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if not is_pre_migration(tree):
            raise SystemExit(f"{repo}: bin/csvtab is not the Python State A program")
        run_dir = prepare_workdir(work)
        env = clean_env(work / "home")
        for module in module_ids():
            answers = {}
            for case in load_cases(module):
                got = run_case(tree, case, run_dir, env, CASE_TIMEOUT_SEC)
                if got["exit"] != 0 and not got["stderr"].strip():
                    raise SystemExit(f"{module}/{case['id']}: State A failed silently")
                answers[case["id"]] = {
                    "exit": got["exit"],
                    "stdout": got["stdout"].decode("utf-8"),
                    "stderr_nonempty": bool(got["stderr"].strip()),
                }
            payload = {"module": module, "recorded_from": "State A (csvtab 1.2.0, Python)",
                       "cases": answers}
            text = json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            (out_dir / f"{module}.json").write_text(text, encoding="utf-8")
            counts[module] = len(answers)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=TASK_DIR / "submissions" / "untouched")
    parser.add_argument("--out", type=Path, default=suite_dir() / "data" / "expected")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for module, count in record(args.repo, args.out).items():
        print(f"{module}: {count} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
