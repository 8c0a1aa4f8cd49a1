"""The checks the published task tool makes beyond the manifests' own schema.

Run by ``srb tasks validate`` on a task that loaded (not by every load: they read prompt
files and State A's file list). Each finding names the file and the key:

* a ``.dockerignore`` in every enabled stage's build context and ``score.py`` (the Harbor
  entry point) at the task root, for tasks written against the published image contract
  (a stage declares ``image``);
* the audit prompt shows the gates: ``{{gates}}``, or else every declared gate id;
* ``{{findings}}`` in the audit prompt when a scan is declared;
* model and driver agree (an ``anthropic`` driver with a ``gpt-…`` model, an ``openai``
  driver with a ``claude-…`` model, a vendor driver without a model);
* every adversary names a driver this srb can run (:data:`ADVERSARY_DRIVERS`): a probe that
  names another (``gemini-cli``, ``mini-swe-agent``, a typo) is an error naming the ones it can,
  rather than a run that ends invalid at Stage III;
* the probe's prompt is read relative to the probe's own folder;
* ``[metadata].fuzz_entry`` names a file of State A, or a product of ``fuzz_build`` (a
  script under the probe's folder, run as ``sh SCRIPT TREE`` in each tree before it is
  fuzzed: it must be a string naming a file that exists there), and ``fuzz_seeds`` exists;
* ``[metadata].nondeterminism``, when given, is ``"reject"`` or ``"break"`` (what a submission
  nondeterministic for a candidate counts as: grader/candidates/).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from srb_tui.grader.contract import MODEL_FAMILIES, model_family
from srb_tui.schema.archive_facts import archive_files
from srb_tui.schema.disk import ARCHIVE, rel
from srb_tui.schema.loader import TaskLoad, load_task
from srb_tui.schema.models import StageSpec, Task
from srb_tui.schema.problems import Problem
from srb_tui.schema.reader import is_inside, too_large

ADVERSARY_DRIVERS = ("fuzz", "anthropic", "openai", "scripted", "claude-code", "codex")
"""The Stage III drivers this srb runs: its model-free fuzzer, the drivers of
``srb_tui.drivers`` and the real clients of a client lane (kept equal to ``DRIVERS`` and
``CLIENT_DRIVERS`` by a test; schema imports neither)."""
TREE_PREFIX = "/workspace/repo/"


def validate_task(path: Path, *, schema_only: bool = False) -> TaskLoad:
    """``load_task`` plus, unless ``schema_only``, the published tool's checks."""
    load = load_task(path, schema_only=schema_only)
    if schema_only or load.task is None:
        return load
    extra = check_published(load.task)
    if not extra:
        return load
    return dataclasses.replace(load, problems=(*load.problems, *extra))


def _published_images(task: Task) -> bool:
    evaluation = task.evaluation
    return evaluation is not None and any(
        isinstance(stage.options.get("image"), str) for stage in evaluation.enabled_stages
    )


def check_published(task: Task) -> list[Problem]:
    problems: list[Problem] = []
    if task.evaluation is None:
        return problems
    if _published_images(task):
        _build_files(task, problems)
    _audit_prompt(task, problems)
    _models(task, problems)
    _probe(task, problems)
    _modules_outside_sandbox(task, problems)
    _candidate_files_shared(task, problems)
    return problems


LAUNCH_NAMES = ("SRB_SUBMISSION_RUN", "srb_submission", "srb-submission")
MODULE_SCRIPT_SUFFIXES = (".sh", ".py", ".bash", "")


def _modules_outside_sandbox(task: Task, problems: list[Problem]) -> None:
    """One warning for the modules that start submission code themselves: their files name
    ``SRB_REPO`` and never the launcher. The programs they start of the tree run as the
    slot uid (the exec boundary, :mod:`srb_tui.grader.boundary.module_boundary`); what a module
    loads into its own process is not behind it, and a run records it when seen."""
    assert task.evaluation is not None
    behavioural = task.evaluation.behavioural
    if task.suite is None or not isinstance(behavioural, StageSpec):
        return
    suite_rel = behavioural.option_str("suite") or "behavioural/suite.toml"
    root = (task.dir / "tests" / suite_rel).parent
    found: list[str] = []
    for module in task.suite.modules:
        folder = root / module.dir
        texts = [_read(path) or "" for path in sorted(folder.glob("*"))
                 if path.is_file() and path.suffix in MODULE_SCRIPT_SUFFIXES][:20]
        text = "\n".join(texts)
        if "SRB_REPO" in text and not any(name in text for name in LAUNCH_NAMES):
            found.append(module.id)
    if found:
        problems.append(Problem(
            f"tests/{suite_rel}", "module",
            f"module(s) {', '.join(found)} start submission code themselves (they use "
            "$SRB_REPO, never $SRB_SUBMISSION_RUN): srb's exec boundary starts the "
            "programs they run of the tree as the submission's uid; code of the tree a module "
            "loads into its own process would still run as uid 0 (recorded per run)",
            kind="warning"))


