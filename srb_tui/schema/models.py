"""Immutable typed models of a task directory in the published schema.

Everything here is a frozen dataclass holding tuples and read-only mappings, so a
loaded task can be shared between the service, the store and the UI without
anyone changing it under the others' feet.  Parsing lives in the ``*_toml``
modules; these classes only hold the result and a few convenience properties the
console shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from srb_tui.grader import contract

# suite.toml, scan.toml and probe.toml: held (and read) by the grader's stdlib-only
# manifests, so the host and a stage container share one shape and one set of rules.
from srb_tui.grader.manifests.probe import Adversary as Adversary
from srb_tui.grader.manifests.probe import Probe as Probe
from srb_tui.grader.manifests.probe import Scope as Scope
from srb_tui.grader.manifests.suite import Module as Module
from srb_tui.grader.manifests.suite import Scan as Scan
from srb_tui.grader.manifests.suite import Suite as Suite
from srb_tui.schema.scoring_policy import ScoringPolicy
from srb_tui.schema.stage_names import STAGE_NAMES as STAGE_NAMES  # re-exported
from srb_tui.schema.state_a import StateASource

_EMPTY: Mapping[str, object] = MappingProxyType({})
_EMPTY_ENV: Mapping[str, str] = MappingProxyType({})


def _empty() -> Mapping[str, object]:
    return _EMPTY


def _empty_env() -> Mapping[str, str]:
    return _EMPTY_ENV


SCHEMA_EVALUATION = contract.EVALUATION_SCHEMA
SCHEMA_SUITE = contract.SUITE_SCHEMA
SCHEMA_PROBE = contract.PROBE_SCHEMA
SCHEMA_SCAN = contract.SCAN_SCHEMA

DEFAULT_FAULT_EXIT_CODES = contract.DEFAULT_FAULT_EXIT_CODES


def _text(mapping: Mapping[str, object], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- task.toml


@dataclass(frozen=True)
class Artifact:
    """One ``[[artifacts]]`` entry: a container path collected after the agent phase."""

    source: str
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentSpec:
    """``[agent]``: the harness, its wall-clock budget, network mode and user, and the token
    a real client ends its final message with to say it is done (``None``: the official
    default). Every ``[agent]`` key srb reads is a field here, read by the schema alone."""

    harness: str
    timeout_sec: float
    network_mode: str
    user: str | None = None
    completion_token: str | None = None


@dataclass(frozen=True)
class TaskManifest:
    """What ``task.toml`` says about a task."""

    name: str
    description: str
    agent: AgentSpec
    artifacts: tuple[Artifact, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=_empty)
    schema_version: str | None = None
    authors: tuple[object, ...] = ()
    keywords: tuple[str, ...] = ()
    environment: Mapping[str, object] = field(default_factory=_empty)
    verifier: Mapping[str, object] = field(default_factory=_empty)
    verifier_timeout_sec: float | None = None
    solution: Mapping[str, object] = field(default_factory=_empty)

    @property
    def category(self) -> str | None:
        return _text(self.metadata, "category")

    @property
    def state_a_description(self) -> str | None:
        return _text(self.metadata, "state_a")

    @property
    def state_b_description(self) -> str | None:
        return _text(self.metadata, "state_b")

    @property
    def budget_sec(self) -> float:
        """The agent phase's wall-clock budget."""
        return self.agent.timeout_sec


# --------------------------------------------------------------------- evaluation.toml


@dataclass(frozen=True)
class Contradiction:
    """One ``[[stages.audit.gate.metadata.contradicted_by]]``: deterministic evidence that overrules
    a pass on its gate (issue 37). A submission file matching one of ``files`` (globs on the
    relative path or the base name) is evidence, or, with ``pattern``, a line of such a file
    matching that regular expression; ``scan`` names audit-scan checks (globs on the id
    after ``scan/``) whose fail is evidence."""

    says: str
    files: tuple[str, ...] = ()
    pattern: str | None = None
    scan: tuple[str, ...] = ()


@dataclass(frozen=True)
class Gate:
    """One ``[[stages.audit.gate]]``: a question the Stage I reviewer must answer."""

    id: str
    title: str
    question: str
    required: bool = True
    contradicted_by: tuple[Contradiction, ...] = ()


