"""The contract srb shares with the published grader and with itself: one home for each rule.

A leaf: standard library only and nothing imported at all, so the host (schema, service,
store, reports) and the grader inside a stage container (which carries only this package)
read the same names and numbers. A test (``tests/grader/test_contract_leaf.py``) fails when
one of these collections or names is written out anywhere else in ``srb_tui``.

The published harness's own values are the reference: ``suite.toml``'s module timeout is
900 s when neither the module nor ``default_timeout_sec`` says (the published reader's
default; srb's grader once read 3600 s while the host's validator read 900 s).
"""

from __future__ import annotations

# --------------------------------------------------------------------------- the ladder

STAGES: tuple[str, str, str] = ("audit", "behavioural", "verification")
"""The three stages in the order a run is graded (Stage I, II, III)."""

MODULE_STATUSES: tuple[str, ...] = ("ok", "timeout", "error", "unreached")
"""A behavioural module's status: ``unreached`` is seeded for every module before the
first runs; every status but ``ok`` scores rate 0 and keeps its weight."""

CHECK_VERDICTS: tuple[str, ...] = ("pass", "fail", "skip", "error")
"""A check's verdict as a module writes it (anything else reads as ``error``)."""

# --------------------------------------------------------------------------- the files

SUITE_SCHEMA = "swerefactor.behavioural-suite/1"
SCAN_SCHEMA = "swerefactor.scan-suite/1"
PROBE_SCHEMA = "swerefactor.verification-probe/1"
EVALUATION_SCHEMA = "swerefactor.evaluation/1"
STAGE_RESULT_SCHEMA = "swerefactor.stage-result/1"
SCORE_SCHEMA = "swerefactor.score/1"
TELEMETRY_SCHEMA = "swerefactor.telemetry/1"

DEFAULT_MODULE_TIMEOUT_SEC = 900.0
"""A suite module's timeout when neither it nor the suite's ``default_timeout_sec`` says."""
DEFAULT_STAGE_TIMEOUT_SEC = 3600.0
"""A stage's ``timeout_sec`` in ``evaluation.toml`` when it does not say."""
DEFAULT_ADVERSARY_BUDGET_SEC = 3600.0
"""An adversary's ``budget_sec`` in ``probe.toml`` when it does not say."""
DEFAULT_LIB_DIR = "lib"
DEFAULT_FAULT_EXIT_CODES: tuple[int, ...] = tuple(range(64, 79))
"""The candidate exit codes that mean "the tree could not be tested" (sysexits' 64..78)
when ``probe.toml``'s ``[scope].fault_exit_codes`` does not say."""

# --------------------------------------------------------------------------- a module's world

MODULE_CONTRACT_ENV: tuple[str, ...] = (
    "SRB_REPO", "SRB_ORIGINAL", "SRB_MODULE_DIR", "SRB_MODULE_ID", "SRB_SUITE_DIR",
    "SRB_WORK", "SRB_SUITE_WORK", "SRB_RESULT",
)
"""The eight names the behavioural runner gives a module, each the place of something the
submission is measured against: a program the submission controls never sees them."""
MODULE_DEADLINE_ENV: tuple[str, ...] = ("SRB_MODULE_TIMEOUT_SEC", "SRB_MODULE_DEADLINE")
"""The module's budget, in seconds and as an absolute unix time."""
SRB_RUNNER_ENV: tuple[str, ...] = ("SRB_SUBMISSION_RUN", "SRB_SANDBOX_SLOT")
"""srb's own additions: how a module starts submission code, and its slot."""

# --------------------------------------------------------------------------- identities

SLOT_UID_BASE = 61000
"""The first submission uid of a stage container when the host gives none."""
MAX_SLOTS = 64
CANDIDATE_OFFSET = 32
"""Stage III: a candidate of slot N runs as ``uid_base + CANDIDATE_OFFSET + N``."""


def slot_uid(uid_base: int, slot: int) -> int:
    """The uid submission code of ``slot`` runs as."""
    return uid_base + slot


def candidate_uid(uid_base: int, slot: int) -> int:
    """The uid the candidate of ``slot`` runs as (apart from its programs' slot uid)."""
    return uid_base + CANDIDATE_OFFSET + slot


# --------------------------------------------------------------------------- exit codes

