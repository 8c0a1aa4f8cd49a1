"""Builds the schema test corpus: one valid minimal task and many broken copies of it.

Run ``python -m tests.schema.corpus`` from the repository root to (re)write
``tests/schema/valid/`` and ``tests/schema/broken/``.  Every broken case is the
minimal task with one thing broken (``several-problems`` breaks many); the
expected messages live in ``test_broken.py``.  The corpus is committed, so the
tests read files on disk; this script only documents and reproduces how they
were made.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
VALID = HERE / "valid"
BROKEN = HERE / "broken"
MINIMAL_ID = "minimal"

TASK_TOML = """\
schema_version = "1.4"

[[artifacts]]
source = "/workspace/repo"
exclude = [
    "build",
    "*.o",
    "__pycache__",
]

[task]
name = "srb-tests/{id}"
description = "A tiny make-to-CMake task for the schema loader's tests."
authors = []
keywords = ["test"]

[metadata]
category = "build-toolchain"
state_a = "a C program built by make"
state_b = "the same program built by CMake"

[agent]
harness = "codex-cli 0.146.0"
timeout_sec = 3600.0
network_mode = "no-network"
user = "root"

[environment]
network_mode = "no-network"
cpus = 2
memory_mb = 2048

[verifier]
timeout_sec = 4000.0
environment_mode = "separate"
"""

EVALUATION_TOML = """\
schema = "swerefactor.evaluation/1"
task = "{id}"
title = "mini: make to CMake"
results_dir = "/logs/verifier"

[scoring]
max_score = 100.0
behavioural_points = 40.0
verification_points = 60.0
verification_models = 2
points_per_survived_model = 30.0

[stages.audit]
runner = "audit"
result = "audit.json"
prompt = "audit/prompt.txt"
scan = "audit/scan.toml"
timeout_sec = 600
model = "scripted-reviewer"
driver = "scripted"
samples = 3
context = "audit"

[[stages.audit.gate]]
id = "make_retired"
title = "make is gone"
question = "Is the Makefile gone from the submission?"
required = true

[[stages.audit.gate]]
id = "readme_updated"
title = "the README says how to build"
question = "Does the README describe the CMake build?"
required = false

[stages.behavioural]
runner = "behavioural"
result = "behavioural.json"
suite = "behavioural/suite.toml"
timeout_sec = 1200
context = "behavioural"

[stages.verification]
runner = "verification"
result = "verification.json"
probe = "verification/probe.toml"
timeout_sec = 2000
context = "verification"

[stages.verification.adjudicator]
model = "scripted-judge"
driver = "scripted"
"""

SUITE_TOML = """\
schema = "swerefactor.behavioural-suite/1"
task = "{id}"
lib_dir = "lib"
default_timeout_sec = 300

[env]
MINI = "1"

[[module]]
id = "build"
title = "the program builds"
weight = 1.0
about = "Configures and builds with CMake."

[[module]]
id = "run"
title = "the program prints what it printed"
weight = 2
command = ["python3", "run.py"]
timeout_sec = 120
"""

SCAN_TOML = """\
schema = "swerefactor.scan-suite/1"
task = "{id}"
lib_dir = "lib"
default_timeout_sec = 60

[[module]]
id = "provenance"
title = "no Makefile is left"
weight = 1.0
dir = "modules/provenance"
"""

PROBE_TOML = """\
schema = "swerefactor.verification-probe/1"
task = "{id}"
prompt = "prompt.txt"
candidate_command = ["bash", "/tests/verification/run-candidate.sh"]

[scope]
allow = ["what the program prints"]
deny = ["build logs"]
reruns = 3
require_deterministic = true
network_allowed = false

[[adversary]]
id = "a01-output"
model = "scripted-adversary"
driver = "scripted"
budget_sec = 600.0
[adversary.metadata]
focus = "the program's output"

