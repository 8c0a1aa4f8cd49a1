"""Record the expected answers of every behavioural case from State A.

    python3 tests/behavioural/lib/record.py [--repo DIR] [--out DIR]

Runs State A's entry point (``data/program.json``; by default the task's
``submissions/untouched`` tree, copied to a scratch directory first) over the case list of
every module in ``suite.toml``, twice, and writes ``data/expected/<module>.json``. A case
whose two runs differ, or that fails with nothing on stderr, is refused: the suite compares
stdout byte for byte, so an answer must be reproducible. Re-run it after editing a case
list, then commit the output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from casekit import (
    clean_env,
    is_pre_migration,
    load_cases,
    prepare_workdir,
    program,
    run_case,
    suite_dir,
)

TASK_DIR = Path(__file__).resolve().parents[3]


def module_ids() -> list[str]:
    with open(suite_dir() / "suite.toml", "rb") as handle:
        return [str(module["id"]) for module in tomllib.load(handle)["module"]]


def answer_of(got: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {"exit": got["exit"], "stderr_nonempty": bool(got["stderr"].strip())}
    try:
        answer["stdout"] = got["stdout"].decode("utf-8")
    except UnicodeDecodeError:
        answer["stdout_hex"] = got["stdout"].hex()
    return answer


def record(repo: Path, out_dir: Path) -> dict[str, int]:
    """Write one expected file per module; returns the case count per module."""
    counts = {}
    limit = float(program().get("case_timeout_sec", 20))
    with tempfile.TemporaryDirectory(prefix="srb-record-") as scratch:
        work = Path(scratch)
        tree = work / "repo"
        shutil.copytree(repo, tree, symlinks=True)
        if not is_pre_migration(tree):
            raise SystemExit(f"{repo}: {program()['entry']} is not State A's program "
                             "(its first line does not name State A's interpreter)")
        env = clean_env(work / "home")
        for module in module_ids():
            answers = {}
            for case in load_cases(module):
                runs = []
                for _ in range(2):
                    run_dir = prepare_workdir(work)
                    runs.append(run_case(tree, case, run_dir, env, limit))
                first, second = runs
                if (first["exit"], first["stdout"]) != (second["exit"], second["stdout"]):
                    raise SystemExit(f"{module}/{case['id']}: State A gave two different "
                                     "answers; a case must be deterministic")
                if first["exit"] != 0 and not first["stderr"].strip():
                    raise SystemExit(f"{module}/{case['id']}: State A exited "
                                     f"{first['exit']} with nothing on stderr")
                answers[case["id"]] = answer_of(first)
            payload = {"module": module, "recorded_from": "State A", "cases": answers}
            text = json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            (out_dir / f"{module}.json").write_text(text, encoding="utf-8")
            counts[module] = len(answers)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, default=TASK_DIR / "submissions" / "untouched")
    parser.add_argument("--out", type=Path, default=suite_dir() / "data" / "expected")
    args = parser.parse_args()
    if not args.repo.is_dir():
        print(f"{args.repo}: no such directory (State A's tree)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for module, count in record(args.repo, args.out).items():
        print(f"{module}: {count} cases recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
