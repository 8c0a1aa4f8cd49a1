"""``srb export --results``: a graded run as the published harness's trial folder.

The ladder already writes the published result files into the run's folder (``score.json``,
``reward.json``, ``summary.txt``, ``telemetry.json`` and the stage results: see
:mod:`srb_tui.scoring.result_files`). This lays them out as a Harbor trial, so tools built
for the published grader (and ``srb import``) read the run::

    OUT/<run id>/config.json        Harbor's trial config: agent name, model, effort
    OUT/<run id>/result.json        agent_result.cost_usd (when the agent's spend is known)
    OUT/<run id>/provenance.json    srb's provenance record of the run (when recorded)
    OUT/<run id>/agent/trajectory.json   the agent's ATIF trajectory (as Harbor keeps it)
    OUT/<run id>/verifier/          score.json, reward.json, summary.txt, telemetry.json,
                                    audit.json, behavioural.json, verification.json
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from srb_tui.store.provenance import Provenance
from srb_tui.store.records import RunRecord

RESULT_FILES = ("score.json", "reward.json", "summary.txt", "telemetry.json")
STAGE_FILES = ("audit.json", "behavioural.json", "verification.json")


def _dump(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def export_trial(run: RunRecord, run_dir: Path, out: Path, *,
                 cost_usd: float | None = None,
                 trajectory: dict[str, Any] | None = None) -> Path | str:
    """Write ``run``'s trial folder under ``out``; its path, or why it cannot be written
    (the run was never graded: it has no ``score.json``)."""
    if not (run_dir / "score.json").is_file() or not (run_dir / "reward.json").is_file():
        return f"run {run.id}: no score.json/reward.json in {run_dir} (not graded)"
    trial = out / run.id
    verifier = trial / "verifier"
    verifier.mkdir(parents=True, exist_ok=True)
    for name in (*RESULT_FILES, *STAGE_FILES):
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, verifier / name)
    agent: dict[str, Any] = {"name": run.agent.split(":", 1)[0], "model_name": run.model,
                             "kwargs": {"reasoning_effort": run.effort} if run.effort else {}}
    _dump(trial / "config.json", {"task": {"path": run.task_path}, "trial_name": run.id,
                                  "agent": agent, "srb": {"agent": run.agent}})
    _dump(trial / "result.json", {"trial_name": run.id, "task_name": run.task_id,
                                  "agent_result": {"cost_usd": cost_usd}})
    found = Provenance.read(run.extra)
    if found is not None:
        _dump(trial / "provenance.json", found.full_json())
    if trajectory is not None:
        (trial / "agent").mkdir(exist_ok=True)
        _dump(trial / "agent" / "trajectory.json", trajectory)
    return trial
