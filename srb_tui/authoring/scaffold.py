"""Write the task a :class:`~srb_tui.authoring.plan.Plan` describes.

Text files come from ``templates/`` with ``@@NAME@@`` placeholders filled in; the helper
programs (reviewer, case kit, recorder, archiver) are copied as they are and read their
settings from files written next to them (``tests/audit/data/languages.toml``,
``tests/behavioural/data/program.json``). State A is copied to ``submissions/untouched``
and packed by the task's own ``make_archive.py``; the expected answers are recorded by the
task's own ``tests/behavioural/lib/record.py`` (:func:`record_expected`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from srb_tui.authoring.cases import fuzz_argv
from srb_tui.authoring.languages import Language
from srb_tui.authoring.plan import SKIPPED, Plan
from srb_tui.schema.excludes import is_excluded

MODULE = "cases"
DEFAULT_SEED = b"hello world\n1 2 3\n"
HELPER_TIMEOUT_SEC = 600
ADVERSARY_FOCUS = (
    "byte mutations of every seed under the first command line",
    "byte mutations paired with every command line of the cases",
    "inserting and deleting line ends, quotes, tabs and delimiters",
    "multi-byte and broken UTF-8, control bytes and very long lines",
    "mutating the command line as well as the bytes",
    "splices between seeds and empty input",
)
VERBATIM = (
    "make_archive.py",
    "tests/audit/Dockerfile",
    "tests/audit/lib/scripted_reviewer.py",
    "tests/behavioural/lib/casekit.py",
    "tests/behavioural/lib/record.py",
)
RENDERED = (
    "task.toml",
    "instruction.md",
    "README.md",
    "environment/Dockerfile",
    "tests/evaluation.toml",
    "tests/audit/prompt.txt",
    "tests/behavioural/Dockerfile",
    "tests/behavioural/suite.toml",
    "tests/verification/Dockerfile",
    "tests/verification/probe.toml",
    "tests/verification/prompt.txt",
    "tests/verification/run-candidate.sh",
    "submissions/reference/README.md",
)
EXECUTABLE = ("tests/verification/run-candidate.sh",)


@dataclass(frozen=True)
class Recorded:
    """The outcome of running the task's recorder on State A."""

    ok: bool
    output: str


def template(rel: str) -> str:
    return resources.files("srb_tui.authoring").joinpath("templates", rel).read_text("utf-8")


def toml_list(words: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(w) for w in words) + "]"


def packages(*langs: Language, extra: tuple[str, ...] = ()) -> str:
    return " ".join(dict.fromkeys([p for lang in langs for p in lang.packages] + list(extra)))


def _stage_two(plan: Plan) -> dict[str, str]:
    """The Stage II image's python3 (private unless the port is Python) and its shims."""
    src, dst = plan.lang_from, plan.lang_to
    hidden = dst.key != "python"
    shims = [n for n in src.interpreters if n not in dst.interpreters]
    if hidden:
        shims = list(dict.fromkeys([*shims, "python", "python3", "python3.11"]))
        private = (
            "# The real python3 moves to /usr/libexec/srb/ (its standard library stays where\n"
            "# it is); only /opt/srb/python/bin/python3, readable by root alone, names it.\n"
            "RUN set -eu; \\\n"
            '    real="$(readlink -f /usr/bin/python3)"; \\\n'
            "    mkdir -p /usr/libexec/srb /opt/srb/python/bin; \\\n"
            '    mv "$real" "/usr/libexec/srb/$(basename "$real")"; \\\n'
            '    ln -s "/usr/libexec/srb/$(basename "$real")" /opt/srb/python/bin/python3; \\\n'
            "    rm -f /usr/bin/python3 /usr/bin/python /usr/local/bin/python3*"
        )
        lock = ('; \\\n    chmod 0700 /usr/libexec/srb /opt/srb/python '
                '"$(readlink -f /opt/srb/python/bin/python3)"')
    else:
        private = ("# The port is Python: python3 stays on the PATH; the grader's modules name it\n"
                   "# by the path they expect.\n"
                   "RUN mkdir -p /opt/srb/python/bin \\\n"
                   ' && ln -s "$(readlink -f /usr/bin/python3)" /opt/srb/python/bin/python3')
        lock = ""
    return {
        "STAGE2_PACKAGES": packages(dst, extra=("python3",)),
        "PRIVATE_PYTHON": private,
        "LOCK_PYTHON": lock,
        "SHIMS": " ".join(shims) or "srb-no-interpreter",
    }


def _adversaries() -> str:
    blocks = []
    for n, focus in enumerate(ADVERSARY_FOCUS, start=1):
        blocks.append(
            f'\n[[adversary]]\nid = "f{n:02d}-fuzz"\nmodel = "fuzz"\ndriver = "fuzz"\n'
            f'budget_sec = 120\n[adversary.metadata]\nfocus = "{focus}"\nseed = {n}\n')
    return "".join(blocks)


def _excludes(plan: Plan) -> list[str]:
    wanted = [".git", *plan.lang_from.build_outputs, *plan.lang_to.build_outputs]
    return [w for w in dict.fromkeys(wanted) if not any(is_excluded(f, [w]) for f in plan.files)]


