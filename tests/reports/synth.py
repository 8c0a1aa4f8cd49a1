"""Synthetic stores with known outcomes, written through the Store's public API.

``add_run(store, Spec(...))`` creates a run, walks it through the lifecycle, records its
gate outcomes, Stage II modules/checks and Stage III rounds, and stores the score envelope
that ``srb_tui.scoring.score_run`` computes from those facts (so the verdict record has
exactly the shape the ladder writes). Nothing here computes a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from srb_tui.scoring import ScoringPolicy, score_run
from srb_tui.store import Store

POLICY = ScoringPolicy(
    max_score=100, behavioural_points=40, verification_points=60, verification_models=6,
    points_per_survived_model=10,
)
ADVERSARIES = ("a01", "a02", "a03", "a04", "a05", "a06")
MODELS = {"a01": "opus", "a02": "opus", "a03": "sonnet", "a04": "sonnet", "a05": "gpt",
          "a06": "gpt"}


@dataclass
class Spec:
    task: str = "t1"
    agent: str = "replay:x"
    model: str | None = None
    effort: str | None = None
    audit: str = "pass"  # pass | fail | error
    # modules: (id, passed, scored); complete = every module passed == scored
    modules: Sequence[tuple[str, int, int]] = (("m1", 10, 10),)
    broken: Sequence[str] = ()  # adversary ids that broke it
    errored: Sequence[str] = ()
    durations: dict[str, float] = field(default_factory=dict)
    gates: Sequence[tuple[str, int, int]] = (("g1", 3, 0),)  # (id, votes pass, votes fail)
    missed: Sequence[tuple[str, str]] = ()  # (module, check id) failed checks to store
    infra_error: bool = False
    cancelled: bool = False
    behavioural_error: bool = False


async def add_run(store: Store, spec: Spec) -> str:
    run = await store.runs.create_run(task_id=spec.task, task_path=f"/tasks/{spec.task}",
                                      agent=spec.agent, model=spec.model, effort=spec.effort,
                                      budget_sec=60)
    rid = run.id
    for status in ("preparing", "agent", "collecting"):
        await store.runs.transition(rid, status)
    if spec.infra_error:
        await store.runs.update_run(rid, valid=False, harness_error="engine went away")
        await store.runs.transition(rid, "infra_error", "synthetic")
        return rid
    if spec.cancelled:
        await store.runs.transition(rid, "cancelled", "synthetic")
        return rid
    await store.runs.transition(rid, "audit")
    await store.grading.record_gate_outcomes(rid, [
        {"gate_id": g, "verdict": "pass" if p >= f else "fail", "votes_pass": p,
         "votes_fail": f, "tie": p == f}
        for g, p, f in spec.gates
    ])
    await store.runs.transition(rid, "behavioural")
    modules = [
        {"id": m, "weight": 1.0, "status": "ok", "rate": (p / s if s else 0.0), "passed": p,
         "scored": s}
        for m, p, s in spec.modules
    ]
    complete: bool | None = all(p == s for _m, p, s in spec.modules)
    if spec.behavioural_error:
        complete = None
    by_module: dict[str, list[dict[str, str]]] = {}
    for m, c in spec.missed:
        by_module.setdefault(m, []).append({"id": c, "verdict": "fail"})
    for m, checks in by_module.items():
        await store.grading.record_checks(rid, "behavioural", checks, module_id=m)
    gate_open = spec.audit == "pass" and complete is True
    outcomes = None
    if gate_open:
        await store.runs.transition(rid, "verification")
        outcomes = {}
        for adv in ADVERSARIES:
            outcome = ("broken" if adv in spec.broken
                       else "error" if adv in spec.errored else "survived")
            outcomes[adv] = outcome
            await store.grading.record_adversary_round(
                rid, adv, status=outcome, model=MODELS[adv],
                duration_sec=spec.durations.get(adv, 600.0),
            )
    envelope = score_run(spec.audit, complete, modules, outcomes, POLICY)
    await store.runs.update_run(
        rid,
        score=envelope.score,
        max_score=100.0,
        valid=envelope.valid,
        blocked_by=envelope.blocked_by,
        harness_error=envelope.harness_error,
    )
    await store.infra.add_event(rid, "score", envelope.to_json())
    await store.runs.transition(rid, "scored", "graded")
    return rid