EXIT_OK = 0
EXIT_UNUSABLE = 2
"""The grader's commands (and ``srb-submission``): what they were given cannot be used (a
suite.toml with problems, a bad argument), as the published CLI exits 2 for a task file it
cannot read; with its ``cannot use`` note the host reads it as the task's fault."""
EXIT_TIMEOUT = 124
"""A budget ran out: coreutils ``timeout``'s code, ``srb-submission --timeout``'s, an agent
round stopped by its cap."""
EXIT_LAUNCH_FAILED = 125
"""A launcher's own failure before the program ran (the slot could not be prepared, srb's
desk did not answer), as ``timeout`` and ``env`` use it."""
EXIT_CANNOT_EXECUTE = 126
"""The program was found but could not be started."""
EXIT_NOT_FOUND = 127
"""The program does not exist."""
EXIT_SIGNAL_BASE = 128
"""A process ended by signal N exits ``EXIT_SIGNAL_BASE + N``."""
EXIT_KILLED = EXIT_SIGNAL_BASE + 9
"""SIGKILL's exit (137): ``timeout -k`` at the budget, or something killed the process."""
EXIT_CODES: tuple[int, ...] = (EXIT_UNUSABLE, EXIT_TIMEOUT, EXIT_LAUNCH_FAILED,
                               EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, EXIT_KILLED)
"""The codes above that mean something between the grader and the host (0 aside)."""

# ------------------------------------------------------------ the suite's stdout lines

SUITE_PROGRESS_MARK = "@srb-progress "
"""Starts the grader's ``suite`` line of one module's start or end (JSON after it)."""
SUITE_CHECKS_MARK = "@srb-checks "
"""Starts the grader's ``suite`` line of one ended module's checks (JSON after it)."""
SUITE_RESULT_MARK = "@srb-result "
"""Starts the grader's last ``suite`` line: the stage result as written, but its checks,
which are the ``@srb-checks`` lines' in order (``{"document": ..., "checks_streamed": N}``)."""

# --------------------------------------------------------------------------- models

MODEL_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("anthropic", ("claude", "opus", "sonnet", "haiku")),
    ("openai", ("gpt", "codex", "o1", "o3", "o4")),
    ("google", ("gemini",)),
    ("deepseek", ("deepseek",)),
    ("qwen", ("qwen",)),
)
"""Vendor families by how a model's name starts (or a ``-stem``/``/stem`` inside it)."""


def model_family(model: str) -> str | None:
    """The vendor family of a model name (claude-opus-5 → anthropic, gpt-5.6-sol → openai,
    anthropic/claude-sonnet-5 → anthropic); None for no model or ``fuzz``; an unknown
    name's first word otherwise."""
    name = model.strip().lower()
    if not name or name == "fuzz":
        return None
    for family, stems in MODEL_FAMILIES:
        if any(name.startswith(stem) or f"-{stem}" in name or f"/{stem}" in name
               for stem in stems):
            return family
    return name.split("-", 1)[0]


__all__ = [
    "CANDIDATE_OFFSET",
    "CHECK_VERDICTS",
    "DEFAULT_ADVERSARY_BUDGET_SEC",
    "DEFAULT_FAULT_EXIT_CODES",
    "DEFAULT_LIB_DIR",
    "DEFAULT_MODULE_TIMEOUT_SEC",
    "DEFAULT_STAGE_TIMEOUT_SEC",
    "EVALUATION_SCHEMA",
    "EXIT_CANNOT_EXECUTE",
    "EXIT_CODES",
    "EXIT_KILLED",
    "EXIT_LAUNCH_FAILED",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_SIGNAL_BASE",
    "EXIT_TIMEOUT",
    "EXIT_UNUSABLE",
    "MAX_SLOTS",
    "MODEL_FAMILIES",
    "MODULE_CONTRACT_ENV",
    "MODULE_DEADLINE_ENV",
    "MODULE_STATUSES",
    "PROBE_SCHEMA",
    "SCAN_SCHEMA",
    "SCORE_SCHEMA",
    "SLOT_UID_BASE",
    "SRB_RUNNER_ENV",
    "STAGES",
    "STAGE_RESULT_SCHEMA",
    "SUITE_CHECKS_MARK",
    "SUITE_PROGRESS_MARK",
    "SUITE_RESULT_MARK",
    "SUITE_SCHEMA",
    "TELEMETRY_SCHEMA",
    "candidate_uid",
    "model_family",
    "slot_uid",
]
