"""Read a human-label CSV: columns ``run_id``, ``genuine`` (yes/no), ``annotator``.

Header names are case-insensitive and may come in any order; other columns are ignored.
Every problem is reported at once as ``FILE:LINE: message``; a file with any problem
yields no labels.
"""

from __future__ import annotations

import csv
import io

from srb_tui.store.labels import HumanLabel

REQUIRED = ("run_id", "genuine", "annotator")
YES = frozenset({"yes", "y", "true", "1", "genuine"})
NO = frozenset({"no", "n", "false", "0", "not genuine"})


def parse_labels(text: str, file: str) -> tuple[list[HumanLabel], list[str]]:
    """Labels and problems (labels is empty when there is any problem)."""
    reader = csv.reader(io.StringIO(text))
    problems: list[str] = []
    try:
        header = next(reader)
    except StopIteration:
        return [], [f"{file}: empty file (expected a header run_id,genuine,annotator)"]
    names = [h.strip().lower() for h in header]
    missing = [col for col in REQUIRED if col not in names]
    if missing:
        return [], [f"{file}:1: missing column(s) {', '.join(missing)} "
                    f"(found {', '.join(names) or 'none'})"]
    index = {col: names.index(col) for col in REQUIRED}
    labels: list[HumanLabel] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(names):
            problems.append(f"{file}:{number}: {len(row)} fields, the header has {len(names)}")
            continue
        run_id = row[index["run_id"]].strip()
        annotator = row[index["annotator"]].strip()
        verdict = row[index["genuine"]].strip().lower()
        where = f"{file}:{number}"
        if not run_id:
            problems.append(f"{where}: column run_id is empty")
        if not annotator:
            problems.append(f"{where}: column annotator is empty")
        if verdict in YES:
            genuine = True
        elif verdict in NO:
            genuine = False
        else:
            problems.append(f"{where}: column genuine: {verdict!r} is not yes/no")
            continue
        if not run_id or not annotator:
            continue
        key = (run_id, annotator)
        if key in seen:
            problems.append(f"{where}: run {run_id} labelled twice by {annotator} "
                            f"(first on line {seen[key]})")
            continue
        seen[key] = number
        labels.append(HumanLabel(run_id, annotator, genuine, where))
    return ([] if problems else labels), problems
