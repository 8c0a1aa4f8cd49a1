"""Where a finished stage goes: its envelope into the run folder, its row into the store,
the run's provenance stamp, a ``stage_finished`` event, and a ``StageFinished`` on the bus.

One path for every caller that runs a :class:`~.stages.stage.Stage` on a run — the ladder
and a strength campaign's Stage III on a survivor — so a stage's record never depends on
who ran it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from srb_tui.grader.envelope import atomic_write_json
from srb_tui.service.events import StageFinished
from srb_tui.service.grading.stages.common import StageOutcome
from srb_tui.service.grading.stages.stage import StageContext
from srb_tui.service.provenance import stamp as stamp_provenance


def stage_summary(outcome: StageOutcome) -> dict[str, Any]:
    """The few facts of a finished stage the event log and the console show."""
    out: dict[str, Any] = {"status": outcome.status}
    if outcome.harness_error:
        out["harness_error"] = outcome.harness_error
    if outcome.stage == "audit":
        out["gate"] = outcome.audit_gate
    elif outcome.stage == "behavioural":
        out["complete"] = outcome.behavioural_complete
        out["modules"] = {m.get("id"): m.get("rate") for m in outcome.modules}
    else:
        out["adversaries"] = dict(outcome.adversaries)
    return out


def _text(value: object) -> str | None:
    return str(value) if value else None


async def persist_stage(ctx: StageContext, outcome: StageOutcome, path: Path) -> None:
    """Write ``outcome``'s envelope to ``path`` and record the stage on ``ctx``'s run; the
    bus hears of it last, once everything is stored."""
    env = outcome.envelope
    atomic_write_json(path, env)
    harness = env.get("harness") if isinstance(env.get("harness"), dict) else {}
    assert isinstance(harness, dict)
    duration = env.get("duration_sec")
    await ctx.store.grading.record_stage_result(
        ctx.run_id,
        outcome.stage,
        outcome.status,
        started_at=_text(env.get("started_at")),
        duration_sec=float(duration) if isinstance(duration, int | float) else None,
        fingerprint=_text(harness.get("fingerprint")),
        result=env,
    )
    await stamp_provenance(ctx.store, ctx.run_id, outcome.stage)
    summary = stage_summary(outcome)
    await ctx.store.infra.add_event(
        ctx.run_id, "stage_finished", {"stage": outcome.stage, **summary}
    )
    ctx.publish(StageFinished(ctx.run_id, outcome.stage, outcome.status, summary))
