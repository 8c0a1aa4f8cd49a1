"""Parse and check ``tests/evaluation.toml``: scoring policy, stages and audit gates.

Known stage keys are read into :class:`StageSpec` fields; every other key of a
stage table is a runner option, except that a near-miss of a known key or of a
documented option (``timout_sec``, ``promt``) is reported as a typo.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from srb_tui.grader.manifests.suite import check_schema_and_task
from srb_tui.schema.models import (
    SCHEMA_EVALUATION,
    STAGE_NAMES,
    Contradiction,
    Evaluation,
    Gate,
    StageSpec,
)
from srb_tui.schema.reader import (
    Source,
    Table,
    check_unique_ids,
    fmt_number,
    freeze,
    frozen_mapping,
    is_inside,
)
from srb_tui.schema.scoring_policy import ScoringPolicy
from srb_tui.schema.suggest import did_you_mean, suggest

TOP_KEYS = ("schema", "task", "title", "results_dir", "metadata", "scoring", "stages")
SCORING_KEYS = (
    "max_score",
    "behavioural_points",
    "verification_points",
    "verification_models",
    "points_per_survived_model",
)
STAGE_KEYS = ("enabled", "runner", "result", "timeout_sec", "metadata", "gate")
GATE_KEYS = ("id", "title", "question", "required", "metadata")
# srb's own gate evidence lives in the gate's metadata (the published reader carries a
# metadata table through and refuses any other key it does not read)
CONTRADICTION_KEYS = ("says", "files", "pattern", "scan")

#: Runner options documented by the published schema, with the type each must have.
OPTION_STRINGS = (
    "image",
    "context",
    "prompt",
    "scan",
    "model",
    "driver",
    "api_key_env",
    "suite",
    "probe",
)
OPTION_POSITIVE_INTS = ("samples", "max_turns")
OPTION_TABLES = ("adjudicator", "driver_options")
KNOWN_OPTIONS = (
    *OPTION_STRINGS,
    *OPTION_POSITIVE_INTS,
    *OPTION_TABLES,
    "allowed_commands",
    "run_timeout_sec",
    "reference",
)
#: Options naming a path relative to ``tests/``.
PATH_OPTIONS = ("prompt", "scan", "suite", "probe", "context")


@dataclass(frozen=True)
class ParsedEvaluation:
    """An evaluation plus what the loader's cross-checks may trust.

    ``scoring_known`` is false when a scoring value was missing or malformed (and
    a default stands in for it); ``budget_known`` likewise for a stage's
    ``enabled`` or ``timeout_sec`` (or a missing stage).  Cross-checks built on a
    stand-in value would only repeat the first problem in other words.
    """

    evaluation: Evaluation
    scoring_known: bool
    budget_known: bool


def parse_evaluation(source: Source, data: Mapping[str, object], task_id: str) -> ParsedEvaluation:
    """Read ``tests/evaluation.toml``; problems go to ``source``."""
    top = Table(source, "", data)
    top.check_keys(TOP_KEYS)
    schema, task = check_schema_and_task(top, SCHEMA_EVALUATION, task_id)
    title = top.optional_string("title")
    results_dir = top.string("results_dir", "/logs/verifier")
    metadata = top.mapping("metadata")
    scoring, scoring_known = _scoring(top)

    budget_known = True
    stages: dict[str, StageSpec] = {}
    stages_table = top.table("stages", required=True)
    if stages_table is not None:
        for name in stages_table.data:
            if name not in STAGE_NAMES:
                stages_table.report(
                    name,
                    f"unknown stage `{name}`; stages are audit, behavioural and verification"
                    f"{did_you_mean(name, STAGE_NAMES)}",
                )
        for name in STAGE_NAMES:
            table = stages_table.table(name)
            if table is not None:
                stages[name], known = _stage(name, table)
                budget_known = budget_known and known
            elif stages_table.has(name) or name != "verification":
                budget_known = False
                if not stages_table.has(name):
                    stages_table.report(name, f"required stage [stages.{name}] is missing")
    else:
        budget_known = False

    audit = stages.get("audit") or StageSpec("audit", runner="audit", result="audit.json")
    if "audit" in stages and not audit.required_gates:
        source.report(
            "stages.audit.gate",
            "no required gate (at least one [[stages.audit.gate]] with required = true is needed)",
        )
    behavioural = stages.get("behavioural") or StageSpec(
        "behavioural", runner="behavioural", result="behavioural.json"
    )
    evaluation = Evaluation(
        schema=schema,
        task=task,
        title=title,
        results_dir=results_dir,
        scoring=scoring,
        metadata=metadata,
        audit=audit,
        behavioural=behavioural,
        verification=stages.get("verification"),
    )
    return ParsedEvaluation(evaluation, scoring_known, budget_known)


def _scoring(top: Table) -> tuple[ScoringPolicy, bool]:
    table = top.table("scoring", required=True)
    if table is None:
        return ScoringPolicy(), False
    table.check_keys(SCORING_KEYS)
    before = len(top.source.problems)
    max_score = table.number("max_score", 100.0, required=True, positive=True)
    behavioural = table.number("behavioural_points", 40.0, required=True, positive=True)
    verification = table.number("verification_points", 60.0, required=True, minimum=0)
    per_model = table.number("points_per_survived_model", 10.0, required=True, minimum=0)
    models_value = table.number("verification_models", 6.0, required=True, minimum=0)
    models = 6
    whole = models_value.is_integer()
    if whole:
        models = int(models_value)
    else:
        table.report(
            "verification_models", f"must be a whole number (found {fmt_number(models_value)})"
        )
    policy = ScoringPolicy(
        max_score=max_score,
        behavioural_points=behavioural,
        verification_points=verification,
        verification_models=models,
        points_per_survived_model=per_model,
    )
    # Arithmetic is checked only between values that were all read correctly.
    known = len(top.source.problems) == before
    if known:
        for key, message in policy.arithmetic_problems():
            table.report(key, message)
    return policy, known


def _is_option(name: str) -> bool:
    """An unknown stage key is an option unless it looks like a typo."""
    return suggest(name, (*STAGE_KEYS, *KNOWN_OPTIONS)) is None


def _stage(name: str, table: Table) -> tuple[StageSpec, bool]:
    """The stage, and whether its ``enabled`` and ``timeout_sec`` were read as written."""
    known_keys = (*STAGE_KEYS, *KNOWN_OPTIONS)
    options = table.check_keys(known_keys, what="stage key", allow=_is_option)
    typos = {suggest(k, known_keys) for k in table.data if k not in known_keys}
    before = len(table.source.problems)
    enabled = table.boolean("enabled", True)
    timeout = table.number("timeout_sec", 3600.0, positive=True)
    budget_known = len(table.source.problems) == before and not typos & {"enabled", "timeout_sec"}
    runner = table.string("runner", name)
    if table.has("runner") and isinstance(table.raw("runner"), str) and runner not in STAGE_NAMES:
        table.report(
            "runner",
            f"unknown runner `{runner}`; srb runs audit, behavioural and "
            f"verification{did_you_mean(runner, STAGE_NAMES)}",
        )
    result = table.string("result", f"{name}.json")
    metadata = table.mapping("metadata")

    values: dict[str, object] = {}
    for key in OPTION_STRINGS:
        value = table.optional_string(key)
        if value is not None:
            values[key] = value
            if key in PATH_OPTIONS:
                _check_relative(table, key, value)
    for key in OPTION_POSITIVE_INTS:
        if table.has(key):
            values[key] = table.integer(key, 1, minimum=1)
    for key in OPTION_TABLES:
        if table.has(key):
            values[key] = table.mapping(key)
    if table.has("allowed_commands"):
        values["allowed_commands"] = table.string_list("allowed_commands")
    if table.has("run_timeout_sec"):
        values["run_timeout_sec"] = table.number("run_timeout_sec", 600.0, positive=True)
    if table.has("reference"):
        values["reference"] = table.boolean("reference", False)
    for key in options:
        values[key] = freeze(table.data[key])

    gates: tuple[Gate, ...] = ()
    if table.has("gate"):
        gate_tables = table.tables("gate")
        if name != "audit":
            table.report("gate", "gates belong to [stages.audit]")
        else:
            gates = _gates(gate_tables)

    spec = StageSpec(
        name=name,
        enabled=enabled,
        runner=runner,
        result=result,
        timeout_sec=timeout,
        options=frozen_mapping(values),
        metadata=metadata,
        gates=gates,
    )
    return spec, budget_known


def _check_relative(table: Table, key: str, value: str) -> None:
    if not is_inside(value):
        table.report(key, f"`{value}` must be a relative path inside tests/")


def _gates(tables: list[Table]) -> tuple[Gate, ...]:
    gates: list[Gate] = []
    for table in tables:
        table.check_keys(GATE_KEYS)
        ident = table.string("id", required=True)
        title = table.string("title", ident)
        question = table.string("question", required=True)
        required = table.boolean("required", True)
        extra = table.table("metadata")
        found = extra.tables("contradicted_by") if extra is not None else []
        contradictions = tuple(c for c in (_contradiction(t) for t in found) if c)
        gates.append(
            Gate(
                id=ident,
                title=title,
                question=question,
                required=required,
                contradicted_by=contradictions,
            )
        )
    check_unique_ids(tables, [g.id for g in gates], "gate")
    return tuple(gates)


def _contradiction(table: Table) -> Contradiction | None:
    """One ``contradicted_by`` entry: what it says, and files/pattern or scan checks."""
    table.check_keys(CONTRADICTION_KEYS)
    says = table.string("says", required=True)
    files = table.string_list("files")
    pattern = table.optional_string("pattern")
    scan = table.string_list("scan")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as err:
            table.report("pattern", f"not a regular expression: {err}")
            return None
    if not files and not scan:
        table.report("files", "name the files (globs) or the scan checks that contradict a pass")
        return None
    if pattern is not None and not files:
        table.report("pattern", "a pattern needs `files` to search")
        return None
    return Contradiction(says=says, files=files, pattern=pattern, scan=scan)