def values(plan: Plan) -> dict[str, str]:
    src, dst = plan.lang_from, plan.lang_to
    return {
        "ID": plan.task_id,
        "TITLE": plan.title.replace('"', "'"),
        "SOURCE_DIR": plan.source_dir.name,
        "FROM": src.title, "TO": dst.title, "FROM_KEY": src.key, "TO_KEY": dst.key,
        "FROM_GLOBS": ", ".join(src.globs),
        "FROM_PROJECT": ", ".join(src.project_files),
        "FROM_INTERPRETERS": ", ".join(src.interpreters),
        "TO_SHEBANG": dst.shebang,
        "ENTRY": plan.entry,
        "FILE_COUNT": str(len(plan.files)),
        "CASE_COUNT": str(len(plan.cases)),
        "MODULE": MODULE,
        "EXCLUDES": toml_list(_excludes(plan)),
        "AGENT_PACKAGES": packages(dst, src),  # demo01's order: its layers are reused
        "VERIFY_PACKAGES": packages(dst, src, extra=("python3",)),
        "ADVERSARIES": _adversaries(),
        **_stage_two(plan),
    }


def render(text: str, fill: dict[str, str]) -> str:
    for name, value in fill.items():
        text = text.replace(f"@@{name}@@", value)
    return text


def languages_toml(plan: Plan) -> str:
    """``tests/audit/data/languages.toml``: the reviewer's notion of each language."""
    def side(name: str, lang: Language, target: bool) -> str:
        lines = [f"[{name}]", f"name = {json.dumps(lang.title)}",
                 f"globs = {toml_list(lang.globs)}",
                 f"project_files = {toml_list(lang.project_files)}",
                 f"interpreters = {toml_list(lang.interpreters)}",
                 f"definition_prefixes = {toml_list(lang.definition_prefixes)}"]
        if target:
            pats = ", ".join(f"'{p}'" if "'" not in p else json.dumps(p)
                             for p in lang.spawn_patterns)
            lines.append(f"spawn_patterns = [{pats}]")
        return "\n".join(lines) + "\n"

    return (
        "# What the offline reviewer (lib/scripted_reviewer.py) counts as each language.\n"
        "# entry: the program, relative to the tree. [source] is State A's language,\n"
        "# [target] the port's: globs match file names (any folder), project_files are\n"
        "# exact file names, interpreters are the runtime's program names (in a #! line or a\n"
        "# string naming what to start), definition_prefixes open a function or class line\n"
        "# (a State A definition line found verbatim in the port is a copy), spawn_patterns\n"
        "# are regular expressions for target code that starts another process.\n"
        f"entry = {json.dumps(plan.entry)}\n\n"
        + side("source", plan.lang_from, False) + "\n" + side("target", plan.lang_to, True)
        + "\n[limits]\n# target-present passes with at least max(min_target_lines,\n"
        "# target_share x State A's non-test source lines) non-test lines of target code.\n"
        "min_target_lines = 5\ntarget_share = 0.3\n"
    )


def program_json(plan: Plan) -> dict[str, object]:
    return {
        "about": "the program under test (tests/behavioural/lib/casekit.py reads this)",
        "entry": plan.entry,
        "oracle_shebang_words": list(plan.lang_from.interpreters),
        "oracle_python": plan.lang_from.key == "python",
        "case_timeout_sec": 20,
    }


def _write(path: Path, text: str | bytes, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def _dump(doc: object) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def write_task(plan: Plan) -> list[str]:
    """Write every file of the task (State A packed, answers not yet recorded); returns the
    written files, relative to the task directory, sorted."""
    root = plan.task_dir
    root.mkdir(parents=True)
    fill = values(plan)
    for rel in VERBATIM:
        _write(root / rel, template(rel), executable=rel.endswith(".py"))
    for rel in RENDERED:
        _write(root / rel, render(template(rel), fill), executable=rel in EXECUTABLE)
    module_dir = root / "tests" / "behavioural" / "modules" / MODULE
    _write(module_dir / "run.py", render(template("tests/behavioural/module_run.py"), fill))
    _write(root / "tests/audit/data/languages.toml", languages_toml(plan))
    data = root / "tests" / "behavioural" / "data"
    _write(data / "program.json", _dump(program_json(plan)))
    cases_doc = {"module": MODULE, "cases": [c.to_json() for c in plan.cases]}
    _write(data / "cases" / f"{MODULE}.json", _dump(cases_doc))
    seeds = root / "tests" / "verification" / "data" / "seeds"
    _write(seeds / "argv.json", _dump(fuzz_argv(list(plan.cases))))
    if plan.inputs_dir is not None and plan.inputs:
        shutil.copytree(plan.inputs_dir, data / "cases" / "inputs",
                        ignore=shutil.ignore_patterns(*SKIPPED))
        shutil.copytree(plan.inputs_dir, seeds / "inputs", ignore=shutil.ignore_patterns(*SKIPPED))
    else:
        _write(seeds / "sample.txt", DEFAULT_SEED)
    (data / "expected").mkdir(parents=True)
    shutil.copytree(plan.source_dir, root / "submissions" / "untouched",
                    ignore=shutil.ignore_patterns(*SKIPPED, "*.pyc"))
    _helper(root, [str(root / "make_archive.py")], "make_archive.py")
    return task_files(root)


def task_files(root: Path) -> list[str]:
    """Every file of the task at ``root``, relative, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _helper(root: Path, argv: list[str], name: str) -> str:
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=HELPER_TIMEOUT_SEC, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-800:]}")
    return done.stdout


def record_expected(task_dir: Path) -> Recorded:
    """Run the task's recorder on its State A (``submissions/untouched``) on this machine."""
    recorder = task_dir / "tests" / "behavioural" / "lib" / "record.py"
    try:
        return Recorded(True, _helper(task_dir, [str(recorder)], "record.py").strip())
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        return Recorded(False, str(exc))
