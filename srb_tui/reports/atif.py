"""``srb export --atif``: a run's agent transcript as an ATIF trajectory, validated.

ATIF is Harbor's Agent Trajectory Interchange Format. The schema srb validates against is
generated from the package that defines the format (``harbor.models.trajectories``; see
``scripts/vendor_atif_schema.py`` and ``atif_schema/``), checked with ``jsonschema``, plus the
one rule the models state beyond the schema: step ids run 1, 2, 3 ….

The trajectory of a run: step 1 is the task's instruction (``user``); then, per agent
round, a ``user`` step naming the round's prompt and the client's steps in stream order —
each assistant message an ``agent`` step, each tool call added to the agent step before it
(a new one when there is none) with its result as that step's observation. A round's token
counts and its cost (the gateway ledger's for the round, else the client's own estimate)
are the metrics of its last agent step. A built-in agent (replay, command, untouched)
has no model transcript: one ``agent`` step says so.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from srb_tui.store import Store
from srb_tui.store.agent_log_records import AgentEventRecord, AgentRound
from srb_tui.store.ledger_records import LedgerRow
from srb_tui.store.provenance import Provenance
from srb_tui.store.records import RunRecord

SCHEMA_FILE = Path(__file__).resolve().parent / "atif_schema" / "trajectory.schema.json"
SCHEMA_VERSION = "ATIF-v1.8"


@functools.cache
def schema() -> dict[str, Any]:
    loaded = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def problems(doc: Any) -> list[str]:
    """Why ``doc`` is not a valid ATIF trajectory (empty: it is)."""
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError(f"ATIF validation needs jsonschema: pip install -e '.[stats]' "
                          f"({exc})") from exc
    validator = jsonschema.Draft202012Validator(schema())
    found = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
             for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.path))]
    steps = doc.get("steps") if isinstance(doc, dict) else None
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, dict) and step.get("step_id") != i + 1:
            found.append(f"steps/{i}/step_id: expected {i + 1} (sequential from 1)")
    return found


def _instruction(run: RunRecord) -> str:
    path = Path(run.task_path) / "instruction.md"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return f"(task {run.task_id}: instruction.md not readable at {path})"


class _Steps:
    def __init__(self, model: str | None) -> None:
        self.steps: list[dict[str, Any]] = []
        self.model = model

    def add(self, source: str, message: str, ts: str | None = None,
            **more: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source,
                                "message": message}
        if ts:
            step["timestamp"] = ts
        if source == "agent" and self.model:
            step["model_name"] = self.model
        step.update({k: v for k, v in more.items() if v is not None})
        self.steps.append(step)
        return step

    def last_agent(self, since: int) -> dict[str, Any] | None:
        agents = [s for s in self.steps[since:] if s.get("source") == "agent"]
        return agents[-1] if agents else None


def _round_steps(out: _Steps, rnd: AgentRound, events: Sequence[AgentEventRecord],
                 cost: float | None) -> None:
    start = len(out.steps)
    out.add("user", f"srb round {rnd.round}: {rnd.prompt_kind} prompt", rnd.started_at)
    calls: dict[str, dict[str, Any]] = {}
    for ev in events:
        if ev.kind == "message":
            out.add("agent", str(ev.data.get("text") or ""), ev.ts,
                    reasoning_content=None)
        elif ev.kind == "tool_call":
            step = out.last_agent(start + 1)
            if step is None or step is not out.steps[-1]:
                step = out.add("agent", "", ev.ts)
            call_id = str(ev.data.get("id") or f"call-{rnd.round}-{ev.seq}")
            raw = ev.data.get("input")
            args = raw if isinstance(raw, dict) else {"input": raw}
            step.setdefault("tool_calls", []).append(
                {"tool_call_id": call_id, "function_name": str(ev.data.get("name") or "tool"),
                 "arguments": args})
            calls[call_id] = step
        elif ev.kind == "tool_result":
            call_id = str(ev.data.get("id") or "")
            owner = calls.get(call_id) or out.last_agent(start + 1)
            if owner is None:
                continue
            owner.setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": call_id or None, "content": str(ev.data.get("output") or ""),
                 **({"extra": {"is_error": True}} if ev.data.get("is_error") else {})})
    last = out.last_agent(start + 1) or out.add("agent", rnd.final_message or "", rnd.ended_at)
    last["metrics"] = {"prompt_tokens": rnd.input_tokens + rnd.cache_read_tokens
                       + rnd.cache_write_tokens,
                       "completion_tokens": rnd.output_tokens,
                       "cached_tokens": rnd.cache_read_tokens,
                       **({"cost_usd": cost} if cost is not None else {}),
                       "extra": {"reasoning_tokens": rnd.reasoning_tokens,
                                 "cache_write_tokens": rnd.cache_write_tokens}}


def _round_costs(rows: Sequence[LedgerRow]) -> dict[int, float]:
    out: dict[int, float] = {}
    for row in rows:
        if row.role == "agent" and row.round is not None and row.cost_usd is not None:
            out[row.round] = out.get(row.round, 0.0) + row.cost_usd
    return out


async def trajectory(store: Store, run_id: str) -> dict[str, Any]:
    """The ATIF document of ``run_id``'s agent phase."""
    run = await store.runs.require_run(run_id)
    prov = Provenance.read(run.extra)
    rounds = await store.agent.agent_rounds(run_id)
    costs = _round_costs(await store.ledger.ledger_rows(run_id))
    out = _Steps(run.model)
    out.add("user", _instruction(run), run.started_at)
    totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0, "priced": False}
    for rnd in rounds:
        events = await store.agent.agent_events(run_id, round_no=rnd.round, limit=1_000_000)
        cost = costs.get(rnd.round, rnd.client_cost_usd)
        _round_steps(out, rnd, events, cost)
        totals["prompt"] += rnd.input_tokens + rnd.cache_read_tokens + rnd.cache_write_tokens
        totals["completion"] += rnd.output_tokens
        totals["cached"] += rnd.cache_read_tokens
        if cost is not None:
            totals["cost"] += cost
            totals["priced"] = True
    if not rounds:
        out.add("agent", f"built-in agent {run.agent}: no model transcript (srb ran it "
                         "without a model; see the run's log)", run.finished_at)
    agent: dict[str, Any] = {"name": prov.client if prov else run.agent.split(":", 1)[0],
                             "version": prov.client_version if prov else "unknown"}
    if run.model:
        agent["model_name"] = run.model
    final: dict[str, Any] = {"total_prompt_tokens": totals["prompt"],
                             "total_completion_tokens": totals["completion"],
                             "total_cached_tokens": totals["cached"],
                             "total_steps": len(out.steps)}
    if totals["priced"]:
        final["total_cost_usd"] = round(float(totals["cost"]), 6)
    return {"schema_version": SCHEMA_VERSION, "session_id": run.id, "agent": agent,
            "steps": out.steps, "final_metrics": final,
            "extra": {"srb": {"run_id": run.id, "task": run.task_id, "agent": run.agent,
                              "effort": run.effort, "score": run.score, "valid": run.valid,
                              "provenance": prov.full_json() if prov else None}}}