[[adversary]]
id = "a02-build"
model = "scripted-adversary"
driver = "scripted"
budget_sec = 600.0
"""

#: State A: a tiny make project inside a repo/ folder (kept as extracted: the published
#: images unpack original.tar.gz as it is, so its files sit under repo/).
STATE_A_FILES: dict[str, str] = {
    "repo/Makefile": "all:\n\tcc -o hello src/hello.c\n",
    "repo/README.md": "hello, built by make\n",
    "repo/src/hello.c": '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n',
    "repo/build-aux/install-sh": '#!/bin/sh\nexec install "$@"\n',
}

OTHER_FILES: dict[str, str] = {
    "instruction.md": "Replace the Makefile with a CMake build.\n",
    "environment/Dockerfile": "FROM srb/base:bookworm\n",
    "tests/audit/Dockerfile": "FROM srb/base:bookworm\n",
    "tests/audit/prompt.txt": "Review {{submission}} against {{original}}.\n{{gates}}\n",
    "tests/audit/lib/scan.py": "# shared scan helpers\n",
    "tests/audit/modules/provenance/run.py": 'print("scan")\n',
    "tests/behavioural/Dockerfile": "FROM srb/base:bookworm\n",
    "tests/behavioural/lib/common.sh": "# shared module helpers\n",
    "tests/behavioural/modules/build/run.sh": "#!/bin/bash\nexit 0\n",
    "tests/behavioural/modules/run/run.py": 'print("run")\n',
    "tests/verification/Dockerfile": "FROM srb/base:bookworm\n",
    "tests/verification/prompt.txt": "Find a behaviour State A has and the submission lacks.\n",
    "tests/verification/run-candidate.sh": '#!/bin/bash\nexec "$@"\n',
}


def state_a_archive() -> bytes:
    """A byte-for-byte reproducible original.tar.gz."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for directory in ("repo", "repo/src", "repo/build-aux"):
            info = tarfile.TarInfo(directory)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for name, text in STATE_A_FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def minimal_files(task_id: str) -> dict[str, str | bytes]:
    """Every file of the minimal valid task, for a task directory named ``task_id``."""
    archive = state_a_archive()
    files: dict[str, str | bytes] = {
        "task.toml": TASK_TOML.replace("{id}", task_id),
        "tests/evaluation.toml": EVALUATION_TOML.replace("{id}", task_id),
        "tests/behavioural/suite.toml": SUITE_TOML.replace("{id}", task_id),
        "tests/audit/scan.toml": SCAN_TOML.replace("{id}", task_id),
        "tests/verification/probe.toml": PROBE_TOML.replace("{id}", task_id),
        "environment/original.tar.gz": archive,
        "environment/original.sha256": f"{hashlib.sha256(archive).hexdigest()}  original.tar.gz\n",
    }
    files.update(OTHER_FILES)
    return files


@dataclass(frozen=True)
class Case:
    """One broken copy: text replacements (file, old, new), files removed or added."""

    name: str
    edits: tuple[tuple[str, str, str], ...] = ()
    remove: tuple[str, ...] = ()
    add: dict[str, str] = field(default_factory=dict)


T, E, S, C, P = (
    "task.toml",
    "tests/evaluation.toml",
    "tests/behavioural/suite.toml",
    "tests/audit/scan.toml",
    "tests/verification/probe.toml",
)

