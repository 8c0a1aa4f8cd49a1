"""Stage II's check arithmetic: a module's ``$SRB_RESULT`` read and made safe, the counts over
its scored checks, the module rate and the stage summary (the host's trust checks recompute
the same numbers with these functions).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .manifest import is_number

VERDICTS = ("pass", "fail", "skip", "error")
MAX_RESULT_BYTES = 128 * 1024 * 1024


def normalise_check(raw: object, index: int) -> dict[str, Any]:
    """One reported check made safe: unknown verdict => error, weight <= 0 => unscored."""
    if type(raw) is dict:  # the usual check, in one step (25,000 of them at fw03's size)
        check_id, verdict = raw.get("id"), raw.get("verdict")
        weight = raw.get("weight", 1.0)
        if (type(check_id) is str and check_id and verdict in VERDICTS
                and type(weight) in (float, int) and math.isfinite(weight)):
            usual: dict[str, Any] = {"id": check_id, "verdict": verdict,
                                     "weight": float(weight), "scored": weight > 0}
            for key in ("summary", "detail", "evidence"):
                if key in raw:
                    usual[key] = raw[key]
            return usual
    if not isinstance(raw, dict):
        return {
            "id": f"#{index}",
            "verdict": "error",
            "weight": 1.0,
            "scored": True,
            "summary": f"check #{index} is not an object",
        }
    check: dict[str, Any] = {}
    problems: list[str] = []
    check_id = raw.get("id")
    if isinstance(check_id, str) and check_id:
        check["id"] = check_id
    else:
        check["id"] = f"#{index}"
        problems.append("check has no id")
    verdict = raw.get("verdict")
    if verdict in VERDICTS:
        check["verdict"] = verdict
    else:
        check["verdict"] = "error"
        check["reported_verdict"] = verdict
        problems.append(f"unknown verdict {verdict!r}")
    weight = raw.get("weight", 1.0)
    if not is_number(weight) or not math.isfinite(weight):
        problems.append(f"weight {weight!r} is not a number")
        weight = 1.0
    check["weight"] = float(weight)
    check["scored"] = float(weight) > 0
    for key in ("summary", "detail", "evidence"):
        if key in raw:
            check[key] = raw[key]
    if problems:
        check["verdict"] = "error"
        reason = "; ".join(problems)
        summary = check.get("summary")
        check["summary"] = f"{reason}: {summary}" if isinstance(summary, str) else reason
    return check


def read_result_bytes(path: Path) -> tuple[bytes | None, str]:
    """A module's result file as it is now: (its bytes, '') or (None, the problem)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None, "no result written to $SRB_RESULT"
    except OSError as exc:
        return None, f"result unreadable: {exc}"
    if size > MAX_RESULT_BYTES:
        return None, f"result is {size} bytes, over the {MAX_RESULT_BYTES}-byte cap"
    try:
        return path.read_bytes(), ""
    except OSError as exc:
        return None, f"result unreadable: {exc}"


def parse_module_result(
    raw: bytes,
) -> tuple[list[dict[str, Any]], dict[str, Any], list[Any], str]:
    """A module's result file, as :func:`read_result_bytes` gave it: (checks, metadata,
    notes, problem); problem '' if fine."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [], {}, [], f"result is not valid JSON: {exc}"
    metadata: dict[str, Any] = {}
    notes: list[Any] = []
    raw_checks: list[Any]
    if isinstance(data, list):
        raw_checks = data
    elif isinstance(data, dict):
        meta = data.get("metadata", {})
        metadata = meta if isinstance(meta, dict) else {"value": meta}
        raw_notes = data.get("notes", [])
        notes = raw_notes if isinstance(raw_notes, list) else [raw_notes]
        found = data.get("checks", [])
        if not isinstance(found, list):
            return [], metadata, notes, "result 'checks' is not a list"
        raw_checks = found
    else:
        return [], {}, [], f"result is a JSON {type(data).__name__}, not an object or list"
    checks = [normalise_check(raw, index) for index, raw in enumerate(raw_checks)]
    return checks, metadata, notes, ""


COUNT_OF = {"pass": "passed", "fail": "failed", "skip": "skipped", "error": "errored"}
"""The count a scored check's verdict adds to."""


def new_counts() -> dict[str, int]:
    """Zero counts: passed/failed/skipped/errored/scored over scored checks, observations."""
    return {"passed": 0, "failed": 0, "skipped": 0, "errored": 0, "scored": 0, "observations": 0}


def count_check(counts: dict[str, int], verdict: str, scored: bool) -> None:
    """Add one check to ``counts``: a scored one to its verdict's count, else an observation."""
    if not scored:
        counts["observations"] += 1
        return
    counts["scored"] += 1
    counts[COUNT_OF[verdict]] += 1


def tally(checks: list[dict[str, Any]]) -> dict[str, int]:
    """Counts over scored checks (passed/failed/skipped/errored/scored) and observations."""
    counts = new_counts()
    for check in checks:
        count_check(counts, check.get("verdict", ""), bool(check.get("scored")))
    return counts


def module_rate(status: str, counts: Mapping[str, int]) -> float:
    """passed / scored for an ok module; 0 for an empty pool or any non-ok status."""
    if status != "ok" or counts["scored"] == 0:
        return 0.0
    return counts["passed"] / counts["scored"]


def summarise(units: list[dict[str, Any]]) -> dict[str, Any]:
    """Stage-level numbers: weighted rate and completeness over the module units."""
    weighted = [unit for unit in units if unit["weight"] > 0]
    total_weight = sum(unit["weight"] for unit in weighted)
    rate = (
        sum(unit["weight"] * unit["rate"] for unit in weighted) / total_weight
        if total_weight > 0
        else 0.0
    )
    complete = bool(weighted) and all(
        unit["status"] == "ok" and unit["scored"] > 0 and unit["passed"] == unit["scored"]
        for unit in weighted
    )
    return {
        "complete": complete,
        "rate": round(rate, 6),
        "modules_total": len(units),
        "modules_ok": sum(1 for unit in units if unit["status"] == "ok"),
        "modules_unreached": sum(1 for unit in units if unit["status"] == "unreached"),
        "checks_scored": sum(unit["scored"] for unit in units),
        "checks_passed": sum(unit["passed"] for unit in units),
    }