SHARED_WRITE = re.compile(r'>>?\s*"?(\$\{?SRB_WORK\b|\$\{?SRB_TARGET\b|/tmp/)')


def _candidate_files_shared(task: Task, problems: list[Problem]) -> None:
    """One warning when the task's candidate command writes files where the program under
    test can read them while it runs (the tree, ``$SRB_WORK``, ``/tmp``): Stage III keeps
    the candidate apart from the programs it starts, but not what it puts in shared
    folders (README: "Stage III: the candidate and the program it starts")."""
    probe = task.probe
    if probe is None:
        return
    base = (task.dir / _probe_file(task)).parent
    for word in probe.candidate_command:
        script = base / word
        if word.startswith(("/", "-")) or not is_inside(word) or not script.is_file():
            continue
        lines = [line for line in (_read(script) or "").splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        hits = [n for n, line in enumerate(lines, 1) if SHARED_WRITE.search(line)]
        if hits:
            problems.append(Problem(
                rel(task.dir, script), "candidate_command",
                "writes into the tree, $SRB_WORK or /tmp, which the program under test can "
                "read while a candidate runs (Stage III keeps the candidate's own file, "
                "descriptors and private TMPDIR from it, not shared folders)",
                kind="warning"))


def _build_files(task: Task, problems: list[Problem]) -> None:
    assert task.evaluation is not None
    for stage in task.evaluation.enabled_stages:
        context = stage.option_str("context") or stage.name
        if not is_inside(context) or not (task.dir / "tests" / context).is_dir():
            continue
        ignore = task.dir / "tests" / context / ".dockerignore"
        if not ignore.is_file():
            problems.append(Problem(
                rel(task.dir, ignore), f"stages.{stage.name}.context",
                "file is absent (the published build contexts each carry a .dockerignore, "
                "so host caches and the Dockerfile itself stay out of the stage image)",
                kind="absent"))
    if not (task.dir / "score.py").is_file():
        problems.append(Problem(
            "score.py", "", "file is absent (the published harness's scoring entry point, "
            "which Harbor's verifier runs after the stages)", kind="absent"))


def _read(path: Path) -> str | None:
    if too_large(path) is not None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _audit_prompt(task: Task, problems: list[Problem]) -> None:
    assert task.evaluation is not None
    audit = task.evaluation.audit
    if not audit.enabled:
        return
    prompt_rel = audit.option_str("prompt") or "audit/prompt.txt"
    if not is_inside(prompt_rel):
        return
    name = f"tests/{prompt_rel}"
    text = _read(task.dir / name)
    if text is None:
        return  # reported as absent by the loader
    if "{{gates}}" not in text:
        missing = [gate.id for gate in audit.gates if gate.id not in text]
        if missing:
            problems.append(Problem(
                name, "stages.audit.prompt",
                "the prompt has no {{gates}} and does not name gate(s) "
                f"{', '.join(missing)}: the reviewer would never be asked them"))
    scan_declared = audit.option_str("scan") is not None or task.scan is not None
    if scan_declared and "{{findings}}" not in text:
        problems.append(Problem(
            name, "stages.audit.scan",
            "a scan is declared but the prompt has no {{findings}}: its findings would "
            "reach no reviewer"))


def _family_problem(model: str, driver: str) -> str | None:
    """A model of one vendor family under another family's driver (the families of
    :data:`srb_tui.grader.contract.MODEL_FAMILIES`; drivers named after a family)."""
    vendors = {family for family, _ in MODEL_FAMILIES}
    if driver not in vendors:
        return None
    if not model:
        return f"driver {driver!r} needs a model"
    family = model_family(model)
    if family in vendors and family != driver:
        return (f"model {model!r} is a {family} model but the driver is {driver!r}; "
                f"use driver = {family!r}")
    return None


def _models(task: Task, problems: list[Problem]) -> None:
    assert task.evaluation is not None
    audit = task.evaluation.audit
    pairs: list[tuple[str, str, str, str]] = []
    if audit.enabled:
        pairs.append(("tests/evaluation.toml", "stages.audit",
                      audit.option_str("model") or "", audit.option_str("driver") or ""))
    verification = task.evaluation.verification
    if isinstance(verification, StageSpec) and verification.enabled:
        adjudicator = verification.options.get("adjudicator")
        if isinstance(adjudicator, Mapping):
            model, driver = adjudicator.get("model"), adjudicator.get("driver", "anthropic")
            pairs.append(("tests/evaluation.toml", "stages.verification.adjudicator",
                          model if isinstance(model, str) else "",
                          driver if isinstance(driver, str) else ""))
    if task.probe is not None:
        probe_file = _probe_file(task)
        for index, adversary in enumerate(task.probe.adversaries):
            pairs.append((probe_file, f"adversary[{index}] {adversary.id}", adversary.model,
                          adversary.driver))
            if adversary.driver not in ADVERSARY_DRIVERS:
                problems.append(Problem(
                    probe_file, f"adversary[{index}] {adversary.id}",
                    f"driver {adversary.driver!r} is not one this srb can run as a Stage III "
                    f"adversary; choose one of {', '.join(ADVERSARY_DRIVERS)}"))
    for file, key, model, driver in pairs:
        message = _family_problem(model, driver)
        if message is not None:
            problems.append(Problem(file, key, message))


def _probe_file(task: Task) -> str:
    assert task.evaluation is not None
    verification = task.evaluation.verification
    declared = verification.option_str("probe") if isinstance(verification, StageSpec) else None
    return f"tests/{declared or 'verification/probe.toml'}"


def _probe(task: Task, problems: list[Problem]) -> None:
    probe = task.probe
    if probe is None:
        return
    probe_file = _probe_file(task)
    base = (task.dir / probe_file).parent
    if is_inside(probe.prompt) and not (base / probe.prompt).is_file() \
            and (task.dir / "tests" / probe.prompt).is_file():
        problems.append(Problem(
            probe_file, "prompt",
            f"{probe.prompt!r} is found only relative to tests/; the published harness reads "
            f"it relative to the probe's own folder ({rel(task.dir, base / probe.prompt)})",
            kind="warning"))
    meta = probe.metadata
    rule = meta.get("nondeterminism", "reject")
    if rule not in ("reject", "break"):
        problems.append(Problem(
            probe_file, "metadata.nondeterminism",
            f"{rule!r}: expected \"reject\" (the published grader: recorded, not counted) or "
            "\"break\" (a submission nondeterministic for a candidate is a break)"))
    if not isinstance(meta.get("behaviour_only", False), bool):
        problems.append(Problem(
            probe_file, "metadata.behaviour_only",
            f"{meta.get('behaviour_only')!r}: expected true (the candidate cannot read the "
            "tree and must run its program: srb's own tasks) or false (the published "
            "contract, where run-candidate.sh may copy the tree)"))
    seeds = meta.get("fuzz_seeds")
    if isinstance(seeds, str) and is_inside(seeds) and not (base / seeds).exists():
        problems.append(Problem(rel(task.dir, base / seeds), "metadata.fuzz_seeds",
                                f"folder is absent (the fuzz seeds named by {probe_file})",
                                kind="absent"))
    build = meta.get("fuzz_build")
    built = _check_fuzz_build(task, base, probe_file, build, problems)
    entry = meta.get("fuzz_entry")
    if entry is None:
        return
    if not isinstance(entry, str) or not entry.strip():
        problems.append(Problem(probe_file, "metadata.fuzz_entry",
                                "must be a path inside the tree (e.g. bin/tool)"))
        return
    text = entry.strip().removeprefix(TREE_PREFIX)
    path = PurePosixPath(text)
    if path.is_absolute() or ".." in path.parts:
        problems.append(Problem(
            probe_file, "metadata.fuzz_entry",
            f"{entry!r} must be a path inside the tree (e.g. bin/tool) or under {TREE_PREFIX}"))
        return
    archive = task.dir / ARCHIVE
    if not archive.is_file():
        return
    try:
        files = archive_files(archive)
    except OSError:
        return  # the loader reports an unreadable archive
    if path.as_posix() in files:
        return
    if built:
        return  # a build product: the fuzzer builds each tree before it runs it
    problems.append(Problem(
        probe_file, "metadata.fuzz_entry",
        f"{entry!r} is not a file of State A ({ARCHIVE}): the fuzzer would run nothing"
        + ("" if build is not None else " (a build product needs fuzz_build)")))


def _check_fuzz_build(
    task: Task, base: Path, probe_file: str, build: object, problems: list[Problem]
) -> bool:
    """True when ``fuzz_build`` names a script that exists under the probe's folder (the
    one form srb runs: ``sh SCRIPT TREE`` in the tree); every other form is an error."""
    if build is None:
        return False
    if not isinstance(build, str) or not build.strip():
        problems.append(Problem(
            probe_file, "metadata.fuzz_build",
            f"{build!r} must be a script under the probe's folder, e.g. "
            '"fuzz-build.sh" (srb runs it as `sh SCRIPT TREE` in each tree; a command list '
            "would run a file of the tree under test as the build's own harness)"))
        return False
    script = base / build
    if not is_inside(build) or not script.is_file():
        problems.append(Problem(
            rel(task.dir, script), "metadata.fuzz_build",
            f"{build!r} is not a file under the probe's folder ({rel(task.dir, base)})",
            kind="absent" if is_inside(build) else "error"))
        return False
    return True
