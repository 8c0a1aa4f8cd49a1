"""Writing a run's result files: score.json, summary.txt, telemetry.json, reward.json last.

``reward.json`` holds numbers only, under the published key set (``infra/swerefactor/
harbor.py``: ``flatten``), and is always written — a harness error publishes ``valid: 0``,
so a missing file never stands for a run that was graded. ``telemetry.json`` is the
published ``swerefactor.telemetry/1`` projection of the grading models' time and tokens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srb_tui.grader.envelope import atomic_write_json

from .published import TELEMETRY_SCHEMA, key_of

REWARD_FILE = "reward.json"
SCORE_FILE = "score.json"
SUMMARY_FILE = "summary.txt"
TELEMETRY_FILE = "telemetry.json"


def flatten(doc: Mapping[str, Any]) -> dict[str, float | int]:
    """reward.json from a verdict document (see the module docstring)."""
    fn, adv = doc.get("behavioural") or {}, doc.get("verification") or {}
    stages_run = list(doc.get("stages_run") or [])
    unscored_stages = doc.get("unscored_stages") or {}
    gate = doc.get("audit_gate")
    flat: dict[str, float | int] = {
        "reward": float(doc.get("reward") or 0.0),
        "score": float(doc.get("score") or 0.0),
        "max_score": float(doc.get("max_score") or 0.0),
        "valid": int(bool(doc.get("valid"))),
        "stage1_ran": int(gate != "not-run"),
        "stage1_passed": int(gate == "pass"),
        "stage1_failures": len(doc.get("audit_failures") or []),
        "stage2_ran": int("behavioural" in stages_run or bool(unscored_stages.get("behavioural"))),
        "stage2_scored": int("behavioural" in stages_run),
        "stage2_points": round(float(fn.get("points") or 0.0), 4),
        "stage2_rate": round(float(fn.get("rate") or 0.0), 6),
        "stage2_modules": len(fn.get("modules") or []),
        "stage3_ran": int(
            "verification" in stages_run or bool(unscored_stages.get("verification"))
        ),
        "stage3_scored": int("verification" in stages_run),
        "stage3_points": round(float(adv.get("points") or 0.0), 4),
        "stage3_models": int(adv.get("models_total") or 0),
        "stage3_survived": int(adv.get("models_survived") or 0),
        "stage3_broken": len(adv.get("breaks") or []),
    }
    for stage in ("audit-gate", "behavioural-incomplete"):
        flat["blocked_by_" + stage.replace("-", "_")] = int(doc.get("blocked_by") == stage)
    uncounted = doc.get("uncounted") or {}
    fn_unc, adv_unc = uncounted.get("behavioural") or {}, uncounted.get("verification") or {}
    flat["stage2_uncounted_ran"] = int(bool(fn_unc.get("ran")))
    flat["stage2_uncounted_points"] = round(float(fn_unc.get("points", 0.0)), 4)
    flat["stage2_uncounted_rate"] = round(float(fn_unc.get("rate", 0.0)), 6)
    flat["stage2_uncounted_modules"] = int(fn_unc.get("modules", 0))
    flat["stage2_uncounted_complete"] = int(bool(fn_unc.get("complete", False)))
    flat["stage3_uncounted_ran"] = int(bool(adv_unc.get("ran")))
    flat["stage3_uncounted_points"] = round(float(adv_unc.get("points", 0.0)), 4)
    flat["stage3_uncounted_models"] = int(adv_unc.get("models_total", 0))
    flat["stage3_uncounted_survived"] = int(adv_unc.get("models_survived", 0))
    for module in fn.get("modules") or []:
        key = key_of(str(module.get("id", "")))
        checks = module.get("checks") or {}
        flat[f"module_{key}_rate"] = round(float(module.get("rate") or 0.0), 6)
        flat[f"module_{key}_weight"] = round(float(module.get("weight") or 0.0), 6)
        for name in ("passed", "failed", "errored", "skipped"):
            flat[f"module_{key}_{name}"] = int(checks.get(name, 0))
        flat[f"module_{key}_ran"] = int(module.get("status") == "ok")
    for entry in ((doc.get("metadata") or {}).get("verification") or {}).get("rounds") or []:
        rid, outcome = str(entry.get("adversary") or ""), str(entry.get("outcome") or "")
        if rid and outcome in ("survived", "broken"):
            flat[f"adversary_{key_of(rid)}_survived"] = int(outcome == "survived")
    flat["harnesses_distinct"] = len(
        {str(h.get("fingerprint")) for h in doc.get("harnesses") or [] if h.get("fingerprint")}
    )
    return flat


def telemetry(doc: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
    """telemetry.json: stage 1 samples and stage 3 rounds, cost only."""
    meta = doc.get("metadata") or {}

    def pick(record: Mapping[str, Any], head: dict[str, Any]) -> dict[str, Any]:
        usage = record.get("usage") or {}
        return {
            **head,
            "driver": usage.get("driver"),
            "model": usage.get("model"),
            "elapsed_sec": record.get("elapsed_sec"),
            "calls": usage.get("calls"),
            "input_tokens": usage.get("input_tokens"),
            "output_tokens": usage.get("output_tokens"),
            "credits": usage.get("credits"),
        }

    samples = (meta.get("audit") or {}).get("samples") or []
    rounds = (meta.get("verification") or {}).get("rounds") or []
    return {
        "schema": TELEMETRY_SCHEMA,
        "task": doc.get("task"),
        "model": None,
        "run": run_dir.name,
        "stage1": [pick(s, {"index": s.get("index")}) for s in samples],
        "stage3": [
            pick(r, {"adversary": r.get("adversary"), "outcome": r.get("outcome")})
            for r in rounds
        ],
    }


def summary(doc: Mapping[str, Any]) -> str:
    """summary.txt: the verdict as a person reads it."""
    fn, adv = doc.get("behavioural") or {}, doc.get("verification") or {}
    lines = [
        f"{doc.get('task')}: {doc.get('score'):g} / {doc.get('max_score'):g}"
        + ("" if doc.get("valid") else "  (NOT VALID: re-run; the grader did not complete)"),
        f"Stage I   audit gate: {doc.get('audit_gate')}"
        + (f" ({len(doc.get('audit_failures') or [])} gate(s) failed)"
           if doc.get("audit_failures") else ""),
        f"Stage II  behavioural: {fn.get('points', 0):g} points, weighted rate "
        f"{float(fn.get('rate') or 0):.4f}",
    ]
    for module in fn.get("modules") or []:
        checks = module.get("checks") or {}
        lines.append(
            f"    {module.get('id')}: rate {float(module.get('rate') or 0):.4f}, "
            f"{checks.get('passed', 0)} passed, {checks.get('failed', 0)} failed, "
            f"{checks.get('errored', 0)} errored, {checks.get('skipped', 0)} skipped "
            f"[{module.get('status')}]"
        )
    lines.append(
        f"Stage III verification: {adv.get('points', 0):g} points, "
        f"{adv.get('models_survived', 0)} of {adv.get('models_total', 0)} adversaries survived"
    )
    for entry in ((doc.get("metadata") or {}).get("verification") or {}).get("rounds") or []:
        lines.append(f"    {entry.get('adversary')}: {entry.get('outcome')} — "
                     f"{str(entry.get('reason') or '')[:200]}")  # fmt: skip
    if doc.get("blocked_by"):
        lines.append(f"stopped by: {doc.get('blocked_by')}")
    if doc.get("harness_error"):
        lines.append(f"harness error: {doc.get('harness_error')}")
    for stage, why in (doc.get("unscored_stages") or {}).items():
        lines.append(f"not counted: {stage} ({why})")
    lines += [f"note: {note}" for note in doc.get("notes") or []]
    return "\n".join(lines) + "\n"


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_result_files(directory: str | os.PathLike[str], doc: Mapping[str, Any]) -> list[Path]:
    """score.json, summary.txt, telemetry.json, then reward.json (always; last)."""
    folder = Path(directory)
    reward = folder / REWARD_FILE
    reward.unlink(missing_ok=True)
    atomic_write_json(folder / SCORE_FILE, dict(doc))
    _write_text(folder / SUMMARY_FILE, summary(doc))
    atomic_write_json(folder / TELEMETRY_FILE, telemetry(doc, folder))
    atomic_write_json(reward, flatten(doc))
    return [folder / name for name in (SCORE_FILE, SUMMARY_FILE, TELEMETRY_FILE, REWARD_FILE)]
