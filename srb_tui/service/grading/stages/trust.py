"""What the host checks before it believes a stage result from a container.

The grader's document is only a claim. A behavioural result counts when the grader exited 0,
every module the task declares is there once (no unknown ids), the weights are the declared
ones, and each module's counts agree with the checks listed for it; completeness and rates
are then recomputed here from those checks with the grader's own rules, never read from
``metadata.complete``. Anything else is a harness fault: the run is invalid, not scored.
"""

from __future__ import annotations

import math
from typing import Any

from srb_tui.grader.contract import MODULE_STATUSES
from srb_tui.grader.suite.checks import count_check, module_rate, new_counts, summarise
from srb_tui.schema import Suite

COUNT_KEYS = ("passed", "failed", "skipped", "errored", "scored", "observations")
VERDICTS = ("pass", "fail", "skip", "error")


class UntrustedResult(Exception):
    """A stage result the host refuses; carries every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _check_ok(check: object) -> bool:
    if not isinstance(check, dict):
        return False
    weight = check.get("weight", 1.0)
    return (
        check.get("verdict") in VERDICTS
        and isinstance(weight, int | float)
        and not isinstance(weight, bool)
        and math.isfinite(weight)
    )


def verify_behavioural(doc: dict[str, Any], suite: Suite | None) -> dict[str, Any]:
    """Check ``doc`` against the declared suite; the recomputed summary
    (``complete``, ``rate``, ...). Raises UntrustedResult."""
    problems: list[str] = []
    units = [u for u in doc.get("units", []) if isinstance(u, dict)]
    checks = doc.get("checks") if isinstance(doc.get("checks"), list) else []
    assert isinstance(checks, list)
    by_id: dict[str, dict[str, Any]] = {}
    for unit in units:
        uid = unit.get("id")
        if not isinstance(uid, str):
            problems.append("a module result has no id")
        elif uid in by_id:
            problems.append(f"module {uid!r} appears twice")
        else:
            by_id[uid] = unit
    if suite is not None:
        declared = {m.id: m for m in suite.modules}
        for mid in declared:
            if mid not in by_id:
                problems.append(f"declared module {mid!r} has no result")
        for mid in by_id:
            if mid not in declared:
                problems.append(f"module {mid!r} is not declared in suite.toml")
        for mid, declared_module in declared.items():
            found = by_id.get(mid)
            if found is not None and float(found.get("weight", -1)) != declared_module.weight:
                problems.append(
                    f"module {mid!r} carries weight {found.get('weight')!r}, "
                    f"suite.toml says {declared_module.weight:g}"
                )
    counted = {mid: new_counts() for mid in by_id}  # one pass over the checks
    for index, check in enumerate(checks):
        if not _check_ok(check):
            problems.append(f"check #{index} is malformed")
            continue
        assert isinstance(check, dict)
        owner = check.get("module")
        counts = counted.get(owner) if isinstance(owner, str) else None
        if counts is None:
            problems.append(f"check #{index} names unknown module {owner!r}")
            continue
        count_check(counts, check["verdict"], float(check.get("weight", 1.0)) > 0)
    recomputed: list[dict[str, Any]] = []
    for mid, unit in by_id.items():
        counts = counted[mid]
        for key in COUNT_KEYS:
            if key in unit and unit.get(key) != counts[key]:
                problems.append(
                    f"module {mid!r}: {key} = {unit.get(key)!r}, its checks say {counts[key]}"
                )
        status = unit.get("status")
        if status not in MODULE_STATUSES:
            problems.append(f"module {mid!r} has status {status!r}")
            status = "error"
        rate = module_rate(str(status), counts)
        if abs(float(unit.get("rate", 0.0)) - rate) > 1e-6:
            problems.append(f"module {mid!r}: rate {unit.get('rate')!r}, its checks say {rate:g}")
        recomputed.append({**unit, **counts, "status": status, "rate": round(rate, 6)})
    if problems:
        raise UntrustedResult(problems)
    return {"units": recomputed, **summarise(recomputed)}