@dataclass(frozen=True)
class StageSpec:
    """One ``[stages.<name>]`` table.

    ``options`` holds every key that is not a known stage key (``image``,
    ``prompt``, ``suite``, ``probe``, ``model``, ``samples``, ``adjudicator`` …);
    they go to the stage's runner.
    """

    name: str
    enabled: bool = True
    runner: str = ""
    result: str = ""
    timeout_sec: float = 3600.0
    options: Mapping[str, object] = field(default_factory=_empty)
    metadata: Mapping[str, object] = field(default_factory=_empty)
    gates: tuple[Gate, ...] = ()

    def option_str(self, key: str) -> str | None:
        return _text(self.options, key)

    @property
    def required_gates(self) -> tuple[Gate, ...]:
        return tuple(g for g in self.gates if g.required)


@dataclass(frozen=True)
class Evaluation:
    """``tests/evaluation.toml``: the stages, their budgets, the gates and the scoring."""

    schema: str
    task: str
    audit: StageSpec
    behavioural: StageSpec
    verification: StageSpec | None = None
    title: str | None = None
    results_dir: str = "/logs/verifier"
    scoring: ScoringPolicy = field(default_factory=ScoringPolicy)
    metadata: Mapping[str, object] = field(default_factory=_empty)

    @property
    def stages(self) -> tuple[StageSpec, ...]:
        present = (self.audit, self.behavioural, self.verification)
        return tuple(s for s in present if s is not None)

    @property
    def enabled_stages(self) -> tuple[StageSpec, ...]:
        return tuple(s for s in self.stages if s.enabled)

    @property
    def gates(self) -> tuple[Gate, ...]:
        return self.audit.gates

    @property
    def stage_budget_sec(self) -> float:
        """Sum of the enabled stages' ``timeout_sec``."""
        return sum(s.timeout_sec for s in self.enabled_stages)


# -------------------------------------------------------------------------------- task


@dataclass(frozen=True)
class Task:
    """A whole task directory, as far as it could be read.

    The parts that could not be read are ``None``; :class:`~srb_tui.schema.loader.TaskLoad`
    says whether the task is fit to run.
    """

    dir: Path
    id: str
    manifest: TaskManifest
    evaluation: Evaluation | None = None
    suite: Suite | None = None
    probe: Probe | None = None
    scan: Scan | None = None
    instruction: str | None = None
    state_a: StateASource | None = None

    @property
    def title(self) -> str:
        if self.evaluation is not None and self.evaluation.title:
            return self.evaluation.title
        return self.manifest.name or self.id

    @property
    def category(self) -> str | None:
        found = self.manifest.category
        if found is None and self.evaluation is not None:
            found = _text(self.evaluation.metadata, "category")
        return found

    @property
    def state_a_description(self) -> str | None:
        found = self.manifest.state_a_description
        if found is None and self.evaluation is not None:
            found = _text(self.evaluation.metadata, "state_a")
        return found

    @property
    def state_b_description(self) -> str | None:
        found = self.manifest.state_b_description
        if found is None and self.evaluation is not None:
            found = _text(self.evaluation.metadata, "state_b")
        return found

    @property
    def budget_sec(self) -> float:
        """The agent phase's wall-clock budget (``[agent].timeout_sec``)."""
        return self.manifest.agent.timeout_sec

    @property
    def gate_count(self) -> int:
        return 0 if self.evaluation is None else len(self.evaluation.gates)

    @property
    def required_gate_count(self) -> int:
        return 0 if self.evaluation is None else len(self.evaluation.audit.required_gates)

    @property
    def module_count(self) -> int:
        return 0 if self.suite is None else len(self.suite.modules)

    @property
    def adversary_count(self) -> int:
        return 0 if self.probe is None else len(self.probe.adversaries)

    @property
    def gate_ids(self) -> tuple[str, ...]:
        return () if self.evaluation is None else tuple(g.id for g in self.evaluation.gates)

    @property
    def module_ids(self) -> tuple[str, ...]:
        return () if self.suite is None else tuple(m.id for m in self.suite.modules)

    @property
    def adversary_ids(self) -> tuple[str, ...]:
        return () if self.probe is None else tuple(a.id for a in self.probe.adversaries)
