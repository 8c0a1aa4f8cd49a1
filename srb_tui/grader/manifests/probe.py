"""The one reader of ``tests/verification/probe.toml``: scope and the Stage III adversaries.

The keys, their types and defaults are written here once, standard library only: the host's
task loader reads a probe with these rules (its :class:`Reporter` adds the file and line),
and the grader, which is shipped into stage containers with this package, could read the
same file by the same rules. The default fault exit codes are the contract leaf's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..contract import DEFAULT_ADVERSARY_BUDGET_SEC, DEFAULT_FAULT_EXIT_CODES, PROBE_SCHEMA
from .suite import check_schema_and_task
from .table import EMPTY, Reporter, Table, check_unique_ids, describe, is_inside

PROBE_KEYS = ("schema", "task", "prompt", "candidate_command", "scope", "adversary", "metadata")
SCOPE_KEYS = (
    "allow",
    "deny",
    "deny_commands",
    "require_deterministic",
    "reruns",
    "network_allowed",
    "fault_exit_codes",
)
ADVERSARY_KEYS = ("id", "model", "driver", "budget_sec", "driver_options", "metadata")


def _empty() -> Mapping[str, object]:
    return EMPTY


@dataclass(frozen=True)
class Scope:
    """``[scope]`` of a probe: what a Stage III candidate may and may not test."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    deny_commands: tuple[str, ...] = ()
    require_deterministic: bool = True
    reruns: int = 3
    network_allowed: bool = False
    fault_exit_codes: tuple[int, ...] = DEFAULT_FAULT_EXIT_CODES


@dataclass(frozen=True)
class Adversary:
    """One ``[[adversary]]``: a Stage III round with its model and budget."""

    id: str
    model: str
    driver: str
    budget_sec: float = DEFAULT_ADVERSARY_BUDGET_SEC
    focus: str = ""
    driver_options: Mapping[str, object] = field(default_factory=_empty)
    metadata: Mapping[str, object] = field(default_factory=_empty)


@dataclass(frozen=True)
class Probe:
    """``tests/verification/probe.toml``: the Stage III adversaries and their scope."""

    schema: str
    task: str
    prompt: str
    candidate_command: tuple[str, ...]
    scope: Scope = field(default_factory=Scope)
    adversaries: tuple[Adversary, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=_empty)


def fault_codes_arg(codes: Iterable[int]) -> str:
    """The grader's ``--fault-codes`` text for a probe's ``fault_exit_codes``: its codes, or
    the default when it lists none (the published reader: an empty list means the default)."""
    chosen = sorted(set(codes)) or list(DEFAULT_FAULT_EXIT_CODES)
    return ",".join(str(code) for code in chosen)


def parse_probe(source: Reporter, data: Mapping[str, object],
                task_id: str | None = None) -> Probe:
    """Read ``probe.toml``; problems go to ``source``."""
    top = Table(source, "", data)
    top.check_keys(PROBE_KEYS)
    schema, task = check_schema_and_task(top, PROBE_SCHEMA, task_id)
    prompt = top.string("prompt", required=True)
    if top.has("prompt") and isinstance(top.raw("prompt"), str) and not is_inside(prompt):
        top.report("prompt", f"`{prompt}` must be a relative path inside the probe's folder")
    command = top.string_list("candidate_command", required=True)
    if isinstance(top.raw("candidate_command"), list) and not command:
        top.report("candidate_command", "must name a program (an empty argv cannot run)")
    scope_table = top.table("scope", required=True)
    scope = _scope(scope_table) if scope_table is not None else Scope()
    metadata = top.mapping("metadata")
    tables = top.tables("adversary", required=True)
    adversaries = [_adversary(t) for t in tables]
    if top.has("adversary") and isinstance(top.raw("adversary"), list) and not tables:
        top.report("adversary", "at least one [[adversary]] is required")
    check_unique_ids(tables, [a.id for a in adversaries], "adversary")
    return Probe(
        schema=schema,
        task=task,
        prompt=prompt,
        candidate_command=command,
        scope=scope,
        adversaries=tuple(adversaries),
        metadata=metadata,
    )


def _scope(table: Table) -> Scope:
    table.check_keys(SCOPE_KEYS)
    codes = DEFAULT_FAULT_EXIT_CODES
    if table.has("fault_exit_codes"):
        codes = _exit_codes(table)
    return Scope(
        allow=table.string_list("allow"),
        deny=table.string_list("deny"),
        deny_commands=table.string_list("deny_commands"),
        require_deterministic=table.boolean("require_deterministic", True),
        reruns=table.integer("reruns", 3, minimum=1),
        network_allowed=table.boolean("network_allowed", False),
        fault_exit_codes=codes,
    )


def _exit_codes(table: Table) -> tuple[int, ...]:
    raw = table.raw("fault_exit_codes")
    key = table.key("fault_exit_codes")
    if not isinstance(raw, list):
        table.report("fault_exit_codes", f"expected an array of integers, found {describe(raw)}")
        return DEFAULT_FAULT_EXIT_CODES
    codes: list[int] = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        if isinstance(item, bool) or not isinstance(item, int):
            extra = " (a boolean is not a number)" if isinstance(item, bool) else ""
            table.source.report(where, f"expected an integer, found {describe(item)}{extra}")
        elif not 1 <= item <= 255:
            table.source.report(
                where, f"exit code {item} is outside 1..255 (0 is a pass and cannot be a fault)"
            )
        elif item in codes:
            table.source.report(where, f"exit code {item} is listed twice")
        else:
            codes.append(item)
    return tuple(codes)


def _adversary(table: Table) -> Adversary:
    table.check_keys(ADVERSARY_KEYS)
    ident = table.string("id", required=True)
    model = table.string("model", required=True)
    driver = table.string("driver", required=True)
    budget = table.number("budget_sec", DEFAULT_ADVERSARY_BUDGET_SEC, positive=True)
    driver_options = table.mapping("driver_options")
    metadata_table = table.table("metadata")
    focus = ""
    metadata: Mapping[str, object] = EMPTY
    if metadata_table is not None:
        focus = metadata_table.string("focus")
        metadata = table.mapping("metadata")
    return Adversary(
        id=ident,
        model=model,
        driver=driver,
        budget_sec=budget,
        focus=focus,
        driver_options=driver_options,
        metadata=metadata,
    )
