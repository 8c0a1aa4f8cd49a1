"""``srb tasks new`` without Docker: the files it writes, that the task validates and its
answers are recorded from State A, and every refusal with its exit code and message."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import tomllib
from pathlib import Path

import pytest

from srb_tui.commands import exit_codes as codes
from srb_tui.config import Settings
from srb_tui.schema.published import validate_task

from .helpers import TASK_ID, roman_argv, run_new
from .roman import CASES, write_state_a

EXPECTED_FILES = {
    "README.md", "task.toml", "instruction.md", "make_archive.py",
    "environment/Dockerfile", "environment/original.tar.gz", "environment/original.sha256",
    "submissions/reference/README.md", "submissions/untouched/README.md",
    "submissions/untouched/bin/roman",
    "tests/evaluation.toml",
    "tests/audit/Dockerfile", "tests/audit/prompt.txt", "tests/audit/data/languages.toml",
    "tests/audit/lib/scripted_reviewer.py",
    "tests/behavioural/Dockerfile", "tests/behavioural/suite.toml",
    "tests/behavioural/data/program.json", "tests/behavioural/data/cases/cases.json",
    "tests/behavioural/data/cases/inputs/mixed.txt",
    "tests/behavioural/data/cases/inputs/numbers.txt",
    "tests/behavioural/data/cases/inputs/numerals.txt",
    "tests/behavioural/data/expected/cases.json",
    "tests/behavioural/lib/casekit.py", "tests/behavioural/lib/record.py",
    "tests/behavioural/modules/cases/run.py",
    "tests/verification/Dockerfile", "tests/verification/probe.toml",
    "tests/verification/prompt.txt", "tests/verification/run-candidate.sh",
    "tests/verification/data/seeds/argv.json",
    "tests/verification/data/seeds/inputs/mixed.txt",
    "tests/verification/data/seeds/inputs/numbers.txt",
    "tests/verification/data/seeds/inputs/numerals.txt",
}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "tasks").mkdir()
    return Settings(task_roots=(tmp_path / "tasks",), state_dir=tmp_path / "state")


def _made(tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
          ) -> tuple[Path, dict[str, object]]:
    code = run_new(settings, *roman_argv(tmp_path, settings.task_roots[0]), json_mode=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == codes.OK, doc
    return Path(str(doc["path"])), doc


def test_new_writes_a_complete_task_that_validates(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    task, doc = _made(tmp_path, settings, capsys)
    assert task == settings.task_roots[0] / TASK_ID
    assert set(doc["files"]) == EXPECTED_FILES  # type: ignore[arg-type]
    assert doc["entry"] == "bin/roman" and doc["cases"] == len(CASES) and doc["recorded"]
    load = validate_task(task)
    assert load.ok and not load.errors and not load.missing, load.problems
    assert load.task is not None and load.task.id == TASK_ID
    assert list(load.task.gate_ids) == ["no-source-files", "no-source-runtime", "target-present",
                                  "entry-is-target", "no-embedded-original"]
    assert list(load.task.module_ids) == ["cases"] and len(load.task.adversary_ids) == 6
    assert os.access(task / "tests/verification/run-candidate.sh", os.X_OK)


def test_state_a_is_packed_reproducibly_with_its_digest(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    task, _ = _made(tmp_path, settings, capsys)
    archive = task / "environment" / "original.tar.gz"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (task / "environment/original.sha256").read_text() == f"{digest}  original.tar.gz\n"
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == ["README.md", "bin", "bin/roman"]
        assert members["bin/roman"].mode == 0o755 and members["bin/roman"].mtime == 0
        body = tar.extractfile("bin/roman")
        assert body is not None
        assert body.read() == (tmp_path / "roman/bin/roman").read_bytes()
    again = tmp_path / "again"
    os.system(f"python3 {task / 'make_archive.py'} --out {again / 'original.tar.gz'} >/dev/null")
    assert (again / "original.tar.gz").read_bytes() == archive.read_bytes()


def test_the_task_carries_its_own_configuration(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    task, _ = _made(tmp_path, settings, capsys)
    langs = tomllib.loads((task / "tests/audit/data/languages.toml").read_text())
    assert langs["entry"] == "bin/roman"
    assert "*.py" in langs["source"]["globs"] and "pyproject.toml" in langs["source"][
        "project_files"]
    assert set(langs["target"]["globs"]) == {"*.js", "*.mjs", "*.cjs"}
    assert any("child_process" in p for p in langs["target"]["spawn_patterns"])
    program = json.loads((task / "tests/behavioural/data/program.json").read_text())
    assert program["entry"] == "bin/roman" and program["oracle_python"] is True
    probe = tomllib.loads((task / "tests/verification/probe.toml").read_text())
    meta = probe["metadata"]
    assert (meta["fuzz_entry"], meta["fuzz_seeds"], meta["fuzz_argv"]) == (
        "bin/roman", "data/seeds", "data/seeds/argv.json")
    argv = json.loads((task / "tests/verification/data/seeds/argv.json").read_text())
    assert argv["argv"] == [[], ["--help"], ["--lower"], ["--bogus"], ["-l"]]
    assert "--lower" in argv["tokens"] and not any("inputs/" in t for t in argv["tokens"])
    assert 'PROGRAM="$TARGET/bin/roman"' in (task / "tests/verification/run-candidate.sh"
                                             ).read_text()
    for name in ("task.toml", "tests/evaluation.toml", "tests/behavioural/suite.toml",
                 "instruction.md", "tests/behavioural/Dockerfile"):
        assert "@@" not in (task / name).read_text(), name


def test_answers_are_recorded_from_state_a(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    task, _ = _made(tmp_path, settings, capsys)
    cases = json.loads((task / "tests/behavioural/data/cases/cases.json").read_text())["cases"]
    assert [c.get("command_line") for c in cases] == CASES
    by_line = {c["command_line"]: c for c in cases}
    assert by_line["--lower < inputs/numbers.txt"]["argv"] == ["--lower"]
    assert by_line["--lower < inputs/numbers.txt"]["stdin"] == "inputs/numbers.txt"
    expected = json.loads((task / "tests/behavioural/data/expected/cases.json").read_text())
    answers = {c["command_line"]: expected["cases"][c["id"]] for c in cases}
    assert answers["< inputs/numbers.txt"]["stdout"].split("\n")[:3] == ["I", "IV", "IX"]
    assert answers["--lower < inputs/numbers.txt"]["stdout"].endswith("mmmcmxcix\n")
    assert answers["--bogus"]["exit"] == 2 and answers["--bogus"]["stderr_nonempty"]
    assert answers["< inputs/mixed.txt"]["exit"] == 1
    assert answers["< inputs/mixed.txt"]["stdout"] == "XII\n?\n?\n?\n?\n14\nVII\n"


def test_the_human_report_names_the_next_steps(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_new(settings, *roman_argv(tmp_path, settings.task_roots[0]))
    out = capsys.readouterr().out
    assert code == codes.OK
    assert f"wrote {TASK_ID}" in out and "recorded State A's answers: cases: 8 cases" in out
    root = settings.task_roots[0]  # not ./tasks: every next step names it
    assert f"srb --tasks {root} tasks record {TASK_ID}" in out
    assert f"srb --tasks {root} run {TASK_ID} --agent replay:reference" in out


# --------------------------------------------------------------------------- refusals


def _refused(settings: Settings, argv: list[str], capsys: pytest.CaptureFixture[str]
             ) -> tuple[int, str]:
    code = run_new(settings, *argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_existing_id_is_refused_and_left_alone(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = settings.task_roots[0] / TASK_ID
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me")
    code, text = _refused(settings, roman_argv(tmp_path, settings.task_roots[0]), capsys)
    assert code == codes.USAGE
    assert "already exists" in text and TASK_ID in text
    assert [p.name for p in existing.iterdir()] == ["mine.txt"]


def test_a_missing_folder_is_not_found(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [TASK_ID, "--from-dir", str(tmp_path / "nowhere"), "--lang-from", "python",
            "--lang-to", "node", "--case=", "--tasks-root", str(settings.task_roots[0])]
    code, text = _refused(settings, argv, capsys)
    assert code == codes.NOT_FOUND and "no such folder" in text and "nowhere" in text
    assert not (settings.task_roots[0] / TASK_ID).exists()


def test_an_empty_folder_is_refused(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty" / ".git").mkdir(parents=True)  # version control alone is not State A
    argv = [TASK_ID, "--from-dir", str(tmp_path / "empty"), "--lang-from", "python",
            "--lang-to", "node", "--case=", "--tasks-root", str(settings.task_roots[0])]
    code, text = _refused(settings, argv, capsys)
    assert code == codes.USAGE and "has no files" in text
    assert not (settings.task_roots[0] / TASK_ID).exists()


@pytest.mark.parametrize(("flag", "typed", "meant"), [
    ("--lang-from", "pyhton", "python"), ("--lang-to", "nodjs", "node"),
    ("--lang-to", "javascrpt", "node"),
])
def test_an_unknown_language_gets_a_did_you_mean(
    flag: str, typed: str, meant: str, tmp_path: Path, settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = roman_argv(tmp_path, settings.task_roots[0])
    argv[argv.index(flag) + 1] = typed
    code, text = _refused(settings, argv, capsys)
    assert code == codes.USAGE
    assert f"unknown language {typed!r}; did you mean `{meant}`?" in text
    assert "known: python, node, ruby, perl, php" in text


@pytest.mark.parametrize(("case", "message"), [
    ("--lower inputs/absent.txt", "inputs/absent.txt is not one of the input files"),
    ("< /etc/passwd", "standard input must come from an input file"),
    ("'unclosed", "No closing quotation"),
])
def test_a_bad_case_is_refused_by_number(
    case: str, message: str, tmp_path: Path, settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*roman_argv(tmp_path, settings.task_roots[0]), f"--case={case}"]
    code, text = _refused(settings, argv, capsys)
    assert code == codes.USAGE and message in text and f"case {len(CASES) + 1}" in text


def test_no_cases_and_a_wrong_entry_are_refused(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    state_a = write_state_a(tmp_path / "roman")
    base = [TASK_ID, "--from-dir", str(state_a), "--lang-from", "python", "--lang-to", "node",
            "--tasks-root", str(settings.task_roots[0])]
    code, text = _refused(settings, base, capsys)
    assert code == codes.USAGE and "no cases" in text
    code, text = _refused(settings, [*base, "--case=", "--entry", "bin/other"], capsys)
    assert code == codes.NOT_FOUND and "--entry bin/other: no such file" in text
    code, text = _refused(settings, [*base, "--case=", "--entry", "README.md"], capsys)
    assert code == codes.USAGE and "not executable" in text
    code, text = _refused(settings, [*base, "--case=", "--lang-from", "ruby"], capsys)
    assert code == codes.USAGE and "must be a #! line naming ruby" in text


def test_a_state_a_wholly_inside_one_folder_keeps_its_folder(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every file under bin/: the published images unpack original.tar.gz as it is, so the
    validator lists bin/roman where extraction puts it (it used to cut bin/ as a release
    tarball's wrapper folder, and tasks new refused such a State A)."""
    state_a = write_state_a(tmp_path / "roman")
    (state_a / "README.md").unlink()
    argv = [TASK_ID, "--from-dir", str(state_a), "--lang-from", "python", "--lang-to", "node",
            "--case=", "--no-record", "--tasks-root", str(settings.task_roots[0])]
    code = run_new(settings, *argv, json_mode=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == codes.OK and doc["problems"] == [], doc
    assert doc["entry"] == "bin/roman"
    task = Path(str(doc["path"]))
    load = validate_task(task)
    assert load.ok, load.problems  # fuzz_entry bin/roman is a file of State A as extracted
    from srb_tui.schema.archive_facts import archive_files

    files = archive_files(task / "environment" / "original.tar.gz")
    assert files and all(name.startswith("bin/") for name in files)
    assert archive_files(task / "environment" / "original.tar.gz", strip=1) == [
        name.removeprefix("bin/") for name in files]


def test_a_failed_recording_keeps_the_task_and_says_how_to_redo_it(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = roman_argv(tmp_path, settings.task_roots[0])
    entry = tmp_path / "roman" / "bin" / "roman"
    entry.write_text(entry.read_text().replace("sys.stderr.write(f\"roman: {bad}", "0 and ("))
    broken = entry.read_text().replace('"roman: unknown argument', '"" and "x')
    entry.write_text(broken.replace("0 and (", 'sys.stderr.write(f"roman: {bad}'))
    code, text = _refused(settings, argv, capsys)
    assert code == codes.FAILED
    assert "were not recorded" in text and "record.py" in text
    assert (settings.task_roots[0] / TASK_ID / "task.toml").is_file()


# --------------------------------------------------------------------------- other languages


def test_a_node_program_ported_to_python_gets_its_own_languages_and_images(
    tmp_path: Path, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    state_a = tmp_path / "shout"
    (state_a / "lib").mkdir(parents=True)
    (state_a / "lib" / "shout.mjs").write_text("export const shout = (s) => s.toUpperCase();\n")
    entry = state_a / "shout.js"
    entry.write_text("#!/usr/bin/env node\nprocess.stdout.write('HI\\n');\n")
    entry.chmod(0o755)
    argv = ["shout-node-to-python", "--from-dir", str(state_a), "--lang-from", "javascript",
            "--lang-to", "python3", "--entry", "./shout.js", "--case=", "--no-record",
            "--tasks-root", str(settings.task_roots[0])]
    code = run_new(settings, *argv, json_mode=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == codes.OK and doc["recorded"] is False and doc["problems"] == [], doc
    task = Path(doc["path"])
    assert validate_task(task).ok
    langs = tomllib.loads((task / "tests/audit/data/languages.toml").read_text())
    assert langs["entry"] == "shout.js" and "*.mjs" in langs["source"]["globs"]
    assert "*.py" in langs["target"]["globs"]
    assert any("subprocess" in p for p in langs["target"]["spawn_patterns"])
    stage_two = (task / "tests/behavioural/Dockerfile").read_text()
    assert "install -y --no-install-recommends python3 " in stage_two  # the port's runtime
    assert "nodejs" not in stage_two.split("for name in")[0].split("apt-get install")[1]
    assert "for name in node nodejs; do" in stage_two  # State A's names are shims
    assert "chmod 0700" not in stage_two  # python3 is the port's: it stays usable
    task_toml = tomllib.loads((task / "task.toml").read_text())
    assert "node_modules" in task_toml["artifacts"][0]["exclude"]
    assert "python3 nodejs" in (task / "tests/verification/Dockerfile").read_text() or \
        "nodejs python3" in (task / "tests/verification/Dockerfile").read_text()
    assert json.loads((task / "tests/behavioural/data/program.json").read_text())[
        "oracle_python"] is False
    assert not (task / "tests/behavioural/data/expected/cases.json").exists()
