"""Read a published-harness job directory into plain records for ``Store.imports.import_runs``.

What the published harness leaves per trial (Einsia/SWE-Refactor-Bench,
``infra/swerefactor/harbor.py`` / ``scoring.py`` / ``telemetry.py``): ``score.json`` (schema
``swerefactor.score/1``: ``task``, ``score``, ``max_score``, ``valid``, ``audit_gate``
pass|fail|not-run, ``behavioural.modules[]`` with ``checks.{passed,failed,errored,skipped}``
and ``scored_weight`` (a count of checks), ``verification.{models_total,models_survived,
breaks}``, ``stages_run``, ``blocked_by``, ``unscored.behavioural`` — Stage II measured but
not credited after a Stage I fail — and ``metadata.verification.rounds[]`` with
``adversary``/``outcome``/``elapsed_sec``/``usage.model``), ``reward.json`` (numbers only),
the stage results ``audit.json``/``behavioural.json``/``verification.json`` beside them
(``audit.json``'s ``checks[]``: one per gate, ``required``, ``verdict``, and
``metadata.votes.{pass,fail}`` — the tally of the review samples, which Stage I's
consistency table counts — with ``samples_run``/``samples_usable``/``tie_broken_to_pass``),
``telemetry.json`` (grading models' time and tokens), and Harbor's trial ``config.json``
(``agent.name``, ``agent.model_name``, ``agent.kwargs.reasoning_effort``; ``srb.agent``, the
run's agent spec, when srb exported it) and ``result.json``
(``agent_result.cost_usd``) in the trial folder. A trial ``srb export --results`` wrote also
has srb's ``provenance.json`` (kept on the imported run) and the agent's ATIF trajectory at
``agent/trajectory.json``, whose ``final_metrics.total_cost_usd`` is the agent's cost when
``result.json`` names none.

Every ``score.json`` under the directory is one trial (the walk, in-process or by reader
processes, is :mod:`srb_tui.reports.import_job`). Every problem in every file is reported
(file and key); with any problem nothing is imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srb_tui.grader import contract
from srb_tui.store.imports import PublishedFile

SCORE_SCHEMA = contract.SCORE_SCHEMA
STAGE_FILES = ("audit.json", "behavioural.json", "verification.json")
_GATES = {"pass": "pass", "fail": "fail", "not-run": "error"}


@dataclass
class ImportedTrial:
    """One trial as srb will store it (``envelope`` has srb's score-event shape)."""

    source_dir: str
    task: str
    agent: str
    model: str | None
    effort: str | None
    score: float | None
    max_score: float
    valid: bool
    blocked_by: str | None
    harness_error: str | None
    envelope: dict[str, Any]
    modules: list[dict[str, Any]]
    rounds: list[dict[str, Any]]
    # stage -> (its status, the file's JSON text as published: stored as read, not re-encoded
    # (None for a long one read by a reader process: the file is linked or copied instead),
    # the file it was read from: linked into the store's folder rather than written again)
    stage_results: dict[str, tuple[str, str | None, PublishedFile]] = field(
        default_factory=dict)
    gates: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None
    telemetry: str | None = None  # telemetry.json's text
    category: str | None = None
    # srb's provenance record when the trial was exported by ``srb export --results``
    # (``provenance.json`` in the trial folder), stored on the imported run as it was
    provenance: dict[str, Any] | None = None


class _Reader:
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems

    def load(self, path: Path, required: bool) -> Any:
        return self.load_text(path, required)[1]

    def load_text(self, path: Path, required: bool) -> tuple[str | None, Any]:
        """The file's text and its JSON (both None when missing, unreadable or not JSON)."""
        text, loaded, _ = self.load_file(path, required)
        return text, loaded

    def load_file(self, path: Path, required: bool
                  ) -> tuple[str | None, Any, PublishedFile | None]:
        """:meth:`load_text` and the identity of the file read (its open descriptor's)."""
        try:
            with open(path, encoding="utf-8") as f:
                published = PublishedFile.of(str(path), os.fstat(f.fileno()))
                text = f.read()
        except FileNotFoundError:
            if required:
                self.problems.append(f"{path}: missing")
            return None, None, None
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(f"{path}: cannot read ({exc})")
            return None, None, None
        try:
            return text, json.loads(text, parse_constant=_no_constant), published
        except ValueError as exc:
            self.problems.append(f"{path}: not JSON ({exc})")
            return None, None, None

    def need(self, path: Path, doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...],
             what: str, optional: bool = False) -> Any:
        value: Any = doc
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            if not optional:
                self.problems.append(f"{path}: key {key!r} is missing ({what})")
            return None
        if isinstance(value, bool) and kind is not bool and bool not in (
            kind if isinstance(kind, tuple) else (kind,)
        ):
            self.problems.append(f"{path}: key {key!r}: expected {what}, got a boolean")
            return None
        if not isinstance(value, kind):
            self.problems.append(
                f"{path}: key {key!r}: expected {what}, got {type(value).__name__}"
            )
            return None
        return value


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON (SQLite's json functions refuse them): a problem."""
    raise ValueError(f"{name} is not a JSON value")


def _blocked(raw: str) -> str | None:
    for stage in contract.STAGES:
        if raw.startswith(stage):
            return stage
    return raw or None


def _modules(r: _Reader, path: Path, mods: Any, key: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if mods is None:
        return out
    if not isinstance(mods, list):
        r.problems.append(f"{path}: key {key!r}: expected a list of modules")
        return out
    for i, m in enumerate(mods):
        where = f"{key}[{i}]"
        if not isinstance(m, Mapping):
            r.problems.append(f"{path}: key {where!r}: expected a module object")
            continue
        mid = r.need(path, m, "id", str, "a module id")
        raw_checks = m.get("checks")
        checks: Mapping[str, Any] = raw_checks if isinstance(raw_checks, Mapping) else {}
        passed = checks.get("passed", 0)
        if not isinstance(passed, int) or isinstance(passed, bool):
            r.problems.append(f"{path}: key {where + '.checks.passed'!r}: expected an integer")
            continue
        scored = m.get("scored_weight")
        if scored is None:
            scored = sum(int(checks.get(k, 0) or 0)
                         for k in ("passed", "failed", "errored", "skipped"))
        if not isinstance(scored, int | float) or isinstance(scored, bool):
            r.problems.append(f"{path}: key {where + '.scored_weight'!r}: expected a number")
            continue
        weight = m.get("weight", 1.0)
        if not isinstance(weight, int | float) or isinstance(weight, bool):
            r.problems.append(f"{path}: key {where + '.weight'!r}: expected a number")
            continue
        if mid is None:
            continue
        out.append({
            "id": mid, "weight": float(weight), "status": str(m.get("status") or "ok"),
            "rate": float(m.get("rate") or 0.0), "passed": passed, "scored": int(scored),
            "complete": bool(m.get("complete", passed == int(scored) and scored > 0)),
        })
    return out


_CHECK_VERDICTS = {"pass": "pass", "fail": "fail", "error": "error"}


def _count(r: _Reader, path: Path, value: Any, key: str) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        r.problems.append(f"{path}: key {key!r}: expected a count (a whole number >= 0)")
        return None
    return value


def _gates(r: _Reader, path: Path, audit: Any) -> list[dict[str, Any]]:
    """Stage I's gate outcomes from the published ``audit.json``: one per check with its
    vote tally (``metadata.votes.{pass,fail}``), in ``Store.grading.record_gate_outcomes``'s shape.
    A review that returned nothing (``samples_run - samples_usable``) is an error vote; a
    check without a tally (an older harness) is left out rather than counted unanimous."""
    if audit is None:
        return []
    if not isinstance(audit, Mapping):
        r.problems.append(f"{path}: expected a JSON object")
        return []
    checks = audit.get("checks")
    if checks is None:
        return []
    if not isinstance(checks, list):
        r.problems.append(f"{path}: key 'checks': expected a list of gate checks")
        return []
    out: list[dict[str, Any]] = []
    for i, check in enumerate(checks):
        where = f"checks[{i}]"
        if not isinstance(check, Mapping):
            r.problems.append(f"{path}: key {where!r}: expected a gate check object")
            continue
        gate_id = check.get("id")
        verdict = check.get("verdict")
        if not isinstance(gate_id, str) or not gate_id:
            r.problems.append(f"{path}: key {where + '.id'!r}: expected the gate id")
            continue
        if verdict == "skip":
            continue
        if verdict not in _CHECK_VERDICTS:
            r.problems.append(f"{path}: key {where + '.verdict'!r}: {verdict!r} is not pass, "
                              "fail or error")
            continue
        raw_meta = check.get("metadata")
        meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
        votes = meta.get("votes")
        if votes is None:
            continue
        if not isinstance(votes, Mapping):
            r.problems.append(f"{path}: key {where + '.metadata.votes'!r}: expected "
                              "{pass, fail} counts")
            continue
        passes = _count(r, path, votes.get("pass", 0), where + ".metadata.votes.pass")
        fails = _count(r, path, votes.get("fail", 0), where + ".metadata.votes.fail")
        run = meta.get("samples_run", 0)
        usable = meta.get("samples_usable", run)
        lost = (run - usable if isinstance(run, int) and isinstance(usable, int)
                and not isinstance(run, bool) and run >= usable else 0)
        if passes is None or fails is None:
            continue
        title = meta.get("title")
        out.append({
            "gate_id": gate_id, "verdict": _CHECK_VERDICTS[verdict],
            "title": title if isinstance(title, str) and title else None,
            "required": bool(check.get("required", False)),
            "votes_pass": passes, "votes_fail": fails, "votes_error": lost,
            "tie": bool(meta.get("tie_broken_to_pass")) or (passes == fails and passes > 0),
            "extra": {"imported": True},
        })
    return out


def _trial_dir(score_dir: Path, root: Path) -> Path:
    """The nearest folder (up to the job root) holding Harbor's config.json or result.json."""
    here = score_dir
    while True:
        if (here / "config.json").is_file() or (here / "result.json").is_file():
            return here
        if here == root or here.parent == here:
            return score_dir
        here = here.parent


def read_trial(score_path: Path, root: Path, problems: list[str]) -> ImportedTrial | None:
    r = _Reader(problems)
    before = len(problems)
    doc = r.load(score_path, required=True)
    if doc is None:
        return None
    if not isinstance(doc, Mapping):
        problems.append(f"{score_path}: expected a JSON object")
        return None
    schema = doc.get("schema")
    if schema is not None and schema != SCORE_SCHEMA:
        problems.append(f"{score_path}: key 'schema': {schema!r} is not {SCORE_SCHEMA}")
    task = r.need(score_path, doc, "task", str, "the task id")
    valid = r.need(score_path, doc, "valid", bool, "a boolean")
    score = r.need(score_path, doc, "score", (int, float), "a number")
    max_score = r.need(score_path, doc, "max_score", (int, float), "a number", optional=True)
    gate_raw = r.need(score_path, doc, "audit_gate", str, "pass, fail or not-run")
    if gate_raw is not None and gate_raw not in _GATES:
        problems.append(f"{score_path}: key 'audit_gate': {gate_raw!r} is not pass, fail or "
                        "not-run")
    stages_run = doc.get("stages_run") or []
    if not isinstance(stages_run, list):
        problems.append(f"{score_path}: key 'stages_run': expected a list")
        stages_run = []
    modules = _modules(r, score_path, (doc.get("behavioural") or {}).get("modules"),
                       "behavioural.modules")
    if not modules:
        unscored = doc.get("unscored") or doc.get("uncredited") or {}
        seen = unscored.get("behavioural") if isinstance(unscored, Mapping) else None
        if isinstance(seen, Mapping):
            modules = _modules(r, score_path, seen.get("modules"), "unscored.behavioural.modules")
    raw_verification = doc.get("verification")
    verification: Mapping[str, Any] = (
        raw_verification if isinstance(raw_verification, Mapping) else {}
    )
    rounds_raw = ((doc.get("metadata") or {}).get("verification") or {}).get("rounds") or []
    rounds: list[dict[str, Any]] = []
    for i, entry in enumerate(rounds_raw if isinstance(rounds_raw, list) else []):
        if not isinstance(entry, Mapping):
            continue
        outcome = str(entry.get("outcome") or "error")
        if outcome not in ("broken", "survived", "error"):
            problems.append(f"{score_path}: key 'metadata.verification.rounds[{i}].outcome': "
                            f"{outcome!r} is not broken, survived or error")
            continue
        elapsed = entry.get("elapsed_sec")
        raw_usage = entry.get("usage")
        usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
        effort = next((entry.get(k) or usage.get(k) for k in ("effort", "reasoning_effort")
                       if entry.get(k) or usage.get(k)), None)
        rounds.append({
            "adversary": str(entry.get("adversary") or entry.get("id") or f"a{i + 1:02d}"),
            "model": str(entry.get("model") or usage.get("model") or "") or None,
            "effort": str(effort) if effort else None,
            "status": outcome,
            "duration_sec": float(elapsed) if isinstance(elapsed, int | float) else None,
        })
    reward = r.load(score_path.parent / "reward.json", required=False)
    if reward is not None:
        if not isinstance(reward, Mapping):
            problems.append(f"{score_path.parent / 'reward.json'}: expected a JSON object")
        else:
            for key, value in reward.items():
                if not isinstance(value, int | float) or isinstance(value, bool):
                    problems.append(f"{score_path.parent / 'reward.json'}: key {key!r}: "
                                    "expected a number")
            if (isinstance(reward.get("score"), int | float) and isinstance(score, int | float)
                    and abs(float(reward["score"]) - float(score)) > 1e-6):
                problems.append(f"{score_path.parent / 'reward.json'}: key 'score': "
                                f"{reward['score']} disagrees with score.json's {score}")
    stage_results: dict[str, tuple[str, str | None, PublishedFile]] = {}
    gates: list[dict[str, Any]] = []
    for name in STAGE_FILES:
        text, loaded, published = r.load_file(score_path.parent / name, required=False)
        if text is None or published is None:
            continue
        status = loaded.get("status") if isinstance(loaded, Mapping) else None
        stage_results[name.removesuffix(".json")] = (str(status or "ok"), text, published)
        if name == "audit.json":
            gates = _gates(r, score_path.parent / name, loaded)
        del loaded  # only the text is kept: a trial's transcripts are parsed once, dropped
    telemetry = r.load_text(score_path.parent / "telemetry.json", required=False)[0]
    trial = _trial_dir(score_path.parent, root)
    config = r.load(trial / "config.json", required=False)
    result = r.load(trial / "result.json", required=False)
    agent_cfg = (config or {}).get("agent") if isinstance(config, Mapping) else None
    agent_cfg = agent_cfg if isinstance(agent_cfg, Mapping) else {}
    # Harbor's config.json names the model; only without one is the folder name a guess.
    model = agent_cfg.get("model_name") or (
        score_path.parent.parent.name
        if config is None and score_path.parent.parent != root else None)
    raw_kwargs = agent_cfg.get("kwargs")
    kwargs: Mapping[str, Any] = raw_kwargs if isinstance(raw_kwargs, Mapping) else {}
    effort = kwargs.get("reasoning_effort") or kwargs.get("effort")
    cost = None
    agent_result = (result or {}).get("agent_result") if isinstance(result, Mapping) else None
    if isinstance(agent_result, Mapping):
        value = agent_result.get("cost_usd")
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            problems.append(f"{trial / 'result.json'}: key 'agent_result.cost_usd': expected a "
                            "number")
        elif value is not None:
            cost = float(value)
    if cost is None:
        cost = _trajectory_cost(r, trial / "agent" / "trajectory.json")
    if len(problems) > before or task is None or valid is None or gate_raw not in _GATES:
        return None
    gate = _GATES[gate_raw]
    weighted = [m for m in modules if m["weight"] > 0]
    complete = all(m["complete"] for m in weighted) if weighted else None
    ran = "verification" in stages_run
    adversaries = {rd["adversary"]: rd["status"] for rd in rounds} if ran else {}
    envelope = {
        "score": score, "max_score": max_score or 100.0, "valid": valid, "audit_gate": gate,
        "behavioural": {"complete": complete, "modules": modules,
                        "points": (doc.get("behavioural") or {}).get("points", 0.0)},
        "verification": {
            "ran": ran, "adversaries": adversaries,
            "models_total": int(verification.get("models_total") or 6),
            "models_survived": int(verification.get("models_survived") or 0),
            "breaks": verification.get("breaks") or [],
        },
        "blocked_by": _blocked(str(doc.get("blocked_by") or "")),
        "harness_error": str(doc.get("harness_error") or "") or None,
        "notes": [f"imported from {score_path}"],
    }
    # a trial srb exported names the run's own agent spec: one configuration per spec
    srb_cfg = (config or {}).get("srb") if isinstance(config, Mapping) else None
    spec = srb_cfg.get("agent") if isinstance(srb_cfg, Mapping) else None
    name = spec if isinstance(spec, str) and spec else agent_cfg.get("name") or "harbor"
    return ImportedTrial(
        source_dir=str(score_path.parent.resolve()), task=task,
        agent=f"imported:{name}",
        model=str(model) if model else None, effort=str(effort) if effort else None,
        score=float(score) if score is not None else None,
        max_score=float(max_score or 100.0), valid=valid,
        blocked_by=envelope["blocked_by"], harness_error=envelope["harness_error"],
        envelope=envelope, modules=modules, rounds=rounds if ran else [],
        stage_results=stage_results, gates=gates, cost_usd=cost, telemetry=telemetry,
        provenance=_provenance(r, trial / "provenance.json"),
    )


def _trajectory_cost(r: _Reader, path: Path) -> float | None:
    """The agent's cost from an ATIF trajectory beside the trial (Harbor's
    ``agent/trajectory.json``: ``final_metrics.total_cost_usd``), when result.json has none."""
    found = r.load(path, required=False)
    if found is None:
        return None
    metrics = found.get("final_metrics") if isinstance(found, Mapping) else None
    value = metrics.get("total_cost_usd") if isinstance(metrics, Mapping) else None
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        r.problems.append(f"{path}: key 'final_metrics.total_cost_usd': expected a number")
        return None
    return float(value)


def _provenance(r: _Reader, path: Path) -> dict[str, Any] | None:
    """srb's provenance record of an exported run (None when the trial has none)."""
    found = r.load(path, required=False)
    if found is None:
        return None
    if not isinstance(found, Mapping) or not isinstance(found.get("grader_fingerprint"), str):
        r.problems.append(f"{path}: expected srb's provenance record (a JSON object with "
                          "'grader_fingerprint')")
        return None
    return dict(found)
