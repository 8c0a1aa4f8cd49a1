"""Record the expected answers of every behavioural case from State A.

    python3 tests/behavioural/lib/record.py [--repo PATH]

Starts State A's bin/shelf (by default the task's submissions/untouched tree, copied to a
scratch directory first) once per module in suite.toml, sends the module's requests in
order and writes data/expected/<module>.json.  Needs python3 with nothing else (State A is
stdlib-only).  Commit the output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from casekit import run_cases, suite_dir  # noqa: E402

TASK_DIR = Path(__file__).resolve().parents[3]


def module_ids() -> list[str]:
    with open(suite_dir() / "suite.toml", "rb") as handle:
        return [str(module["id"]) for module in tomllib.load(handle)["module"]]


def record(repo: Path, out_dir: Path) -> dict[str, int]:
    counts = {}
    with tempfile.TemporaryDirectory(prefix="shelf-record-") as scratch:
        tree = Path(scratch) / "repo"
        shutil.copytree(repo, tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for module in module_ids():
            answers, error = run_cases(tree, module, Path(scratch) / module, time.time() + 600)
            if error is not None:
                raise SystemExit(f"{module}: State A's server did not start: {error}")
            cases = {}
            for case, got in answers:
                if got is None or got.get("error"):
                    raise SystemExit(f"{module}/{case['id']}: State A gave no response")
                cases[case["id"]] = got
            payload = {"module": module, "recorded_from": "State A (shelf 2.3.0, http.server)",
                       "cases": cases}
            text = json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            (out_dir / f"{module}.json").write_text(text, encoding="utf-8")
            counts[module] = len(cases)
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
