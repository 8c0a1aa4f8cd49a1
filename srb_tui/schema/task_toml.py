"""Parse and check ``task.toml``: [task], [metadata], [[artifacts]], [agent] and Harbor's tables.

``[environment]``, ``[verifier]`` and ``[solution]`` belong to Harbor and are kept
raw (frozen); only ``[verifier].timeout_sec`` is read, for the budget check.
srb's own extension lives under ``[srb]``, whose only key is ``[srb.state_a]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from srb_tui.schema.models import AgentSpec, Artifact, TaskManifest
from srb_tui.schema.reader import EMPTY, Source, Table, frozen_mapping
from srb_tui.schema.state_a import StateASource, parse_state_a

TOP_KEYS = (
    "schema_version",
    "task",
    "metadata",
    "artifacts",
    "agent",
    "environment",
    "verifier",
    "solution",
    "srb",
)
TASK_KEYS = ("name", "description", "authors", "keywords")
ARTIFACT_KEYS = ("source", "exclude")
AGENT_KEYS = ("harness", "timeout_sec", "network_mode", "user", "completion_token")
SRB_KEYS = ("state_a",)
NETWORK_MODES = ("no-network",)


#: The task.toml schema versions srb reads (the published harness's).
SCHEMA_VERSIONS = ("1.4",)


def _check_schema_version(top: Table, version: str) -> None:
    """An unknown version is named: another major is an error, a newer minor a warning."""
    if version in SCHEMA_VERSIONS:
        return
    known = ", ".join(SCHEMA_VERSIONS)
    if version.split(".")[0] == SCHEMA_VERSIONS[-1].split(".")[0]:
        top.report("schema_version", f"schema version `{version}` is not one srb knows "
                   f"({known}); read as {SCHEMA_VERSIONS[-1]}", kind="warning")
    else:
        top.report("schema_version", f"unknown schema version `{version}`: srb reads {known}")


def parse_task_manifest(
    source: Source, data: Mapping[str, object]
) -> tuple[TaskManifest, StateASource | None]:
    """Read ``task.toml``; problems go to ``source``.  Always returns a manifest."""
    top = Table(source, "", data)
    top.check_keys(TOP_KEYS)

    schema_version = top.optional_string("schema_version")
    if schema_version is not None:
        _check_schema_version(top, schema_version)

    task = top.table("task", required=True) or Table(source, "task", EMPTY)
    task.check_keys(TASK_KEYS)
    name = task.string("name", required=True)
    description = task.string("description")
    keywords = task.string_list("keywords")
    authors_raw = task.raw("authors")
    authors: tuple[object, ...] = ()
    if authors_raw is not None:
        if isinstance(authors_raw, list):
            authors = tuple(frozen_mapping(a) if isinstance(a, Mapping) else a for a in authors_raw)
        else:
            task.report("authors", "expected an array")

    metadata = top.mapping("metadata")
    artifacts = _artifacts(top)
    agent = _agent(top)

    environment = top.mapping("environment")
    solution = top.mapping("solution")
    verifier_table = top.table("verifier", required=True)
    verifier: Mapping[str, object] = EMPTY
    verifier_timeout: float | None = None
    if verifier_table is not None:
        verifier = frozen_mapping(verifier_table.data)
        if verifier_table.has("timeout_sec"):
            verifier_timeout = verifier_table.number("timeout_sec", 0.0, positive=True) or None
        else:
            verifier_table.report("timeout_sec", "required key is missing")

    state_a = _srb(top)

    manifest = TaskManifest(
        name=name,
        description=description,
        agent=agent,
        artifacts=artifacts,
        metadata=metadata,
        schema_version=schema_version,
        authors=authors,
        keywords=keywords,
        environment=environment,
        verifier=verifier,
        verifier_timeout_sec=verifier_timeout,
        solution=solution,
    )
    return manifest, state_a


def _artifacts(top: Table) -> tuple[Artifact, ...]:
    tables = top.tables("artifacts")
    if not top.has("artifacts"):
        top.report(
            "artifacts",
            "at least one [[artifacts]] table is required "
            "(what to collect from the agent container)",
        )
    out: list[Artifact] = []
    for table in tables:
        table.check_keys(ARTIFACT_KEYS)
        source_path = table.string("source", required=True)
        if source_path and not source_path.startswith("/"):
            table.report("source", f"must be an absolute container path (found `{source_path}`)")
        excludes = table.string_list("exclude")
        for index, pattern in enumerate(excludes):
            if not pattern.strip():
                table.source.report(f"{table.key('exclude')}[{index}]", "empty exclude pattern")
        out.append(Artifact(source=source_path, exclude=excludes))
    return tuple(out)


def _agent(top: Table) -> AgentSpec:
    agent = top.table("agent", required=True)
    if agent is None:
        return AgentSpec(harness="", timeout_sec=0.0, network_mode="no-network")
    agent.check_keys(AGENT_KEYS)
    harness = agent.string("harness", required=True)
    timeout = agent.number("timeout_sec", 0.0, required=True, positive=True)
    network = agent.string("network_mode", "no-network", required=True)
    if (
        agent.has("network_mode")
        and isinstance(agent.raw("network_mode"), str)
        and network not in NETWORK_MODES
    ):
        agent.report(
            "network_mode",
            f"network_mode `{network}` is not `no-network`; srb locks the agent's "
            "egress to the model gateway regardless",
            kind="warning",
        )
    user = agent.optional_string("user")
    token = agent.optional_string("completion_token")
    if token is not None and not token.strip():
        agent.report("completion_token", "is empty; leave it out for the default token")
        token = None
    return AgentSpec(harness=harness, timeout_sec=timeout, network_mode=network, user=user,
                     completion_token=token)


def _srb(top: Table) -> StateASource | None:
    srb = top.table("srb")
    if srb is None:
        return None
    srb.check_keys(SRB_KEYS, what="[srb] key")
    raw = srb.raw("state_a")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        srb.table("state_a")  # reports the type
        return None
    state_a, problems = parse_state_a(raw, top.source.file)
    for problem in problems:
        line = problem.line if problem.line is not None else top.source.line(problem.key)
        top.source.problems.append(replace(problem, line=line))
    return state_a
