"""The faults table: every fault the fault tests inject, how often, and what came of it.

    python bench/faults_report.py            # run tests/faults, then print the table
    python bench/faults_report.py --full     # the same with SRB_FULL_FAULTS=1 (every boundary)
    python bench/faults_report.py --ledger PATH   # only print the table of a ledger

Each fault test appends one JSON line per injection to the ledger (``SRB_FAULTS_LEDGER``,
see tests/faults/harness.py): the fault, where it was injected, the result (``resumed``:
the run went on and ended as an uninterrupted run does; ``invalid``: the run ended
invalid, never scored; ``refused``: srb refused cleanly with a message naming the file and
changed nothing; ``wrong``: a wrong score, a lost record, a traceback or a changed file)
and the log lines lost and duplicated. The goal is 0 wrong, 0 lost, 0 duplicated.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = ("resumed", "invalid", "refused", "wrong")


def table(rows: list[dict[str, object]], *, by_point: bool) -> str:
    groups: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        key = (str(row["fault"]), str(row["point"]) if by_point else "")
        groups[key].append(row)
    head = ["fault", *(["point"] if by_point else []), "injected", *RESULTS,
            "lines lost", "lines duplicated"]
    body = []
    for (fault, point), items in sorted(groups.items()):
        counts = [sum(1 for i in items if i["result"] == r) for r in RESULTS]
        lost = sum(int(str(i.get("lines_lost", 0))) for i in items)
        dup = sum(int(str(i.get("lines_duplicated", 0))) for i in items)
        body.append([fault, *([point] if by_point else []), str(len(items)),
                     *map(str, counts), str(lost), str(dup)])
    numeric = 1 + len(RESULTS) + 2
    total = [sum(int(r[i]) for r in body) for i in range(len(head) - numeric, len(head))]
    body.append(["total", *([""] if by_point else []), *map(str, total)])
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
              for r in body]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", type=Path, help="print this ledger; run nothing")
    parser.add_argument("--full", action="store_true", help="every boundary (slow)")
    parser.add_argument("--by-point", action="store_true", help="one row per point")
    args = parser.parse_args()
    ledger = args.ledger
    code = 0
    if ledger is None:
        ledger = Path(tempfile.mkdtemp(prefix="srb-faults-")) / "ledger.jsonl"
        env = {**os.environ, "SRB_FAULTS_LEDGER": str(ledger)}
        if args.full:
            env["SRB_FULL_FAULTS"] = "1"
        code = subprocess.run([sys.executable, "-m", "pytest", "tests/faults", "-q"],
                              cwd=REPO, env=env, check=False).returncode
    rows = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()] \
        if ledger.is_file() else []
    print(table(rows, by_point=args.by_point))
    wrong = sum(1 for r in rows if r["result"] == "wrong")
    damage = sum(int(r.get("lines_lost", 0)) + int(r.get("lines_duplicated", 0)) for r in rows)
    return 1 if code or wrong or damage or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