CASES: tuple[Case, ...] = (
    Case(
        "unknown-top-key",
        (
            (
                E,
                'results_dir = "/logs/verifier"\n',
                'results_dir = "/logs/verifier"\ncolour = "red"\n',
            ),
        ),
    ),
    Case("top-key-typo", ((E, "title = ", "titel = "),)),
    Case("agent-timeout-typo", ((T, "timeout_sec = 3600.0", "timeout = 3600.0"),)),
    Case("agent-extra-key", ((T, 'user = "root"\n', 'user = "root"\nmodel = "gpt"\n'),)),
    Case("agent-timeout-zero", ((T, "timeout_sec = 3600.0", "timeout_sec = 0"),)),
    Case("quoted-boolean", ((E, "required = true", 'required = "true"'),)),
    Case("boolean-as-number", ((E, "max_score = 100.0", "max_score = true"),)),
    Case("wrong-type", ((S, 'title = "the program builds"', 'command = "bash run.sh"'),)),
    Case("quoted-number", ((P, "reruns = 3", 'reruns = "3"'),)),
    Case(
        "missing-required",
        ((P, 'candidate_command = ["bash", "/tests/verification/run-candidate.sh"]\n', ""),),
    ),
    Case("wrong-schema", ((S, "behavioural-suite/1", "behavioural-suite/2"),)),
    Case("task-mismatch", ((E, 'task = "task-mismatch"', 'task = "some-other-task"'),)),
    Case(
        "scoring-product",
        ((E, "points_per_survived_model = 30.0", "points_per_survived_model = 25.0"),),
    ),
    Case("scoring-sum", ((E, "max_score = 100.0", "max_score = 90"),)),
    Case("scoring-behavioural-zero", ((E, "behavioural_points = 40.0", "behavioural_points = 0"),)),
    Case("scoring-models-fraction", ((E, "verification_models = 2", "verification_models = 2.5"),)),
    Case(
        "unknown-stage",
        (
            (
                E,
                "[stages.verification.adjudicator]",
                '[stages.review]\nrunner = "audit"\n\n[stages.verification.adjudicator]',
            ),
        ),
    ),
    Case(
        "missing-stage",
        (
            (
                E,
                '[stages.behavioural]\nrunner = "behavioural"\n'
                'result = "behavioural.json"\nsuite = "behavioural/suite.toml"\n'
                'timeout_sec = 1200\ncontext = "behavioural"\n\n',
                "",
            ),
        ),
    ),
    Case("stage-key-typo", ((E, "timeout_sec = 600", "timout_sec = 600"),)),
    Case("no-required-gate", ((E, "required = true", "required = false"),)),
    Case("duplicate-gate-id", ((E, 'id = "readme_updated"', 'id = "make_retired"'),)),
    Case("duplicate-module-id", ((S, 'id = "run"', 'id = "build"\ndir = "modules/run"'),)),
    Case("adversary-id-not-token", ((P, 'id = "a02-build"', 'id = "a02 build!"'),)),
    Case("verifier-budget", ((T, "timeout_sec = 4000.0", "timeout_sec = 3000"),)),
    Case("reruns-zero", ((P, "reruns = 3", "reruns = 0"),)),
    Case(
        "fault-exit-codes",
        (
            (
                P,
                "network_allowed = false",
                'network_allowed = false\nfault_exit_codes = [64, 0, 64, "70"]',
            ),
        ),
    ),
    Case("scope-key-typo", ((P, "reruns = 3", "rerun = 3"),)),
    Case("srb-unknown-key", ((T, "[verifier]", '[srb]\nstate_b = "x"\n\n[verifier]'),)),
    Case(
        "gate-outside-audit",
        (
            (
                E,
                'context = "behavioural"\n',
                'context = "behavioural"\n\n[[stages.behavioural.gate]]\n'
                'id = "x"\nquestion = "?"\n',
            ),
        ),
    ),
    Case(
        "adversary-count",
        (
            (E, "verification_models = 2", "verification_models = 3"),
            (E, "verification_points = 60.0", "verification_points = 90.0"),
            (E, "max_score = 100.0", "max_score = 130.0"),
        ),
    ),
    Case("unknown-runner", ((E, 'runner = "behavioural"', 'runner = "pytest"'),)),
    Case("path-escapes", ((E, 'prompt = "audit/prompt.txt"', 'prompt = "../prompt.txt"'),)),
    Case("negative-weight", ((S, "weight = 2\n", "weight = -1\n"),)),
    Case(
        "no-artifacts",
        (
            (
                T,
                '[[artifacts]]\nsource = "/workspace/repo"\nexclude = [\n'
                '    "build",\n    "*.o",\n    "__pycache__",\n]\n\n',
                "",
            ),
        ),
    ),
    Case("invalid-toml", ((T, "cpus = 2", "cpus = = 2"),)),
    Case("stage-layout", add={"tests/behavioural/fixtures/case.json": "{}\n"}),
    Case("exclude-drops-state-a", ((T, '    "build",\n', '    "build*",\n'),)),
    Case("sha-mismatch", add={"environment/original.sha256": "0" * 64 + "  original.tar.gz\n"}),
    Case(
        "absent-files",
        remove=(
            "instruction.md",
            "tests/behavioural/modules/build/run.sh",
            "tests/verification/run-candidate.sh",
        ),
        add={"tests/behavioural/modules/build/NOTES.md": "run.sh went missing\n"},
    ),
    Case(
        "several-problems",
        (
            (T, "timeout_sec = 3600.0", 'timeout_sec = "3600"'),
            (T, 'network_mode = "no-network"\nuser', 'network_mode = "no-network"\nusr'),
            (E, "samples = 3", "samples = 3\nenabeld = true"),
            (E, "points_per_survived_model = 30.0", "points_per_survived_model = 20.0"),
            (S, "weight = 2\n", "weight = false\n"),
            (S, 'id = "run"', 'id = "build"\ndir = "modules/run"'),
            (C, "swerefactor.scan-suite/1", "swerefactor.scan/1"),
            (
                P,
                "budget_sec = 600.0\n[adversary.metadata]",
                "budget_sec = -5\n[adversary.metadata]",
            ),
            (P, "require_deterministic = true", 'require_deterministic = "yes"'),
        ),
    ),
)


def write_task(target: Path, files: dict[str, str | bytes]) -> None:
    if target.exists():
        shutil.rmtree(target)
    for name, content in sorted(files.items()):
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def case_files(case: Case) -> dict[str, str | bytes]:
    files = minimal_files(case.name)
    for name, old, new in case.edits:
        text = files[name]
        assert isinstance(text, str) and old in text, (case.name, name, old)
        files[name] = text.replace(old, new, 1)
    for name in case.remove:
        del files[name]
    files.update(case.add)
    return files


def main() -> None:
    write_task(VALID / MINIMAL_ID, minimal_files(MINIMAL_ID))
    if BROKEN.exists():
        shutil.rmtree(BROKEN)
    for case in CASES:
        write_task(BROKEN / case.name, case_files(case))


if __name__ == "__main__":
    main()
